#!/bin/sh
# tests/gpu/accept.sh [--out DIR] [--dry-run] [--part N] [--shortc PATH] [--models a,b]
# GPU acceptance of shortc (docs/gpu.md): every bundled model on --backend cuda against the
# reference interpreter, then compute-sanitizer. The work is in accept.py (standard library only).
exec python3 "$(dirname "$0")/accept.py" "$@"
