# expect.sh — sourced by the tests/cli scripts. expect RC WANT ARGS...: runs
# "$bin" ARGS (under $prefix, e.g. "timeout 60", if set) and requires exit
# status RC and stderr exactly WANT; on a mismatch prints both and sets
# fail=1. Needs $bin and $tmp.
# check DESCRIPTION COMMAND...: runs COMMAND; when it fails prints FAIL: DESCRIPTION and sets fail=1.
expect() {
    rc_want=$1 want=$2
    shift 2
    ${prefix:-} "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(cat "$tmp/err")
    if [ "$rc" -ne "$rc_want" ] || [ "$got" != "$want" ]; then
        echo "FAIL: shortc $*"
        echo "  exit $rc (want $rc_want), stderr: $got"
        echo "  want stderr: $want"
        fail=1
    fi
}

check() {
    what=$1
    shift
    "$@" || { echo "FAIL: $what"; fail=1; }
}
