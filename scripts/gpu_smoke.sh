#!/usr/bin/env bash
# gpu_smoke.sh — the shortest useful check on a GPU machine: build the binary and the gpu tests,
# run the streaming-pipeline gpu test, count the quickstart graph and a Kronecker scale-22 graph
# in core and out of core (1/4 of the footprint, each scheme, pair included) on the GPU, then the
# kernel tests.
# Logs under $OUT (default bench/out/smoke). Each step is time-bounded.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/smoke}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD_DIR:-build}
SCALE=${SCALE:-22}
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTRISTREAM_BUILD_BENCH=OFF &&
  ninja -C "$B" -j "$(nproc)" tristream cuda_pipeline_gpu_test cuda_cuda_counter_test; } \
  >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built at ${SECONDS}s"
timeout 60 "$B/tests/cuda_pipeline_gpu_test" >"$OUT/pipeline_gpu_test.log" 2>&1
echo "pipeline gpu test: rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/pipeline_gpu_test.log" | tr '\n' ' ') at ${SECONDS}s"
grep -E '^\[  FAILED' "$OUT/pipeline_gpu_test.log" | head -5
T=$B/tristream
$T convert tests/data/karate.el -o /tmp/karate.tcsr -q >/dev/null && $T count /tmp/karate.tcsr
$T generate kronecker --scale "$SCALE" -o /tmp/k.tcsr -q >/dev/null
echo "generated at ${SECONDS}s"
{
  timeout 60 $T count /tmp/k.tcsr --json
  F=$($T plan /tmp/k.tcsr --parts 1 --gpu-memory 1024T --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["device_bytes"])')
  for s in auto range hash vertex pair; do timeout 60 $T count /tmp/k.tcsr --json --scheme $s --gpu-memory $((F / 4)); done
} >"$OUT/counts.jsonl" 2>&1
python3 - "$OUT/counts.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except Exception:
        print("  ", line.strip()[:300]); continue
    s = d.get("stats", {})
    print("triangles %d  scheme %s p=%s  wall %.3fs  kernel %.3fs  upload %.2f GB  exposed %.3fs  overlap %s  total %.3fs" % (
        d["triangles"], s.get("scheme"), s.get("parts"), s.get("wall_s", 0), s.get("kernel", {}).get("busy_s", 0),
        (s.get("upload", {}).get("bytes") or 0) / 1e9, s.get("exposed_transfer_s") or 0, s.get("overlap"), d.get("seconds", 0)))
PY
echo "counted at ${SECONDS}s"
timeout 90 "$B/tests/cuda_cuda_counter_test" >"$OUT/cuda_counter_test.log" 2>&1
echo "cuda counter test: rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/cuda_counter_test.log" | tr '\n' ' ') at ${SECONDS}s"
