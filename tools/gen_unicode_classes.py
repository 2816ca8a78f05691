#!/usr/bin/python3
"""Writes unicode_classes.c: the code point ranges of the Unicode general
categories L* (letters) and N* (numbers) that GPT-2's pre-tokenizer pattern
names as \\p{L} and \\p{N}, from the unicodedata module of the Python that runs
it, and that Unicode version as rt_unicode_version. The build runs it
(CMakeLists.txt, SHORTC_UNICODE_PYTHON); nothing it writes is committed.

    /usr/bin/python3 tools/gen_unicode_classes.py [--min-version X.Y.Z] [-o FILE]

--min-version: fail when unicodedata's version is older (the tables must be at
least as new as the ones Hugging Face tokenizers uses; docs/tokenizer.md).
"""
import argparse
import sys
import unicodedata


def ranges(prefix):
    out, start = [], None
    for cp in range(0x110000 + 1):
        inside = cp < 0x110000 and unicodedata.category(chr(cp)).startswith(prefix)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def table(name, rs):
    lines = [f"const uint32_t {name}[][2] = {{"]
    row = []
    for a, b in rs:
        row.append(f"{{0x{a:x}, 0x{b:x}}},")
        if len(row) == 6:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("};")
    lines.append(f"const int {name}_count = {len(rs)};")
    return "\n".join(lines)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-version", default="0.0.0")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    have = unicodedata.unidata_version
    if version_tuple(have) < version_tuple(a.min_version):
        sys.exit(f"gen_unicode_classes.py: {sys.executable}'s unicodedata is Unicode {have}, older than "
                 f"{a.min_version} (set SHORTC_UNICODE_PYTHON to a newer Python)")
    text = f"""/*
 * unicode_classes.c — generated at build time by tools/gen_unicode_classes.py
 * from the unicodedata module of {sys.executable} (Unicode {have}); do not edit.
 * Sorted, disjoint, inclusive code point ranges of the general categories L*
 * (letters) and N* (numbers), which the byte-level BPE pre-tokenizer
 * (tokenizer.c) needs.
 */
#include "rt_internal.h"

const char rt_unicode_version[] = "{have}";

{table("rt_unicode_letters", ranges("L"))}

{table("rt_unicode_numbers", ranges("N"))}
"""
    if a.output:
        with open(a.output + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        import os
        os.replace(a.output + ".tmp", a.output)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())
