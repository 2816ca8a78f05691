#!/bin/sh
# bundle_scrubbed.sh CMAKE BUILD_DIR — the bundle runs on its own (docs/gpu.md, "The bundle").
#
# 1. `cmake --build BUILD --target bundle` makes BUILD/bundle; it is copied to a fresh
#    directory, so no path into the source or build tree can be what makes it work.
# 2. With `env -i` (no LD_LIBRARY_PATH, no SHORTC_* variables; PATH only the system's),
#    from an unrelated directory: --version; a bundled model compiled to CUDA; the same
#    model run on the simulator and on the reference interpreter, logits equal.
# 3. readelf: bin/shortc and lib/libshortrt.so need nothing outside libc, libm, libdl,
#    libpthread, librt, the dynamic loader, the CUDA libraries and the bundle's own cJSON;
#    neither needs libclang/LLVM (dlopened by --check alone); RUNPATH is $ORIGIN-relative.
# 4. The bundle is under 32 MiB.
set -eu
CMAKE=$1 BUILD=$2
fail() { echo "bundle_scrubbed: FAIL: $*" >&2; exit 1; }
"$CMAKE" --build "$BUILD" --target bundle >/dev/null || fail "cmake --build --target bundle"
W=$(mktemp -d "${TMPDIR:-/tmp}/bundle_scrubbed.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp -a "$BUILD/bundle" "$W/shortc-bundle"
B=$W/shortc-bundle
mkdir "$W/cwd" "$W/home"
run() { (cd "$W/cwd" && env -i HOME="$W/home" PATH=/usr/bin:/bin "$@"); }

echo "== scrubbed runs"
run "$B/bin/shortc" --version | grep -q '^shortc ' || fail "--version"
M=$B/share/shortc/models
run "$B/bin/shortc" "$M/gpt2_tiny.arch" -o "$W/cwd/tiny.cu" || fail "compile gpt2_tiny"
grep -q '__global__' "$W/cwd/tiny.cu" || fail "no kernel in the emitted .cu"
echo "1 2 3 4 5 6 7 8 9 10 11 12" >"$W/cwd/t.txt"
run "$B/bin/shortc" run "$M/gpt2_tiny.arch" --backend sim --random-weights 1 --tokens t.txt --logits sim.npy ||
    fail "run on the simulator"
run "$B/bin/shortc" run "$M/gpt2_tiny.arch" --backend ref --random-weights 1 --tokens t.txt --logits ref.npy ||
    fail "run on the interpreter"
run "$B/bin/shortc" cmp sim.npy ref.npy --atol 1e-4 --rtol 1e-4 || fail "sim and ref logits differ"

echo "== what the binaries need"
for f in "$B/bin/shortc" "$B"/lib/libshortrt.so.*.*.*; do
    readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r lib; do
        case $lib in
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*.so.*) ;;
        libnvrtc.so.* | libcuda.so.* | libcublas.so.* | libcublasLt.so.*) ;;
        libcjson.so.*) [ -e "$B/lib/$lib" ] || fail "$f needs $lib, which the bundle lacks" ;;
        *) fail "$(basename "$f") needs $lib (outside libc, the CUDA libraries and the bundle)" ;;
        esac
    done || exit 1
    rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    case $rp in '$ORIGIN/../lib'*) ;; *) fail "$(basename "$f") RUNPATH is '$rp', not \$ORIGIN/../lib first" ;; esac
done
! readelf -d "$B/bin/shortc" | grep -qi 'clang\|llvm' || fail "shortc links libclang/LLVM"

echo "== size"
bytes=$(du -sb "$B" | cut -f1)
[ "$bytes" -lt 33554432 ] || fail "the bundle holds $bytes bytes (over 32 MiB)"
echo "bundle_scrubbed: ok ($bytes bytes)"
