#!/bin/sh
# check_layering.sh SRC COMMON_LIB COMPILER_LIB RUNTIME_LIB — the layering of
# docs/architecture.md ("Layering"), checked on the sources' #includes and on
# the symbols the built objects define and use:
#
#   common/    includes neither compiler nor runtime headers; uses no symbol of either library
#   compiler/  includes no runtime header; uses no symbol of the runtime library
#              (the CLI, which uses both, is in cli/)
#   runtime/   only runtime/src/backend_ref.c includes the compiler's shortc.h or uses
#              compiler symbols (the .arch front end and the reference backend)
#   no cycles  ir.c calls nothing in pass_*.c; plan.c nothing in emit.c
#
# Prints each violation; exit status 1 if there is any.
set -u
src=$1 common=$2 compiler=$3 runtime=$4
bad=0
fail() { echo "layering: $*"; bad=1; }

# includes
for f in $(grep -l -E '#include "(shortc\.h|shortrt\.h|rt_[a-z_]*\.h|sim\.h)"' "$src"/common/*.[ch] 2>/dev/null); do
  fail "$f includes a compiler or runtime header"
done
for f in $(grep -l -E '#include "(shortrt\.h|rt_[a-z_]*\.h|sim\.h)"' "$src"/compiler/*.[ch]); do
  fail "$f includes a runtime header"
done
for f in $(grep -rl '#include "shortc\.h"' "$src"/runtime); do
  case $f in */runtime/src/backend_ref.c) ;; *) fail "$f includes the compiler's shortc.h" ;; esac
done

# symbols: "archive:object: symbol" lines
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# "object symbol" lines from `nm -A` ("archive:object:[address] type symbol")
defs() { nm -A --defined-only -g "$1" 2>/dev/null | awk '{ split($1, p, ":"); print p[2] " " $NF }'; }
undefs() { nm -A -u "$1" 2>/dev/null | awk '{ split($1, p, ":"); print p[2] " " $NF }'; }
defs "$common" > "$tmp/common.def"; undefs "$common" > "$tmp/common.und"
defs "$compiler" > "$tmp/compiler.def"; undefs "$compiler" > "$tmp/compiler.und"
# libshortrt carries the compiler's and the shared layer's objects too (it
# stands alone when installed); only its own objects are checked as runtime.
defs "$runtime" > "$tmp/runtime.all.def"; undefs "$runtime" > "$tmp/runtime.all.und"
cut -d' ' -f1 "$tmp/common.def" "$tmp/compiler.def" "$tmp/common.und" "$tmp/compiler.und" | sort -u > "$tmp/lower.obj"
own() { awk 'NR == FNR { skip[$1] = 1; next } !($1 in skip)' "$tmp/lower.obj" "$1"; }
own "$tmp/runtime.all.def" > "$tmp/runtime.def"; own "$tmp/runtime.all.und" > "$tmp/runtime.und"
[ -s "$tmp/common.def" ] && [ -s "$tmp/compiler.def" ] && [ -s "$tmp/runtime.def" ] || { echo "layering: cannot read the libraries' symbols"; exit 1; }

# uses: object symbol, for objects of $1.und whose symbol is defined in $2.def
uses() { awk 'NR == FNR { d[$2] = $1; next } ($2 in d) { print $1 " uses " $2 " (" d[$2] ")" }' "$2" "$1"; }
uses "$tmp/common.und" "$tmp/compiler.def" | sed 's/^/common: /' > "$tmp/v1"
uses "$tmp/common.und" "$tmp/runtime.def" | sed 's/^/common: /' >> "$tmp/v1"
uses "$tmp/compiler.und" "$tmp/runtime.def" | sed 's/^/compiler: /' >> "$tmp/v1"
uses "$tmp/runtime.und" "$tmp/compiler.def" | grep -v '^backend_ref\.c\.o ' | sed 's/^/runtime: /' >> "$tmp/v1"
grep '^ir\.c\.o ' "$tmp/compiler.und" > "$tmp/ir.und"
grep '^pass_[a-z]*\.c\.o ' "$tmp/compiler.def" > "$tmp/pass.def"
uses "$tmp/ir.und" "$tmp/pass.def" | sed 's/^/cycle: /' >> "$tmp/v1"
grep '^plan\.c\.o ' "$tmp/compiler.und" > "$tmp/plan.und"
grep '^emit\.c\.o ' "$tmp/compiler.def" > "$tmp/emit.def"
uses "$tmp/plan.und" "$tmp/emit.def" | sed 's/^/cycle: /' >> "$tmp/v1"
if [ -s "$tmp/v1" ]; then
  sed 's/^/layering: /' "$tmp/v1"
  bad=1
fi
[ $bad = 0 ] && echo "layering: ok"
exit $bad
