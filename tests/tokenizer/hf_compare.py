#!/usr/bin/python3
"""hf_compare.py SHORTC — `shortc tokenize` against Hugging Face tokenizers (the pinned 0.15.2 of
/opt/shortc-hf, on PYTHONPATH) on vocabularies trained with it here:

  bytelevel         ByteLevel without prefix space (GPT-2), <|endoftext|> special, added tokens (one
                    with rstrip, a special one with lstrip)
  bytelevel_prefix  ByteLevel with add_prefix_space, use_regex
  bytelevel_noregex ByteLevel with add_prefix_space, without use_regex
  metaspace         Metaspace (always) with byte fallback (<0xNN> tokens) and unk, <s> </s> special
  metaspace_first   Metaspace with prepend_scheme "first", no byte fallback (unk, fuse_unk)
  metaspace_nfc     the NFC normalizer before Metaspace with byte fallback
  sequence          a Sequence of pre-tokenizers (Metaspace, then ByteLevel without its regex) and of
                    decoders (ByteLevel, Metaspace)
  shuffled          bytelevel_prefix with its merges in a random order (not learning order: HF merges a
                    new pair of a lower rank at once, GPT-2's bpe() after the pass)
  llama             Llama's normalizers Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer, byte
                    fallback, the decoders Replace, ByteFallback, Fuse, Strip; merges as [a, b] pairs

over texts of every Unicode general category (code points of each, from the unicodedata of the Python
that runs this, in varied contexts; Cs cannot be UTF-8), code points unassigned in Unicode 14 that
later versions made letters and numbers, the training corpus, added tokens in the text (split out,
and as text with --special-as-text) and an empty text. The ids must equal HF's
encode(text, add_special_tokens=False) and the decoded text HF's decode(ids, skip_special_tokens=False).
Exit 77 when tokenizers is not installed.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import unicodedata

try:
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
except ImportError:
    print("SKIP: HF tokenizers not found (PYTHONPATH=/opt/shortc-hf; .ci/setup installs it)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORIES = ("Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Co Cn").split()
# Cn (unassigned) in Unicode 14, letters or numbers since: Kawi, Cyrillic modifiers, CJK Ext. I, Garay,
# Kaktovik numerals, outlined digits
LATER = [0x11F04, 0x1E030, 0x2EBF0, 0x10D50, 0x1D2C0, 0x1CCF0, 0x11F50, 0x1E4D0]
CONTEXTS = ["{c}", "a{c}", "{c}b", " {c}", "{c} ", "1{c}2", "{c}{c}{c}", "'{c}", "{c}'s", "  {c}", "x {c}y",
            "\n{c}", "{c}\t", "<{c}>", "é{c}", "{c}▁"]


def by_category():
    cps = {c: [] for c in CATEGORIES}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        if cat in cps:
            cps[cat].append(cp)
    return cps


def category_text(rng, cps):
    """Code points of one category (evenly spaced and random ones) in varied contexts."""
    pick = cps[:: max(1, len(cps) // 48)] + [rng.choice(cps) for _ in range(48)]
    words = [rng.choice(CONTEXTS).format(c=chr(cp)) for cp in pick]
    return "".join(w + rng.choice(["", " ", "  ", "-", "\n"]) for w in words)


def nfc_text(rng):
    """Decomposed characters, their marks in every order, Hangul jamo, composition exclusions and
    singletons: what NFC reorders and composes."""
    decomposable = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and
                    unicodedata.normalize("NFD", chr(cp)) != chr(cp)]
    marks = [cp for cp in range(0x300, 0x370)] + [0x5B0, 0x5B7, 0x94D, 0x93C, 0x1DC0, 0x20D0, 0x302A, 0x1D165]
    words = []
    for cp in rng.sample(decomposable, 300):
        w = unicodedata.normalize("NFD", chr(cp))
        extra = "".join(chr(rng.choice(marks)) for _ in range(rng.randint(0, 3)))
        words.append(rng.choice([w, chr(cp), w + extra, chr(cp) + extra, "a" + extra + w]))
    words += ["\u1100\u1161\u11a8", "\u1100\u1161", "\uac00\u11a8", "\u0958", "\u2126", "\u0344",
              "e\u0301\u0323", "e\u0323\u0301", "\u0301e", "a" + "\u0301\u0316" * 40]
    return " ".join(words)


def texts():
    rng = random.Random(22)
    cps = by_category()
    out = {f"cat_{c}": category_text(rng, cps[c]) for c in CATEGORIES}
    out["later"] = category_text(rng, LATER)
    with open(os.path.join(HERE, "corpus.txt"), encoding="utf-8") as f:
        out["corpus"] = f.read()
    for n in os.listdir(os.path.join(HERE, "cases")):
        with open(os.path.join(HERE, "cases", n), encoding="utf-8") as f:
            out["case_" + n[:-4]] = f.read()
    out["nfc"] = nfc_text(rng)
    # every character with a canonical decomposition, composed and decomposed (NFC's tokenizer only), but
    # U+11938 (Unicode 13): HF's NFC tables are older (docs/tokenizer.md)
    out["nfc_all"] = " ".join(unicodedata.normalize("NFD", chr(c)) + " " + chr(c) for c in range(0x110000)
                              if not 0xD800 <= c <= 0xDFFF and c != 0x11938 and
                              unicodedata.normalize("NFD", chr(c)) != chr(c))
    out["special"] = ("<|endoftext|>Hello world<|endoftext|> again <s>the sea</s> <|endoftext|><s></s>x "
                      "a [MARK] b[MARK]c  [MARK]  end<unk> <0x41> ▁▁ x  <mask> y<mask>\t\n<mask> [R]  z[R]\n"
                      "[R]<mask>  <mask>[R] [R] ")
    out["special_edges"] = "<s>"
    out["spaces_only"] = "   \t \n  "
    out["empty"] = ""
    return out


def train(kind, corpus):
    """A tokenizer of the given kind trained on corpus, as a tokenizer.json string."""
    if kind == "shuffled":
        j = json.loads(train("bytelevel_prefix", corpus))
        random.Random(7).shuffle(j["model"]["merges"])
        return json.dumps(j, ensure_ascii=False)
    special = ["<|endoftext|>"] if kind.startswith(("bytelevel", "sequence")) else ["<unk>", "<s>", "</s>"]
    byte_fallback = kind in ("metaspace", "metaspace_nfc", "llama")
    model = models.BPE(unk_token=None if kind.startswith(("bytelevel", "sequence")) else "<unk>", byte_fallback=byte_fallback,
                       fuse_unk=kind in ("metaspace_first", "llama"))
    tok = Tokenizer(model)
    alphabet = []
    if kind == "sequence":
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(),
                                                     pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.Sequence([decoders.ByteLevel(), decoders.Metaspace()])
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    elif kind.startswith("bytelevel"):
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=kind != "bytelevel",
                                                     use_regex=kind != "bytelevel_noregex")
        tok.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    elif kind.startswith("metaspace"):
        if kind == "metaspace_nfc":
            tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
    else:
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                         decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=special, initial_alphabet=alphabet,
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.add_tokens(["[MARK]", AddedToken("[R]", rstrip=True)])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    j = json.loads(tok.to_str())
    if byte_fallback:  # the <0xNN> tokens SentencePiece vocabularies hold
        vocab = j["model"]["vocab"]
        for b in range(256):
            vocab.setdefault(f"<0x{b:02X}>", len(vocab))
        for a in j["added_tokens"]:  # the added tokens not in the vocabulary follow it (HF's ids)
            if a["content"] not in vocab:
                a["id"] = max(vocab.values()) + 1 + sum(1 for b in j["added_tokens"][:j["added_tokens"].index(a)]
                                                        if b["content"] not in vocab)
    if kind == "metaspace_first":
        j["pre_tokenizer"]["prepend_scheme"] = "first"
        j["decoder"]["prepend_scheme"] = "first"
    return json.dumps(j, ensure_ascii=False)


def shortc(bin_, *args, stdin=None):
    r = subprocess.run([bin_, *args], capture_output=True, input=stdin)
    if r.returncode != 0:
        raise RuntimeError(f"shortc {' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def check_kind(bin_, tmp, kind, all_texts, corpus):
    """Every text through HF and shortc with tokenizer `kind`; returns the failures."""
    spec = train(kind, corpus)
    path = os.path.join(tmp, kind + ".json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(spec)
    hf = Tokenizer.from_str(spec)
    ours_path = path
    if kind == "llama":  # merges as [a, b] pairs (tokenizers >= 0.20 writes them so); HF reads the strings
        j = json.loads(spec)
        j["model"]["merges"] = [m.split(" ") for m in j["model"]["merges"]]
        ours_path = os.path.join(tmp, kind + "_pairs.json")
        with open(ours_path, "w", encoding="utf-8") as f:
            json.dump(j, f, ensure_ascii=False)
    fails, ntok = [], 0
    for name, text in all_texts.items():
        if name == "nfc_all" and kind != "metaspace_nfc":
            continue
        tfile = os.path.join(tmp, "text.txt")
        with open(tfile, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        for as_text in (False, True):
            if as_text and not name.startswith("special"):
                continue
            hf.encode_special_tokens = as_text
            want = hf.encode(text, add_special_tokens=False).ids
            flags = ["--special-as-text"] if as_text else []
            got = [int(x) for x in shortc(bin_, "tokenize", "--tokenizer", ours_path, "--text", tfile, *flags).split()]
            ntok += len(want)
            if got != want:
                at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
                fails.append(f"{kind} {name}{' (special as text)' if as_text else ''}: ids differ at {at}: "
                             f"shortc {got[max(0, at - 3):at + 5]} HF {want[max(0, at - 3):at + 5]} "
                             f"({[hf.id_to_token(i) for i in want[max(0, at - 3):at + 5]]})")
                continue
            if not want:
                continue
            ids_file = os.path.join(tmp, "ids.txt")
            with open(ids_file, "w") as f:
                f.write(" ".join(map(str, want)) + "\n")
            dec = shortc(bin_, "tokenize", "--tokenizer", ours_path, "--decode", "--tokens", ids_file)
            hf_dec = hf.decode(want, skip_special_tokens=False)
            if dec.decode("utf-8", errors="replace") != hf_dec:
                fails.append(f"{kind} {name}: decoded text differs: shortc {dec[:80]!r} HF {hf_dec[:80]!r}")
    print(f"{kind}: {len(all_texts)} texts, {ntok} tokens, {'OK' if not fails else f'{len(fails)} FAILED'}")
    return fails


def main():
    bin_ = sys.argv[1]
    all_texts = texts()
    # train on the corpus and half of the categories: the others' characters are unknown to the vocabulary
    corpus = [all_texts["corpus"]] + [t for i, (n, t) in enumerate(sorted(all_texts.items()))
                                      if n.startswith("cat_") and i % 2 == 0]
    print(f"Unicode {unicodedata.unidata_version} (the tables of this Python's unicodedata)")
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("bytelevel", "bytelevel_prefix", "bytelevel_noregex", "metaspace", "metaspace_first",
                     "metaspace_nfc", "sequence", "shuffled", "llama"):
            fails += check_kind(bin_, tmp, kind, all_texts, corpus)
    for f in fails[:40]:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
