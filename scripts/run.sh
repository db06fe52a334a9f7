#!/usr/bin/env bash
# run.sh — the quickstart: builds tristream if needed, converts the bundled Zachary karate club
# edge list into a .tcsr file and counts its triangles (on the GPU where one exists, else the CPU).
# Extra arguments go to `tristream count` (e.g. --backend cpu, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -x "$BUILD_DIR/tristream" ]; then
  tristream_install_deps
  tristream_find_cuda
  cmake -S . -B "$BUILD_DIR" -G Ninja -DTRISTREAM_BUILD_TESTS=OFF -DTRISTREAM_BUILD_BENCH=OFF >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target tristream >&2
out="$BUILD_DIR/karate.tcsr"
echo "== tristream convert tests/data/karate.el -o $out"
"$BUILD_DIR/tristream" convert tests/data/karate.el -o "$out" --quiet
echo
echo "== tristream count $out $*"
"$BUILD_DIR/tristream" count "$out" "$@"
