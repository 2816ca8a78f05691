#!/bin/sh
# model_path.sh SHORTC MODELS_DIR — models by name and the import model path (docs/usage.md, "Models
# by name"): `shortc run gpt2_tiny` and `import "gpt2_small.arch";` from a file anywhere find the
# bundled models along $SHORTC_PATH, then the installed ones ($SHORTC_DATA_DIR/models here); a file
# beside the importer comes first; the import rules of docs/security.md hold for every file found
# along the path (.arch only, never touched otherwise; a link to another kind of file, a FIFO or a
# directory refused; no search for "." or ".." paths, so a search never climbs out of a directory).
set -u
case $1 in /*) bin=$1 ;; *) bin=$(pwd)/$1 ;; esac
models=$(cd "$2" && pwd) || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

. "$(dirname "$0")/expect.sh"


mkdir "$tmp/work" "$tmp/lib" "$tmp/share" "$tmp/share/models"
cd "$tmp/work" || exit 2
unset SHORTC_PATH SHORTC_DATA_DIR
printf 'import "gpt2_small.arch";\nmodel mine : gpt2_small { layers 2; d_model 64; heads 2; ffn 128 gelu_tanh; vocab 256; segment 16; positions learned max=32; }\n' >mine.arch

# names: nowhere, then along SHORTC_PATH, then the installed models
expect 3 "shortc: error: no model 'gpt2_tiny': neither a file nor gpt2_tiny.arch here, along \$SHORTC_PATH, among the installed models or under models/" \
    run gpt2_tiny --backend ref --random-weights 1
SHORTC_PATH="/nonexistent::$models" "$bin" run gpt2_tiny --backend ref --random-weights 1 --top 1 >"$tmp/a" 2>&1
check "run gpt2_tiny along SHORTC_PATH ($(cat "$tmp/a"))" grep -q "^top 1 next tokens" "$tmp/a"
cp "$models/gpt2_tiny.arch" "$models/gpt2_small.arch" "$tmp/share/models/"
SHORTC_DATA_DIR=$tmp/share "$bin" run gpt2_tiny --backend ref --random-weights 1 --top 1 >"$tmp/b" 2>&1
check "run gpt2_tiny among the installed models ($(cat "$tmp/b"))" grep -q "^top 1 next tokens" "$tmp/b"
check "the same model either way" cmp -s "$tmp/a" "$tmp/b"
SHORTC_PATH=$models "$bin" report gpt2_tiny >/dev/null || { echo "FAIL: report by name"; fail=1; }
SHORTC_PATH=$models "$bin" mask gpt2_tiny --tokens 4 --ascii >/dev/null || { echo "FAIL: mask by name"; fail=1; }
# NAME.arch in the working directory
SHORTC_PATH=$models "$bin" run mine --backend ref --random-weights 1 --top 1 >/dev/null ||
    { echo "FAIL: run mine (./mine.arch)"; fail=1; }

# imports: beside the file, else along the path
"$bin" mine.arch >/dev/null 2>"$tmp/e"
check "an import found nowhere is an error (exit 3)" grep -q "cannot import 'gpt2_small.arch': No such file or directory" "$tmp/e"
SHORTC_PATH=$models "$bin" mine.arch 2>/dev/null || { echo "FAIL: import along SHORTC_PATH"; fail=1; }
SHORTC_DATA_DIR=$tmp/share "$bin" mine.arch 2>/dev/null || { echo "FAIL: import among the installed models"; fail=1; }
printf 'model gpt2_small { vocab 256; }\n' >gpt2_small.arch
SHORTC_PATH=$models "$bin" mine.arch --dump-spec >"$tmp/spec" 2>&1
check "a file beside the importer comes before the path" grep -q "vocab *256" "$tmp/spec"
rm gpt2_small.arch

# the import rules along the path
printf 'secret\n' >"$tmp/lib/notes.txt"
printf 'import "notes.txt";\nmodel m { vocab 8; }\n' >txt.arch
SHORTC_PATH=$tmp/lib "$bin" txt.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a non-.arch import is refused along the path" grep -q "cannot import 'notes.txt': not a .arch file" "$tmp/e"
check "and never read" sh -c "! grep -q secret '$tmp/e'"
ln -s "$tmp/lib/notes.txt" "$tmp/lib/link.arch"
printf 'import "link.arch";\nmodel m { vocab 8; }\n' >uselink.arch
SHORTC_PATH=$tmp/lib "$bin" uselink.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a link to another kind of file is refused along the path" grep -q "it is '$tmp/lib/notes.txt', not a .arch file" "$tmp/e"
mkfifo "$tmp/lib/fifo.arch"
printf 'import "fifo.arch";\nmodel m { vocab 8; }\n' >usefifo.arch
SHORTC_PATH=$tmp/lib timeout 10 "$bin" usefifo.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a FIFO along the path is refused, never waited on" grep -q "cannot import '$tmp/lib/fifo.arch': not a regular file" "$tmp/e"
mkdir "$tmp/lib/sub" "$tmp/lib/sub2"
cp "$models/gpt2_small.arch" "$tmp/lib/up.arch"
printf 'import "../up.arch";\nmodel m : gpt2_small { }\n' >dots.arch
SHORTC_PATH=$tmp/lib/sub "$bin" dots.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a '..' import is not searched along the path" grep -q "cannot import '../up.arch': No such file or directory" "$tmp/e"
printf 'import "./gpt2_small.arch";\nmodel m : gpt2_small { }\n' >dot.arch
SHORTC_PATH=$models "$bin" dot.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a './' import is not searched along the path" grep -q "cannot import './gpt2_small.arch'" "$tmp/e"
printf 'import "gpt2\\tx.arch";\nmodel m { vocab 8; }\n' >ctl.arch
SHORTC_PATH=$tmp/lib "$bin" ctl.arch --dump-spec >/dev/null 2>"$tmp/e"
check "a control character in an import path is still refused" grep -q "control character 0x09 in an import path" "$tmp/e"

[ $fail -eq 0 ] && echo "model_path: ok"
exit $fail
