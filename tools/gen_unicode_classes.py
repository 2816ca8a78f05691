#!/usr/bin/python3
"""Writes unicode_classes.c: the code point ranges of the Unicode general
categories L* (letters) and N* (numbers) that GPT-2's pre-tokenizer pattern
names as \\p{L} and \\p{N}, NFC's tables (combining classes, canonical
decompositions, primary composites), from the unicodedata module of the Python
that runs it, and that Unicode version as rt_unicode_version. The build runs it
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


def is_hangul_syllable(cp):
    return 0xAC00 <= cp <= 0xD7A3


def normalization_tables():
    """NFC's data: canonical combining classes (ranges of one class), full canonical decompositions
    (Hangul syllables left to the algorithm) and the primary composites by their pair."""
    ccc, decomp, data, compose = [], [], [], []
    for cp in range(0x110000):
        c = unicodedata.combining(chr(cp))
        if c and ccc and ccc[-1][1] == cp - 1 and ccc[-1][2] == c:
            ccc[-1][1] = cp
        elif c:
            ccc.append([cp, cp, c])
        if is_hangul_syllable(cp) or 0xD800 <= cp <= 0xDFFF:
            continue
        nfd = unicodedata.normalize("NFD", chr(cp))
        assert len(nfd) <= 18, "tokenizer.c's decompose() has room for 18 code points"
        if nfd != chr(cp):
            decomp.append((cp, len(data), len(nfd)))
            data.extend(ord(x) for x in nfd)
        raw = unicodedata.decomposition(chr(cp))
        if raw and not raw.startswith("<") and len(raw.split()) == 2 and \
                unicodedata.normalize("NFC", chr(cp)) == chr(cp):
            a, b = (int(x, 16) for x in raw.split())
            compose.append((a, b, cp))
    compose.sort()
    return ccc, decomp, data, compose


def rows(name, ctype, items, per_row):
    lines = [f"const {ctype} {name} = {{"]
    for i in range(0, len(items), per_row):
        lines.append("    " + " ".join(items[i:i + per_row]))
    lines.append("};")
    return "\n".join(lines)


def normalization_c():
    ccc, decomp, data, compose = normalization_tables()
    return "\n\n".join([
        rows("rt_unicode_ccc[][3]", "uint32_t", [f"{{0x{a:x}, 0x{b:x}, {c}}}," for a, b, c in ccc], 5),
        f"const int rt_unicode_ccc_count = {len(ccc)};",
        rows("rt_unicode_decomp[][3]", "uint32_t", [f"{{0x{a:x}, {o}, {n}}}," for a, o, n in decomp], 5),
        f"const int rt_unicode_decomp_count = {len(decomp)};",
        rows("rt_unicode_decomp_data[]", "uint32_t", [f"0x{x:x}," for x in data], 10),
        rows("rt_unicode_compose[][3]", "uint32_t", [f"{{0x{a:x}, 0x{b:x}, 0x{c:x}}}," for a, b, c in compose], 4),
        f"const int rt_unicode_compose_count = {len(compose)};",
    ])


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
 * (tokenizer.c) needs, and the data of NFC.
 */
#include "rt_internal.h"

const char rt_unicode_version[] = "{have}";

{table("rt_unicode_letters", ranges("L"))}

{table("rt_unicode_numbers", ranges("N"))}

/* NFC (the tokenizer's normalizer): canonical combining classes {{first, last, class}}; full canonical
 * decompositions {{code point, offset in rt_unicode_decomp_data, length}} (Hangul syllables: by
 * algorithm); primary composites {{first, second, composite}}, sorted by the pair. */
{normalization_c()}
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
