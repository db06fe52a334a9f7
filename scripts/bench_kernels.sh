#!/usr/bin/env bash
# bench_kernels.sh — CUDA kernel benchmark: every kernel and `auto` on Kronecker and uniform graphs
# (edge factor 16), kernel time by CUDA events (median of 5 after a warm-up) and TEPS, plus the
# end-to-end count of a .tcsr file (written from the Kronecker graph of --tcsr-scale).
#
#   bash scripts/bench_kernels.sh [SCALES] [extra kernels_bench options]
#     SCALES: "20-25" (default) or a list "22,24"
# Results: a table on stdout and bench/out/kernels.csv. Needs a CUDA GPU; see bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scales=${1:-20-25}
shift || true
if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target kernels_bench >&2
mkdir -p bench/out
"$BUILD_DIR/bench/kernels_bench" --scales "$scales" --csv bench/out/kernels.csv \
  --tmp "${TMPDIR:-/tmp}" "$@"
