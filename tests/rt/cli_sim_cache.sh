#!/bin/sh
# cli_sim_cache.sh SHORTC MODEL.arch FILE_TOOL CC — the simulator's kernel
# cache from the command line: two `shortc run --backend sim` started
# together on an empty cache both succeed with bitwise equal logits (atomic
# stores, private build directories), a third run hits the cache, and a cache
# directory that cannot be used (here a regular file) costs only the cache,
# not the run. Hostile caches: a world-writable directory holding a planted
# object (with a matching meta) is not used, so the object's constructor
# never runs; a truncated object with a matching meta is rebuilt (not a
# SIGBUS); a valid object that fails to load is evicted and rebuilt; a
# directory in the way of the store does not fail the run.
set -u
shortc=$1 model=$2 tool=$3 cc=$4
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

# ---- hostile caches ----------------------------------------------------------------
so=$(ls "$tmp/cache" | grep '\.so$')
key=${so%.so}
[ -n "$key" ] || fail "no cached kernel object"
cp "$tmp/cache/$so" "$tmp/good.so"
printf '#include <stdio.h>\n__attribute__((constructor)) static void own(void) { fclose(fopen("%s/pwned", "w")); }\n' \
    "$tmp" > "$tmp/evil.c"
"$cc" -shared -fPIC -o "$tmp/evil.so" "$tmp/evil.c" || fail "cannot build the planted object"
# another user's world-writable cache (here: made world-writable after planting)
mkdir -m 700 "$tmp/shared"
"$tool" plant "$tmp/shared" "$key" so "$tmp/evil.so" || fail "plant"
chmod 777 "$tmp/shared"
run "$tmp/shared" "$tmp/e.npy" > "$tmp/e.out" 2>&1 || { cat "$tmp/e.out"; fail "run with a world-writable cache"; }
[ -e "$tmp/pwned" ] && fail "the planted object in a world-writable cache was loaded"
grep -q "shortc: warning: kernel cache $tmp/shared not used: it is writable by group or others" "$tmp/e.out" ||
    { cat "$tmp/e.out"; fail "no warning about the world-writable cache"; }
"$shortc" cmp "$tmp/a.npy" "$tmp/e.npy" --atol 0 || fail "world-writable cache run differs"
# a symbolic link as the cache directory
ln -s "$tmp/cache" "$tmp/cache.link"
run "$tmp/cache.link" "$tmp/l.npy" > "$tmp/l.out" 2>&1 || { cat "$tmp/l.out"; fail "run with a symlinked cache"; }
grep -q "not used: it is a symbolic link" "$tmp/l.out" || { cat "$tmp/l.out"; fail "no warning about the symlink"; }
# truncated object, meta rewritten to match it
head -c 20000 "$tmp/good.so" > "$tmp/half.so"
"$tool" plant "$tmp/cache" "$key" so "$tmp/half.so" || fail "plant"
run "$tmp/cache" "$tmp/f.npy" > "$tmp/f.out" 2>&1 || { cat "$tmp/f.out"; fail "run with a truncated cached object"; }
cmp -s "$tmp/cache/$so" "$tmp/good.so" || fail "the truncated object was not rebuilt"
# a whole shared object with a matching meta that is no simulator module: evicted and rebuilt
"$tool" plant "$tmp/cache" "$key" so "$tmp/evil.so" || fail "plant"
run "$tmp/cache" "$tmp/g.npy" > "$tmp/g.out" 2>&1 || { cat "$tmp/g.out"; fail "run with a foreign cached object"; }
rm -f "$tmp/pwned"
cmp -s "$tmp/cache/$so" "$tmp/good.so" || fail "the foreign object was not evicted and rebuilt"
run "$tmp/cache" "$tmp/h.npy" --report > "$tmp/h.out" 2>&1 || { cat "$tmp/h.out"; fail "run after eviction"; }
grep -q "cache hit" "$tmp/h.out" || { cat "$tmp/h.out"; fail "no cache hit after the rebuild"; }
# a directory in the way of the store: the run still succeeds, from a private build directory
rm -f "$tmp/cache/$so" "$tmp/cache/$so.meta"
mkdir "$tmp/cache/$so"
run "$tmp/cache" "$tmp/i.npy" > "$tmp/i.out" 2>&1 || { cat "$tmp/i.out"; fail "run with a directory in the way"; }
grep -q "cannot store the kernel object" "$tmp/i.out" || { cat "$tmp/i.out"; fail "no warning about the failed store"; }
ls "$tmp/cache" | grep -q '^tmp-' && fail "private build directory left in the cache"
"$shortc" cmp "$tmp/a.npy" "$tmp/i.npy" --atol 0 || fail "run with a directory in the way differs"
echo "ok"
