# check.sh — sourced by the test scripts that run a list of checks
# (tests/suite/golden_suite.sh, tests/memory/*.sh). check DESCRIPTION
# COMMAND...: runs COMMAND and prints "ok   LABEL: DESCRIPTION", or "FAIL"
# with the command's output indented; counts in $pass and $fail. LABEL is
# $check_label (the model or the backend the script checks).
pass=0 fail=0
check() {
    desc=$1; shift
    if out=$("$@" 2>&1); then
        pass=$((pass + 1)); echo "ok   ${check_label:-}: $desc"
    else
        fail=$((fail + 1)); echo "FAIL ${check_label:-}: $desc"; printf '%s\n' "$out" | sed 's/^/     /'
    fi
}
