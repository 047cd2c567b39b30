/* SPDX-License-Identifier: MIT */
/* ncurses used through its variables (tests/test_libraries.py): ESCDELAY
 * read before any call and written by the program, then read back by the
 * library; COLORS and COLOR_PAIRS written by the library (start_color) and
 * read by the program. Output to /dev/null: no terminal is needed. Linked to
 * the shim and to -lncursesw alike; the outputs must match. */
#include <curses.h>
#include <stdio.h>

int main(void)
{
    printf("ESCDELAY at start %d\n", ESCDELAY);
    ESCDELAY = 25;
    printf("the library reads %d\n", get_escdelay());
    FILE *out = fopen("/dev/null", "w");
    SCREEN *screen = out ? newterm("xterm-256color", out, stdin) : NULL;
    if (!screen) {
        printf("newterm failed\n");
        return 1;
    }
    start_color();
    printf("COLORS %d COLOR_PAIRS %d has_colors %d\n", COLORS, COLOR_PAIRS, has_colors());
    endwin();
    delscreen(screen);
    fclose(out);
    return 0;
}
