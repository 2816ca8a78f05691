#!/bin/sh
# facts_cache.sh SHORTC MODELS_DIR — the static kernel facts of `shortc compare
# --kernels` kept in the kernel cache (cli/facts_cache.c): a fresh cache is
# filled by the first call (a .facts entry with its .meta), the second call
# reads it ("facts_cached": true) and prints the same JSON and table; an entry
# cut short, or one whose sidecar matches but whose text does not read, is
# recomputed with the same output and stored again; a store that fails does
# not fail the command.
set -u
bin=$1
models=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export SHORTC_CACHE="$tmp/cache"
fail=0
model="$models/gpt2_tiny.arch"

# facts NAME WANT: compare --kernels sm_90 --json into $tmp/NAME.json; "facts_cached" must be WANT
facts() {
    if ! "$bin" compare "$model" --kernels sm_90 --json >"$tmp/$1.json" 2>"$tmp/$1.err"; then
        echo "FAIL: $1: compare --kernels sm_90 --json failed"; cat "$tmp/$1.err"; fail=1; return
    fi
    got=$(grep -c "\"facts_cached\":[[:space:]]*$2" "$tmp/$1.json")
    [ "$got" = 1 ] || { echo "FAIL: $1: want \"facts_cached\": $2"; fail=1; }
    grep -v '"facts_cached"' "$tmp/$1.json" >"$tmp/$1.body"
}

# same NAME: the JSON of NAME, less facts_cached, equals the first call's
same() {
    diff -u "$tmp/first.body" "$tmp/$1.body" >/dev/null || { echo "FAIL: $1: output differs from the computed facts"; fail=1; }
}

facts first false
entry=$(ls "$SHORTC_CACHE"/*.facts 2>/dev/null)
[ -n "$entry" ] && [ -f "$entry.meta" ] || { echo "FAIL: no .facts entry with its .meta in $SHORTC_CACHE"; exit 1; }
grep -q '^shortc-facts 1$' "$entry" || { echo "FAIL: the entry lacks its header"; fail=1; }
facts second true
same second

# the table too: from the cache as computed
"$bin" compare "$model" --kernels sm_90 >"$tmp/table.cached" 2>/dev/null || { echo "FAIL: cached table"; fail=1; }
SHORTC_CACHE="$tmp/cache2" "$bin" compare "$model" --kernels sm_90 >"$tmp/table.fresh" 2>/dev/null ||
    { echo "FAIL: fresh table"; fail=1; }
diff -u "$tmp/table.fresh" "$tmp/table.cached" || { echo "FAIL: table from the cache differs"; fail=1; }

# an entry cut short: recomputed, stored again
head -c 100 "$entry" >"$tmp/short" && cat "$tmp/short" >"$entry"
facts truncated false
same truncated
facts refilled true
same refilled

# an entry whose sidecar matches but whose text does not read (a changed field count)
sed 's/^\(f [^ ]*\) 1 /\1 1 1 /' "$entry" >"$tmp/bad"
/usr/bin/python3 - "$tmp/bad" "$entry" <<'PY' || { echo "FAIL: cannot write the malformed entry"; exit 1; }
import sys
data = open(sys.argv[1], "rb").read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
open(sys.argv[2], "wb").write(data)
open(sys.argv[2] + ".meta", "w").write("shortc-cache 1\nlen %d\nhash %016x\n" % (len(data), h))
PY
facts malformed false
same malformed
facts restored true
same restored

# a store that fails (a directory where the entry goes): the command still succeeds, same output
rm -f "$entry" "$entry.meta" && mkdir "$entry"
facts unstorable false
same unstorable

[ $fail = 0 ] && echo "facts_cache: ok"
exit $fail
