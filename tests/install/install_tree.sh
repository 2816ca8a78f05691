#!/bin/sh
# install_tree.sh — the installed package works with no source or build tree.
#
#   install_tree.sh SRC_DIR WORK_PARENT VERSION CMAKE CC CXX
#
# 1. Copies the project (without its build trees) into a temporary directory,
#    configures it (tests off, Release, an install prefix that never exists),
#    builds shortc and libshortrt and installs into a staging prefix with
#    `cmake --install --prefix`.
# 2. Deletes the copied source and its build tree and moves the installed
#    prefix elsewhere, so any path compiled in (source, build or configured
#    prefix) would point at nothing; no installed file may even mention them.
# 3. From a fresh directory, with only the moved prefix:
#    - shortc --version prints VERSION; pkg-config and find_package agree;
#    - samples/argmax.c builds with pkg-config (shared and static) and with a CMake
#      project using find_package(shortrt) (shortrt::shortrt and
#      shortrt::shortrt_static) and all four print the same tokens on the
#      simulator, whose headers the library must carry itself;
#    - the installed shortc compiles a bundled model to CUDA, checks it with
#      --check, runs it on the simulator and the reference interpreter and
#      the logits agree; `shortc demo` finds its default model in the
#      installed data directory;
#    - the man pages render without warnings (when groff is present).
set -eu
SRC=$1 PARENT=$2 VERSION=$3 CMAKE=$4 CC=$5 CXX=$6

