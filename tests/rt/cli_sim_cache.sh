#!/bin/sh
# cli_sim_cache.sh SHORTC MODEL.arch — the simulator's kernel cache from the
# command line: two `shortc run --backend sim` started together on an empty
# cache both succeed with bitwise equal logits (atomic stores, private build
# directories), a third run hits the cache, and a cache directory that
# cannot be used (here a regular file) costs only the cache, not the run.
set -u
shortc=$1 model=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-simcache.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1 2 3 4 5" > "$tmp/tokens"
run() { # cache, logits, extra...
    c=$1 l=$2; shift 2
    SHORTC_CACHE=$c "$shortc" run "$model" --backend sim --random-weights 3 --tokens "$tmp/tokens" --logits "$l" "$@"
}
fail() { echo "FAIL: $*"; exit 1; }
run "$tmp/cache" "$tmp/a.npy" > "$tmp/a.out" 2>&1 & pa=$!
run "$tmp/cache" "$tmp/b.npy" > "$tmp/b.out" 2>&1 & pb=$!
wait $pa || { cat "$tmp/a.out"; fail "first concurrent run"; }
wait $pb || { cat "$tmp/b.out"; fail "second concurrent run"; }
"$shortc" cmp "$tmp/a.npy" "$tmp/b.npy" --atol 0 || fail "concurrent runs differ"
ls "$tmp/cache" | grep -q '^tmp-' && fail "temporary build directory left in the cache"
run "$tmp/cache" "$tmp/c.npy" --report > "$tmp/c.out" 2>&1 || { cat "$tmp/c.out"; fail "third run"; }
grep -q "cache hit" "$tmp/c.out" || { cat "$tmp/c.out"; fail "third run did not hit the cache"; }
: > "$tmp/file"
run "$tmp/file" "$tmp/d.npy" > "$tmp/d.out" 2>&1 || { cat "$tmp/d.out"; fail "run with a regular file as the cache directory"; }
"$shortc" cmp "$tmp/a.npy" "$tmp/d.npy" --atol 0 || fail "fallback run differs"
echo "ok"
