# SPDX-License-Identifier: MIT
"""A native program that needs many shared libraries, each in a directory
of its own among many, found through LD_LIBRARY_PATH (what `module load`
builds on clusters): the shape whose start-up is library lookups. Shared
by the suite (tests/test_scale.py) and the benchmark (bench/scale.py)."""
import os
import subprocess


def build(d, nlibs=40, ndirs=20, cc="cc"):
    """The program, its LD_LIBRARY_PATH (ndirs directories, the libraries
    spread over them, the last ones first in the path so that most lookups
    fail before they succeed), and the libraries' paths."""
    os.makedirs(d, exist_ok=True)
    dirs = [os.path.join(d, f"dir{i:02d}") for i in range(ndirs)]
    libs = []
    calls = []
    for i in range(nlibs):
        lib_dir = dirs[i % ndirs]
        os.makedirs(lib_dir, exist_ok=True)
        src = os.path.join(d, f"m{i}.c")
        with open(src, "w") as f:
            f.write(f"int m{i}(void) {{ return {i}; }}\n")
        so = os.path.join(lib_dir, f"libm{i}.so.1")
        if not os.path.exists(so):
            subprocess.run([cc, "-shared", "-fPIC", "-o", so, src, f"-Wl,-soname,libm{i}.so.1"], check=True)
        libs.append(so)
        calls.append(f"m{i}()")
    main = os.path.join(d, "main.c")
    with open(main, "w") as f:
        f.write("".join(f"int m{i}(void);\n" for i in range(nlibs)))
        # With an argument, the files it maps (its own /proc/self/maps,
        # which reading does not change): what plain and wrapped compare.
        f.write('#include <stdio.h>\n#include <string.h>\n'
                'int main(int argc, char **argv) {\n'
                '    (void)argv;\n'
                '    printf("%d\\n", ' + " + ".join(calls) + ');\n'
                '    FILE *m = argc > 1 ? fopen("/proc/self/maps", "r") : 0;\n'
                '    char line[4096], last[4096] = "";\n'
                '    while (m && fgets(line, sizeof line, m)) {\n'
                '        char *p = strchr(line, \'/\');\n'
                '        if (p && !strstr(p, "lazynccl") && strcmp(p, last) != 0)\n'
                '            fputs(p, stdout), strcpy(last, p);\n'
                '    }\n'
                '    return 0;\n'
                '}\n')
    exe = os.path.join(d, "main")
    if not os.path.exists(exe):
        link = [x for so in libs for x in (f"-L{os.path.dirname(so)}", f"-l:{os.path.basename(so)}")]
        subprocess.run([cc, "-o", exe, main, "-Wl,--no-as-needed"] + link, check=True)
    llp = ":".join(reversed(dirs))
    return exe, llp, libs
