#!/usr/bin/env python3
"""Seeded byte-level mutation fuzz of the front end.

    fuzz.py SHORTC_BIN MODELS_DIR [--count N] [--seed S]

Copies MODELS_DIR/*.arch into a temporary directory (so imports resolve),
then writes N (default 500) mutants of them, each made by 1-4 random edits
(byte flips, insertions of random bytes or of grammar tokens, deletions,
duplicated or swapped chunks, truncation), and runs
`SHORTC_BIN MUTANT.arch --dump-spec` on each with a 5 s limit. Every run must
exit with 0 or 1 and print no sanitizer report; exit 0 must print a spec,
exit 1 must start stderr with a located message (`FILE:LINE:COL: error:`,
or `warning:` when a warning comes first).
The seed is fixed, so a failure reproduces; failing mutants are kept under
$FUZZ_KEEP (if set). Exit status 1 when any run failed.
"""
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

TOKENS = [b'{', b'}', b';', b'[', b']', b',', b'=', b':', b'"', b'#', b'-', b'.', b'\0', b'\n',
          b'model', b'layer', b'import', b'all', b'every 0', b'from', b'first 99', b'last 0',
          b'interleaved 7', b'1e999', b'99999999999999999999', b'-1', b'0', b'eps=', b'max=0',
          b'causal', b'fp16', b'[in, out]', b'import "gpt2_small.arch";', b'layer all {',
          b'model x : gpt2_small {', b'\xff\xfe', b'\\']

LOCATED = re.compile(rb'^[^\n]*:\d+:\d+: (error|warning): ')


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        n = len(data)
        op = rng.randrange(7)
        pos = rng.randrange(n + 1)
        if op == 0 and n:                      # flip a byte
            data[min(pos, n - 1)] = rng.randrange(256)
        elif op == 1:                          # insert random bytes
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:                          # insert a grammar token
            data[pos:pos] = rng.choice(TOKENS)
        elif op == 3 and n:                    # delete a range
            del data[pos:pos + rng.randint(1, 64)]
        elif op == 4 and n:                    # duplicate a chunk elsewhere
            a = rng.randrange(n)
            chunk = data[a:a + rng.randint(1, 128)]
            data[pos:pos] = chunk
        elif op == 5:                          # truncate
            del data[pos:]
        elif op == 6 and n > 2:                # swap two lines
            lines = bytes(data).split(b'\n')
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b'\n'.join(lines))
    return bytes(data)


def run_one(binary, workdir, name):
    try:
        p = subprocess.run([binary, name, '--dump-spec'], cwd=workdir, capture_output=True, timeout=5)
    except subprocess.TimeoutExpired:
        return 'timed out (5 s)'
    err = p.stderr
    if b'Sanitizer' in err or b'runtime error:' in err:
        return 'sanitizer report:\n' + err.decode(errors='replace')[:2000]
    if p.returncode == 0:
        return None if p.stdout.startswith(b'model ') else 'exit 0 without a spec on stdout'
    if p.returncode != 1:
        return 'exit status %d' % p.returncode
    if not LOCATED.match(err):
        return 'stderr does not start with a located error:\n' + err.decode(errors='replace')[:500]
    return None


def main():
    args = sys.argv[1:]
    count, seed = 500, 20240601
    if '--count' in args:
        i = args.index('--count')
        count = int(args[i + 1])
        del args[i:i + 2]
    if '--seed' in args:
        i = args.index('--seed')
        seed = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, models = os.path.abspath(args[0]), args[1]
    seeds = sorted(f for f in os.listdir(models) if f.endswith('.arch'))
    if not seeds:
        print('no models in %s' % models, file=sys.stderr)
        return 2
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix='shortc-fuzz-')
    try:
        texts = {}
        for f in seeds:
            shutil.copy(os.path.join(models, f), work)
            with open(os.path.join(work, f), 'rb') as fh:
                texts[f] = fh.read()
        names = []
        for k in range(count):
            src = rng.choice(seeds)
            name = 'mut_%03d_%s' % (k, src)
            with open(os.path.join(work, name), 'wb') as fh:
                fh.write(mutate(rng, texts[src]))
            names.append(name)
        failures = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for name, why in zip(names, pool.map(lambda n: run_one(binary, work, n), names)):
                if why:
                    failures += 1
                    print('FAIL: %s: %s' % (name, why))
                    keep = os.environ.get('FUZZ_KEEP')
                    if keep:
                        os.makedirs(keep, exist_ok=True)
                        shutil.copy(os.path.join(work, name), keep)
        print('%d mutants (seed %d): %d passed, %d failed' % (count, seed, count - failures, failures))
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
