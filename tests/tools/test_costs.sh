#!/bin/sh
# test_costs.sh [BUILD_DIR] [MIN_SECONDS] — prints the `name seconds` lines of tests/cmake/zz_costs.cmake
# from the test times ctest kept in BUILD_DIR/Testing/Temporary/CTestCostData.txt (default build, 10 s):
# every test that took at least MIN_SECONDS on average, slowest first. Run the whole suite once on a
# quiet machine (`ctest --test-dir build -j2`), then paste the output into the table (docs/testing.md).
set -u
build=${1:-build} min=${2:-10}
data="$build/Testing/Temporary/CTestCostData.txt"
[ -r "$data" ] || { echo "test_costs.sh: no $data: run ctest in $build first" >&2; exit 2; }
# CTestCostData.txt: `name runs average_seconds` per test, then `---` and the tests that failed last
awk -v min="$min" '/^---/ { exit } NF == 3 && $3 >= min { printf "  %-44s %d\n", $1, $3 + 0.5 }' "$data" |
    sort -k2,2 -rn