mkdir -p "$PARENT"
W=$(mktemp -d "$PARENT/install_tree.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "install_tree: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "copy the project to $W/src"
mkdir "$W/src"
for e in "$SRC"/*; do
    [ -e "$e/CMakeCache.txt" ] && continue # a build tree
    cp -R "$e" "$W/src/"
done

step "configure, build and install the copy"
"$CMAKE" -S "$W/src" -B "$W/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_INSTALL_PREFIX="$W/never-installed-here" -DCMAKE_INSTALL_LIBDIR=lib >"$W/configure.log" 2>&1 ||
    { cat "$W/configure.log"; fail "configure"; }
"$CMAKE" --build "$W/build" -j2 --target shortc shortrt shortrt_shared >"$W/build.log" 2>&1 ||
    { tail -50 "$W/build.log"; fail "build"; }
"$CMAKE" --install "$W/build" --prefix "$W/stage" >"$W/install.log" 2>&1 ||
    { cat "$W/install.log"; fail "install"; }

step "delete the source and build trees, move the prefix"
rm -rf "$W/src" "$W/build"
mv "$W/stage" "$W/moved"
P=$W/moved
for f in bin/shortc lib/libshortrt.a lib/libshortrt.so include/shortrt.h include/shortrt_version.h \
    include/shortsim/shortsim_prelude.h lib/pkgconfig/shortrt.pc lib/cmake/shortrt/shortrtConfig.cmake \
    lib/cmake/shortrt/shortrtConfigVersion.cmake share/man/man1/shortc.1 share/man/man3/shortrt.3 \
    share/shortc/models/gpt2_tiny.arch share/doc/shortc/README.md share/doc/shortc/docs/runtime.md \
    share/shortc/tools/convert_checkpoint.py; do
    [ -f "$P/$f" ] || fail "not installed: $f"
done
if grep -rlF -e "$W/src" -e "$W/build" -e "$W/stage" -e "$W/never-installed-here" "$P"; then
    fail "the installed files above name the source, build or configured tree"
fi

mkdir "$W/run" && cd "$W/run"
export SHORTC_CACHE="$W/cache"
unset SHORTC_DATA_DIR SHORTC_SIM_CXX SHORTSIM_CXXFLAGS SHORTC_CUDA_INCLUDE 2>/dev/null || true
M=$P/share/shortc/models

step "versions"
"$P/bin/shortc" --version | tee version.txt
grep -qx "shortc $VERSION (libshortrt $VERSION)" version.txt || fail "shortc --version is not $VERSION"
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
[ "$(pkg-config --modversion shortrt)" = "$VERSION" ] || fail "pkg-config --modversion is not $VERSION"

step "samples/argmax.c with pkg-config (shared library)"
# shellcheck disable=SC2046 # pkg-config prints several words on purpose
"$CC" -o argmax_pc "$SRC/samples/argmax.c" $(pkg-config --cflags --libs shortrt) \
    -Wl,-rpath,"$(pkg-config --variable=libdir shortrt)" || fail "pkg-config build"
loaded=$(ldd ./argmax_pc | awk '/libshortrt/ { print $3 }')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$P/lib/libshortrt.so")" ] ||
    fail "argmax_pc does not load the installed libshortrt.so (ldd: '$loaded')"
./argmax_pc "$M/gpt2_tiny.arch" --backend sim --seed 3 >pc.txt || fail "argmax_pc on the simulator"
cat pc.txt
grep -q "position 7: token 7 -> next" pc.txt || fail "argmax_pc printed no prediction"
# static, as docs/runtime.md shows: the archive named, its dependencies from --static
# shellcheck disable=SC2046
"$CC" -o argmax_pc_static "$SRC/samples/argmax.c" $(pkg-config --cflags shortrt) \
    "$(pkg-config --variable=libdir shortrt)/libshortrt.a" $(pkg-config --static --libs shortrt | sed 's/ -lshortrt / /') ||
    fail "pkg-config static build"
ldd ./argmax_pc_static | grep -q libshortrt && fail "argmax_pc_static loads a shared libshortrt"
./argmax_pc_static "$M/gpt2_tiny.arch" --backend sim --seed 3 >pc_static.txt || fail "argmax_pc_static"
cmp pc.txt pc_static.txt || fail "pkg-config shared and static builds disagree"

step "samples/argmax.c with find_package(shortrt) (shared and static)"
mkdir consumer && cp "$SRC/samples/argmax.c" consumer/
cat >consumer/CMakeLists.txt <<CMEOF
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(shortrt $VERSION EXACT REQUIRED)
add_executable(argmax_shared argmax.c)
target_link_libraries(argmax_shared PRIVATE shortrt::shortrt)
add_executable(argmax_static argmax.c)
target_link_libraries(argmax_static PRIVATE shortrt::shortrt_static)
CMEOF
"$CMAKE" -S consumer -B consumer/build -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
    >cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "find_package(shortrt)"; }
"$CMAKE" --build consumer/build >>cmake_consumer.log 2>&1 || { cat cmake_consumer.log; fail "consumer build"; }
ldd consumer/build/argmax_static | grep -q libshortrt && fail "argmax_static loads a shared libshortrt"
consumer/build/argmax_shared "$M/gpt2_tiny.arch" --backend sim --seed 3 >shared.txt || fail "argmax_shared"
consumer/build/argmax_static "$M/gpt2_tiny.arch" --backend sim --seed 3 >static.txt || fail "argmax_static"
cmp pc.txt shared.txt || fail "pkg-config and find_package (shared) builds disagree"
cmp pc.txt static.txt || fail "shared and static builds disagree"

step "the installed shortc on a bundled model"
"$P/bin/shortc" "$M/gpt2_tiny.arch" -o tiny.cu || fail "emit CUDA"
"$P/bin/shortc" --check tiny.cu || fail "--check of the emitted CUDA"
"$P/bin/shortc" run tiny.cu --backend sim --random-weights 1 --logits sim.npy || fail "run on the simulator"
"$P/bin/shortc" run "$M/gpt2_tiny.arch" --backend ref --random-weights 1 --logits ref.npy || fail "run on ref"
"$P/bin/shortc" cmp sim.npy ref.npy --atol 1e-4 || fail "simulator and reference logits differ"

step "shortc demo: its default model from the installed data directory"
"$P/bin/shortc" demo >demo.txt 2>&1 || { cat demo.txt; fail "shortc demo"; }
cat demo.txt
grep -q "^== shortc demo: .*/share/shortc/models/gpt2_small.arch ==" demo.txt || fail "demo did not use the installed model"
grep -q "^top 5 next tokens:" demo.txt || fail "demo printed no prediction"
# SHORTC_DATA_DIR overrides the location: a directory without models means the
# source-tree default (models/ of the current directory), absent here
if SHORTC_DATA_DIR="$W/none" "$P/bin/shortc" demo >demo_none.txt 2>&1; then fail "demo ran without a model"; fi
grep -q "models/gpt2_small.arch" demo_none.txt || { cat demo_none.txt; fail "demo's missing-model error"; }

step "models by name and imports from the installed models; the installed converter"
"$P/bin/shortc" run gpt2_tiny --backend ref --random-weights 1 --logits byname.npy || fail "run gpt2_tiny by name"
"$P/bin/shortc" cmp byname.npy ref.npy --atol 0 || fail "the model by name is not the installed gpt2_tiny"
printf 'import "gpt2_small.arch";\nmodel mine : gpt2_small { layers 2; }\n' >mine.arch
"$P/bin/shortc" mine.arch || fail "import of an installed model from one's own file"
SHORTC_PYTHON=/nonexistent/python3 "$P/bin/shortc" convert fairseq a b 2>convert.txt && fail "convert ran without its python"
grep -q "cannot run '/nonexistent/python3'" convert.txt || { cat convert.txt; fail "shortc convert did not find the installed converter"; }

if command -v groff >/dev/null 2>&1; then
    step "man pages"
    for page in man1/shortc.1 man3/shortrt.3; do
        out=$(groff -man -ww -z "$P/share/man/$page" 2>&1) || fail "groff $page"
        [ -z "$out" ] || { echo "$out"; fail "groff warnings in $page"; }
    done
fi
echo "install_tree: OK"
