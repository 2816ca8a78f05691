#!/bin/sh
# inject.sh SHORTC MODELS_DIR — no input text reaches generated source as code
# (issue 26 item 1; docs/security.md, "Generated source").
#
# File and directory names that would end or close a comment of the emitted
# .cu — a newline or carriage return followed by code (the reported
# reproduction: a constructor calling system()), "*/", the trigraph "??/", a
# backslash, non-UTF-8 bytes — are used as the main .arch file's path and as
# an imported file's path. For each, compile (-o), --check, `run` on the ref
# and sim backends (`auto` is sim without a GPU; cuda is not available here)
# and `run` of the emitted .cu must succeed, the emitted .cu with its
# comments removed by the host preprocessor (trigraphs on) must equal the one
# of plainly named files, and the payload must never run (no PWNED file).
# An import path with a control character is refused by the parser with a
# located error, before anything is compiled or run.
set -u
bin=$1 models=$2
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cxx=${SHORTC_CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || { echo "no host C++ compiler: skipped"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export SHORTC_CACHE="$tmp/cache"
mkdir -m 700 "$SHORTC_CACHE"
fail=0
nl='
'
cr=$(printf '\r')
payload='extern "C" int system(const char*); __attribute__((constructor)) static void p(){system("touch PWNED");}'
body='model m : gpt2_small { vocab 64; d_model 32; heads 2; ffn 64 gelu_tanh; positions learned max=16; segment 16; layers 1; }'

# code OUT.cu: the emitted source without its comments, as the host compiler reads it
code() { "$cxx" -x c++ -E -P -w -fpreprocessed -trigraphs "$1" 2>/dev/null; }

# try WHAT DIR MAIN: every command on DIR/MAIN succeeds, emits the plain code and runs nothing
try() {
    what=$1 dir=$2 main=$3
    (
        cd "$dir" || exit 1
        timeout 120 "$bin" "$main" -o out.cu >log 2>&1 || { echo "FAIL: $what: compile"; cat log; exit 1; }
        code out.cu >out.code || exit 1
        cmp -s out.code "$tmp/base.code" || { echo "FAIL: $what: emitted code differs from the plain one"; diff "$tmp/base.code" out.code | head -5; exit 1; }
        for args in "--check" "run --backend ref --random-weights 1" "run --backend sim --random-weights 1"; do
            set -- $args
            if [ "$1" = run ]; then shift; set -- run "$main" "$@"; else set -- "$main" "$@"; fi
            timeout 300 "$bin" "$@" >log 2>&1 || { echo "FAIL: $what: shortc $args"; cat log; exit 1; }
        done
        timeout 300 "$bin" run out.cu --backend sim --random-weights 1 >log 2>&1 || { echo "FAIL: $what: run out.cu"; cat log; exit 1; }
    ) || { fail=1; return; }
    if [ -n "$(find "$tmp" -name PWNED)" ]; then echo "FAIL: $what: the payload ran"; fail=1; return; fi
    echo "ok: $what"
}

# the plain baseline
mkdir "$tmp/base"
cp "$models/gpt2_small.arch" "$tmp/base/g.arch"
printf 'import "g.arch";\n%s\n' "$body" >"$tmp/base/main.arch"
(cd "$tmp/base" && "$bin" main.arch -o out.cu && code out.cu >"$tmp/base.code") || { echo "FAIL: baseline"; exit 1; }

# the main file's name (the payload on a line of its own after the comment's end; `run` wants .arch)
i=0
for name in "m.arch$nl$payload$nl#define X .arch" "m.arch$cr$payload$cr#define X .arch" \
            "m\\$nl$payload$nl#define X .arch" "t??/m.arch" "m\\.arch" "$(printf 'm\377\376.arch')" "s*/m.arch"; do
    i=$((i + 1))
    sub=$(dirname "$name")   # "s*/": a path that would close the plan's comment
    mkdir -p "$tmp/main$i/$sub"
    cp "$models/gpt2_small.arch" "$tmp/main$i/$sub/g.arch"
    printf 'import "g.arch";\n%s\n' "$body" >"$tmp/main$i/$name"
    try "main file name $i" "$tmp/main$i" "$name"
done

# an imported file's directory ("*/" closes the plan's comment; "??/" is a backslash under trigraphs)
i=0
for dir in "c*" "d??" "b\\" "$(printf '\377')"; do
    i=$((i + 1))
    mkdir -p "$tmp/imp$i/$dir"
    cp "$models/gpt2_small.arch" "$tmp/imp$i/$dir/e.arch"
    esc=$(printf '%s' "$dir" | sed 's/\\/\\\\/g')
    printf 'import "%s/e.arch";\n%s\n' "$esc" "$body" >"$tmp/imp$i/main.arch"
    try "import directory $i" "$tmp/imp$i" main.arch
done

# the reported reproduction: a newline escape in an import path is refused where it is written
mkdir "$tmp/repro"
evil="e.arch$nl$payload$nl#define X "
cp "$models/gpt2_small.arch" "$tmp/repro/$evil"
printf 'import "e.arch\\n%s\\n#define X ";\n%s\n' "$(printf '%s' "$payload" | sed 's/"/\\"/g')" "$body" >"$tmp/repro/main.arch"
want='main.arch:1:15: error: control character 0x0a in an import path'
(
    cd "$tmp/repro" || exit 1
    for args in "main.arch -o out.cu" "main.arch --check" "run main.arch --backend ref --random-weights 1" \
                "run main.arch --backend sim --random-weights 1" "run main.arch --backend auto --random-weights 1"; do
        # shellcheck disable=SC2086
        timeout 120 "$bin" $args >out 2>err
        rc=$?
        first=$(head -n 1 err)
        if [ "$rc" -eq 0 ] || [ "${first#*"$want"}" = "$first" ]; then
            echo "FAIL: repro: shortc $args: exit $rc, stderr: $first"
            exit 1
        fi
    done
    [ ! -e out.cu ] || { echo "FAIL: repro: out.cu written"; exit 1; }
) || fail=1
if [ -n "$(find "$tmp" -name PWNED)" ]; then echo "FAIL: repro: the payload ran"; fail=1; fi
[ "$fail" -eq 0 ] && echo "ok: reproduction refused"
exit $fail
