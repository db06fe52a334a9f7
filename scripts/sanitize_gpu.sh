#!/usr/bin/env bash
# sanitize_gpu.sh — the CUDA kernels under compute-sanitizer: memcheck (out-of-bounds and
# misaligned device accesses, leaks, API errors) and racecheck (shared-memory hazards) over the gpu
# tests that run every kernel and variant (auto, lstc, trust, trust:lite, trust:t32, trust:in,
# wedge, wedge:nocorner, gui, bitmap) on small graphs: closed forms, empty and triangle-free
# graphs, per-vertex output, range and hash block tasks, slices through the one count entry
# (enqueue_device_count), 64-bit offsets; the expansion of packed blocks and the cut of pair's A
# from B; and memcheck over the streaming pipeline's gpu tests (uploads, packed blocks expanded and
# blocks cut before each count, every scheme out of core). Needs a CUDA GPU.
#
#   bash scripts/sanitize_gpu.sh      (BUILD_DIR [build]; logs in OUT [bench/out/sanitize])
# Exit status: 0 when both tools report no error, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-bench/out/sanitize}
mkdir -p "$OUT"
. scripts/deps.sh
tristream_find_cuda
if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >&2
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target cuda_cuda_counter_test cuda_pipeline_gpu_test >&2 || exit 1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
TEST="$BUILD_DIR/tests/cuda_cuda_counter_test"
status=0
run() {  # TOOL FILTER [TEST [LOG NAME]]
  local log="$OUT/${4:-$1}.log"
  timeout 900 "$CS" --tool "$1" --error-exitcode 9 "${3:-$TEST}" --gtest_filter="$2" >"$log" 2>&1
  local rc=$?
  echo "${4:-$1}: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
  grep -E '^\[  PASSED|^\[  FAILED|SKIPPED' "$log" | head -3
  [ $rc -eq 0 ] || status=1
}
run memcheck 'CudaKernels.ClosedForms:CudaKernels.EmptyAndTriangleFree:CudaKernels.PerVertex:CudaKernels.RangeBlockTasksSumToTotal:CudaKernels.HashBlockTasksSumToTotal:CudaKernels.SlicesThroughTheCountEntry:CudaKernels.LargeOffsets:CudaKernels.ExpandPackedEqualsTheHostReference:CudaKernels.CutRowsEqualsTheHostReference'
run racecheck 'CudaKernels.ClosedForms:CudaKernels.EmptyAndTriangleFree'
run memcheck '*' "$BUILD_DIR/tests/cuda_pipeline_gpu_test" memcheck-pipeline
exit $status
