#!/bin/sh
# ref_check.sh DUMP MODEL.arch adaptive_ref.py — dumps the interpreter's run of an adaptive model
# and checks it with the NumPy reference; exit 77 (skip) when /usr/bin/python3 has no numpy.
set -e
dump=$1 model=$2 ref=$3
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import numpy' 2>/dev/null; then echo "numpy not found: skipped"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$dump" "$model" "$dir" 7
"$py" "$ref" "$dir"
