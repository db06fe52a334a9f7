#!/usr/bin/env bash
# test.sh — what CI runs: installs missing Debian packages, configures, builds everything
# (the CUDA code too, when nvcc exists) and runs the `cpu` tests.
#   BUILD_DIR   build directory [build]
#   CMAKE_ARGS  extra CMake arguments, e.g. "-DTRISTREAM_WERROR=ON"
#   TEST_LABEL  CTest label to run [cpu]; "gpu" on a GPU machine, "" for all
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
tristream_install_deps
tristream_install_python_deps || echo "tristream: no Python tools: the Python module and its tests are skipped" >&2
tristream_find_cuda
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -G Ninja ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
label=${TEST_LABEL-cpu}
if [ -n "$label" ]; then
  ctest --test-dir "$BUILD_DIR" -L "$label" --output-on-failure -j "$JOBS" --timeout 900
else
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900
fi
