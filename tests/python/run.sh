#!/bin/sh
# The ctest `python` (tests/cmake/python.cmake): builds the package's wheel with scikit-build-core from this
# source tree (linking the build's libshortrt.a instead of building the runtime again, so that it takes seconds),
# installs it into a fresh virtual environment and runs tests/python with pytest in that environment.
#
# usage: run.sh PYTHON SOURCE_DIR BUILD_DIR LIBSHORTRT_A SHORTC_BIN
# PYTHON is Debian's /usr/bin/python3 (numpy, torch); scikit-build-core, build and pytest come from
# .ci/setup's /opt/shortc-py ($SHORTC_PY_TOOLS overrides). Exit 77 (skipped) when they are missing.
set -eu
PY=$1 SRC=$2 BLD=$3 LIB=$4 BIN=$5
TOOLS=${SHORTC_PY_TOOLS:-/opt/shortc-py}
W=$BLD/python
if ! PYTHONPATH=$TOOLS "$PY" -c "import scikit_build_core, build, pytest, numpy" 2>/dev/null; then
  echo "python: skipped: scikit-build-core, build and pytest not importable from $TOOLS (run .ci/setup)"
  exit 77
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_NO_INDEX=1
mkdir -p "$W"
rm -rf "$W/dist" "$W/venv"
# the CMake build directory of the wheel is kept between runs: a rerun rebuilds only what changed
if ! PYTHONPATH=$TOOLS "$PY" -m build --wheel --no-isolation --outdir "$W/dist" -Cbuild-dir="$W/skbuild" \
     -Ccmake.define.SHORTC_PYTHON_SHORTRT="$LIB" "$SRC" > "$W/build.log" 2>&1; then
  cat "$W/build.log"
  echo "python: building the wheel failed"
  exit 1
fi
ls "$W/dist"
"$PY" -m venv --system-site-packages --without-pip "$W/venv"
"$PY" -m pip --python "$W/venv/bin/python" install --no-deps --quiet "$W"/dist/shortc-*.whl
cd "$W"
SHORTC_BIN=$BIN SHORTC_SOURCE_DIR=$SRC PYTHONPATH=$TOOLS PYTHONDONTWRITEBYTECODE=1 \
  "$W/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$SRC/tests/python"
