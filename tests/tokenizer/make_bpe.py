#!/usr/bin/python3
"""Builds the small byte-level BPE tokenizer of the tokenizer tests and the
known answers, independently of runtime/src/tokenizer.c:

  * pre-tokenization with Python's own regex engine (re) running GPT-2's
    pattern, \\p{L} and \\p{N} spelled out as character classes from
    unicodedata and \\s as the Unicode White_Space set;
  * merges learned from corpus.txt by counting pairs (most frequent first,
    ties by the pair's text), 120 of them;
  * encoding with GPT-2's bpe() loop (lowest-ranked pair, all occurrences
    left to right), written here from the algorithm.

Writes into the directory given (default: this script's data/):
  tokenizer.json (merges as "a b"), pairs/tokenizer.json (merges as pairs),
  vocab.json + merges.txt, and for each cases/NAME.txt its NAME.ids.
Run: /usr/bin/python3 tests/tokenizer/make_bpe.py
"""
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
WHITE_SPACE = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B)) + \
              [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]


def char_class(prefix):
    parts, start = [], None
    for cp in range(0x110001):
        inside = cp < 0x110000 and unicodedata.category(chr(cp)).startswith(prefix)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            a, b = re.escape(chr(start)), re.escape(chr(cp - 1))
            parts.append(a if start == cp - 1 else a + "-" + b)
            start = None
    return "".join(parts)


L, N = char_class("L"), char_class("N")
S = "".join(re.escape(chr(c)) for c in WHITE_SPACE)
PATTERN = re.compile(
    rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")


def bytes_to_unicode():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = bytes_to_unicode()


def words(text):
    return ["".join(BYTE_CHAR[b] for b in w.encode("utf-8")) for w in PATTERN.findall(text)]


def learn_merges(corpus, count):
    freq = {}
    for w in words(corpus):
        freq[tuple(w)] = freq.get(tuple(w), 0) + 1
    merges = []
    for _ in range(count):
        pairs = {}
        for w, f in freq.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + f
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        new = {}
        for w, f in freq.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + f
        freq = new
    return merges


def bpe(word, ranks):
    w = list(word)
    while len(w) > 1:
        pairs = [(ranks[p], p) for p in zip(w, w[1:]) if p in ranks]
        if not pairs:
            break
        first, second = min(pairs)[1]
        out, i = [], 0
        while i < len(w):
            if i + 1 < len(w) and w[i] == first and w[i + 1] == second:
                out.append(first + second)
                i += 2
            else:
                out.append(w[i])
                i += 1
        w = out
    return w


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "data")
    os.makedirs(os.path.join(out, "pairs"), exist_ok=True)
    with open(os.path.join(HERE, "corpus.txt"), encoding="utf-8") as f:
        merges = learn_merges(f.read(), 120)
    vocab = {BYTE_CHAR[b]: i for i, b in enumerate(sorted(BYTE_CHAR, key=lambda b: ord(BYTE_CHAR[b])))}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    ranks = {p: i for i, p in enumerate(merges)}
    eot = "<|endoftext|>"
    added = [{"id": len(vocab), "content": eot, "special": True}]
    for path, pairs in (("tokenizer.json", False), ("pairs/tokenizer.json", True)):
        model = {"type": "BPE", "vocab": vocab,
                 "merges": [[a, b] if pairs else a + " " + b for a, b in merges]}
        with open(os.path.join(out, path), "w", encoding="utf-8") as f:
            json.dump({"version": "1.0", "added_tokens": added, "model": model}, f, ensure_ascii=False)
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    cases = os.path.join(HERE, "cases")
    for name in sorted(os.listdir(cases)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(cases, name), encoding="utf-8", newline="") as f:
            text = f.read()
        ids = [vocab[s] for w in words(text) for s in bpe(w, ranks)]
        with open(os.path.join(out, name[:-4] + ".ids"), "w") as f:
            f.write(" ".join(map(str, ids)) + "\n")


if __name__ == "__main__":
    main()
