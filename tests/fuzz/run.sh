#!/bin/sh
# run.sh SOURCE_DIR BUILD_DIR SHORTC SECONDS [TARGET...] — builds the
# libFuzzer targets with clang (ASan + UBSan) in BUILD_DIR and runs each for
# SECONDS on a fresh corpus seeded from the project:
#   fuzz_arch         models/*.arch and every .arch under tests/
#   fuzz_safetensors  the first 4 KiB of tests/golden/*.safetensors, plus small
#                     hand-made files
#   fuzz_plan         the plan JSON of every model (shortc --plan-out) and an
#                     emitted .cu
#   fuzz_npy          tests/simbench/data/*.npy and one of each dtype and rank
#   fuzz_tokenizer    tests/tokenizer/data/tokenizer.json, a NUL, then each
#                     tests/tokenizer/cases text
#   fuzz_tokens       tests/tokenizer/data/*.ids and small hand-made token files
# Exit 77 (ctest: skipped) when clang is missing; 1 on a crash, leak or hang
# (the reproducer is kept under BUILD_DIR/findings and its path printed).
# Long runs: docs/fuzzing.md.
set -u
src=$1 build=$2 shortc=$3 secs=$4
shift 4
targets=${*:-fuzz_arch fuzz_safetensors fuzz_plan fuzz_npy fuzz_tokenizer fuzz_tokens}
command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1 ||
    { echo "clang not found: fuzzing skipped (apt-get install clang)"; exit 77; }
mkdir -p "$build" || exit 1
if ! cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSHORTC_FUZZ=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1; then
    cat "$build/configure.log"
    exit 1
fi
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $targets >"$build/build.log" 2>&1 || { tail -40 "$build/build.log"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/shortc-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/arch" "$work/st" "$work/plan" "$work/npy" "$work/tok" "$work/ids" "$build/findings"
# seeds
n=0
for f in "$src"/models/*.arch $(find "$src/tests" -name '*.arch'); do
    n=$((n + 1))
    cp "$f" "$work/arch/$n.arch"
done
for f in "$src"/tests/golden/*.safetensors; do
    [ -e "$f" ] && head -c 4096 "$f" >"$work/st/$(basename "$f")"
done
printf '\020\000\000\000\000\000\000\000{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}\000\000\200\077' >"$work/st/one"
printf '\002\000\000\000\000\000\000\000{}' >"$work/st/empty"
for f in "$src"/models/*.arch; do
    b=$(basename "$f" .arch)
    "$shortc" "$f" --plan-out "$work/plan/$b.json" >/dev/null 2>&1 || rm -f "$work/plan/$b.json"
done
"$shortc" "$src/models/gpt2_tiny.arch" -o "$work/plan/gpt2_tiny.cu" >/dev/null 2>&1
cp "$src"/tests/simbench/data/*.npy "$work/npy/" 2>/dev/null
printf "\223NUMPY\001\000\166\000{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1, 1, 1), }                                                    \n\001\000\000\000\002\000\000\000" >"$work/npy/i4"
n=0
for f in "$src"/tests/tokenizer/cases/*.txt; do
    n=$((n + 1))
    { cat "$src/tests/tokenizer/data/tokenizer.json"; printf '\000'; cat "$f"; } >"$work/tok/$n"
done
cp "$src"/tests/tokenizer/data/*.ids "$work/ids/" 2>/dev/null
printf '0 1 2\n' >"$work/ids/small"
printf '2147483647\t0\n\n 17' >"$work/ids/edge"

fail=0
for t in $targets; do
    case $t in
    fuzz_arch) corpus=$work/arch ;;
    fuzz_safetensors) corpus=$work/st ;;
    fuzz_plan) corpus=$work/plan ;;
    fuzz_npy) corpus=$work/npy ;;
    fuzz_tokenizer) corpus=$work/tok ;;
    fuzz_tokens) corpus=$work/ids ;;
    *) echo "unknown target $t"; exit 1 ;;
    esac
    bin=$(find "$build" -name "$t" -type f -perm -u+x | head -n 1)
    [ -n "$bin" ] || { echo "FAIL: $t was not built"; fail=1; continue; }
    # -max_len: larger than any seed that matters; -timeout: one input taking 10 s is a hang
    if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
            -artifact_prefix="$build/findings/$t-" "$corpus" >"$work/$t.log" 2>&1; then
        echo "$t: $(grep -E '^stat::number_of_executed_units' "$work/$t.log" | sed 's/.*: *//') inputs, no finding"
    else
        echo "FAIL: $t found a problem; reproducer in $build/findings (run: $bin FILE)"
        tail -60 "$work/$t.log"
        fail=1
    fi
done
exit $fail
