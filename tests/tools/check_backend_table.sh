#!/bin/sh
# check_backend_table.sh SRCDIR — the runtime's API layer (runtime/src/shortrt.c)
# routes every call through the model's backend table (RtBackend): it never
# compares m->backend against a backend to pick what to run.
src="$1/runtime/src/shortrt.c"
[ -r "$src" ] || { echo "check_backend_table: cannot read $src" >&2; exit 2; }
if grep -nE 'backend *[!=]= *SRT_BACKEND_' "$src"; then
    echo "check_backend_table: $src branches on a backend (call through m->ops instead)" >&2
    exit 1
fi
grep -q 'm->ops->forward' "$src" || { echo "check_backend_table: srt_forward does not call m->ops->forward" >&2; exit 1; }
echo "check_backend_table: ok"
