# sec_setup.sh — sourced by the security tests (links.sh, external.sh): $bin,
# $models and $data made absolute, a private $tmp (removed at exit) as the
# working directory, a private kernel cache in it, fail=0.
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
models=$(cd "$models" && pwd) data=$(cd "$data" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export SHORTC_CACHE="$tmp/cache"
mkdir -m 700 "$SHORTC_CACHE"
fail=0
cd "$tmp" || exit 2
