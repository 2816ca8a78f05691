#!/bin/sh
# quiet_stderr.sh CMD [ARG...] — runs CMD and fails unless it exits 0 with
# nothing on stderr. Simulator runs print nothing there, also under
# AddressSanitizer (-DSHORTC_SANITIZE=ON), where unannotated fiber switches
# would make ASan warn ("False positive error reports may follow").
set -u
err=$(mktemp "${TMPDIR:-/tmp}/shortc-quiet.XXXXXX")
trap 'rm -f "$err"' EXIT INT TERM
"$@" > /dev/null 2> "$err"
rc=$?
if [ $rc -ne 0 ]; then cat "$err"; echo "FAIL: exit status $rc: $*"; exit 1; fi
if [ -s "$err" ]; then cat "$err"; echo "FAIL: output on stderr: $*"; exit 1; fi
echo "ok"
