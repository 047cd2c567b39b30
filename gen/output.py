# SPDX-License-Identifier: MIT
"""What the generator writes besides its C: files rewritten only when their
text changes, and notes on standard error wrapped for people."""

import sys
import textwrap


def say(text):
    """A note or warning on standard error, each of its lines wrapped at
    100 columns (a list of a large library's names stays readable), the
    continuations indented; a word is never cut."""
    print("\n".join(textwrap.fill(line, 100, subsequent_indent="    ", break_long_words=False,
                                   break_on_hyphens=False) for line in text.split("\n")), file=sys.stderr)

def write_if_changed(path, text):
    """Deterministic output, rewritten only when it changes (no needless rebuilds)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
