#!/usr/bin/env bash
# gpu_validate.sh — everything that needs the GPU machine, in one command: build with CUDA
# (sm_90), the gpu and cpu tests, the quickstart on the GPU, and the benchmark drivers.
# Logs go to $OUT (default bench/out/gpu; at most 8 files), a summary to stdout.
#
#   PHASES   which phases to run, in order [build test sanitize run kernels ooc convert];
#            `compare` (not in the default) builds BASE_SRC (a source tarball or folder, e.g.
#            `git archive REV | gzip`) into build-base and runs scripts/bench_compare.sh at
#            CSCALES (interleaved whole-command runs of both binaries, in core and at 1/4) and
#            the kernel benchmark of both builds
#   KSCALES  kernel benchmark scales [22,24]
#   OSCALES  out-of-core benchmark scales [25]
#   CSCALE   conversion benchmark scale [26]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/gpu}
mkdir -p "$OUT"
PHASES=${PHASES:-build test sanitize run kernels ooc convert}
KSCALES=${KSCALES:-22,24}
OSCALES=${OSCALES:-25}
CSCALE=${CSCALE:-26}
CSCALES=${CSCALES:-25}
BASE_SRC=${BASE_SRC:-}
export BUILD_DIR=${BUILD_DIR:-build}
. scripts/deps.sh
tristream_find_cuda
status=0
phase() { printf '\n===== %s (%s)\n' "$1" "$(date +%T)"; }
for ph in $PHASES; do
  case $ph in
    build)
      phase build
      nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv 2>&1
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build "$BUILD_DIR" -j "$(nproc)"; } >"$OUT/build.log" 2>&1 ||
        { tail -40 "$OUT/build.log"; exit 2; }
      grep -ci warning "$OUT/build.log" | sed 's/^/build warnings: /'
      ;;
    test)
      phase "gpu tests"
      ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout 600 >"$OUT/gpu_tests.log" 2>&1 || status=1
      tail -15 "$OUT/gpu_tests.log"
      phase "cpu tests"
      ctest --test-dir "$BUILD_DIR" -L cpu -j 8 --timeout 600 >"$OUT/cpu_tests.log" 2>&1 || status=1
      tail -6 "$OUT/cpu_tests.log"
      ;;
    sanitize)
      phase "compute-sanitizer (memcheck, racecheck)"
      OUT="$OUT/sanitize" bash scripts/sanitize_gpu.sh || status=1
      ;;
    run)
      phase "quickstart (auto backend)"
      bash scripts/run.sh 2>&1 | tail -12
      ;;
    kernels)
      phase "kernel benchmark $KSCALES"
      bash scripts/bench_kernels.sh "$KSCALES" --tcsr-scale 22 >"$OUT/kernels.log" 2>&1 || status=1
      tail -45 "$OUT/kernels.log"
      ;;
    ooc)
      phase "out-of-core benchmark $OSCALES"
      # shellcheck disable=SC2086
      BIN=$BUILD_DIR/tristream OUT=bench/out/ooc bash scripts/bench_ooc.sh $OSCALES >"$OUT/ooc.log" 2>&1 || status=1
      cp bench/out/ooc/results.md "$OUT/ooc_results.md" 2>/dev/null
      cp bench/out/ooc/timeline-*.png "$OUT/" 2>/dev/null
      cat "$OUT/ooc_results.md" 2>/dev/null || tail -30 "$OUT/ooc.log"
      ;;
    convert)
      phase "conversion benchmark scale $CSCALE"
      BIN=$BUILD_DIR/tristream bash scripts/bench_convert.sh "$CSCALE" >"$OUT/convert.log" 2>&1 || status=1
      cat bench/out/convert/results.md 2>/dev/null || tail -30 "$OUT/convert.log"
      ;;
    basebuild)
      phase "baseline build from $BASE_SRC"
      rm -rf build-base-src && mkdir -p build-base-src
      if [ -d "$BASE_SRC" ]; then cp -r "$BASE_SRC"/. build-base-src/; else tar xzf "$BASE_SRC" -C build-base-src; fi
      { cmake -S build-base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_CUDA_ARCHITECTURES=90 -DTRISTREAM_BUILD_TESTS=OFF &&
        cmake --build build-base -j "$(nproc)" --target tristream kernels_bench; } >"$OUT/base_build.log" 2>&1 ||
        { tail -20 "$OUT/base_build.log"; status=1; }
      ;;
    compare)
      phase "baseline against this build, Kronecker $CSCALES"
      # shellcheck disable=SC2086
      BASE=build-base/tristream NEW=$BUILD_DIR/tristream OUT=bench/out/compare \
        bash scripts/bench_compare.sh $CSCALES >"$OUT/compare.log" 2>&1 || status=1
      tail -8 "$OUT/compare.log"
      phase "kernel benchmark $KSCALES, baseline then this build"
      for b in build-base "$BUILD_DIR"; do
        "$b/bench/kernels_bench" --scales "$KSCALES" --kernels auto --reps 5 \
          --tmp "${TMPDIR:-/tmp}" >"$OUT/kernels-$(basename "$b").log" 2>&1 || status=1
        tail -6 "$OUT/kernels-$(basename "$b").log"
      done
      ;;
    *) echo "unknown phase $ph"; status=1 ;;
  esac
done
exit $status
