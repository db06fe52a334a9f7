#!/usr/bin/env bash
# kernel_suite.sh — every CUDA kernel on every shape of the graph-shape suite (kronecker, uniform,
# powerlaw, mesh2d, mesh3d, community, hub: cuda/testing/graph_suite.hpp), on a GPU machine. The
# graphs are made by `tristream generate` (the suite's arguments: `kernels_bench --generate-args
# SCALE`) as .tcsr files; kernels_bench times each kernel on each (CUDA events, median of --reps
# after a warm-up) and checks every count against the others and the closed forms (the meshes).
# When Nsight Compute is found (ncu on PATH or /usr/local/cuda/bin/ncu), each kernel's count on
# each shape is profiled once more (kernels_bench --profile 1 under ncu --profile-from-start off):
# DRAM bytes read and written, warp instructions executed, and the DRAM and SM throughput as a
# share of the device's peak, summed (shares: time-weighted) over the count's launches, for a
# roofline table. Prints markdown on stdout; progress on stderr.
#
#   bash scripts/kernel_suite.sh [SCALE]      (SCALE [22])
#   environment: BUILD_DIR [build], WORK [bench/out/kernel_suite] (graphs are kept there and
#   reused), KERNELS [auto,lstc,trust,trust:lite,trust:t32,trust:in,wedge,gui,bitmap],
#   PROFILE_KERNELS [auto,trust,trust:lite,trust:in,lstc,wedge,gui,bitmap], REPS [5],
#   NCU (path of ncu; "none" skips the profile), TRISTREAM and KERNELS_BENCH (prebuilt binaries,
#   e.g. built elsewhere and copied to the GPU machine: then nothing is built)
# Exit status: 0, or 1 when a count disagreed (MISMATCH) or a step failed.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-22}
BUILD_DIR=${BUILD_DIR:-build}
WORK=${WORK:-bench/out/kernel_suite}
KERNELS=${KERNELS:-auto,lstc,trust,trust:lite,trust:t32,trust:in,wedge,gui,bitmap}
PROFILE_KERNELS=${PROFILE_KERNELS:-auto,trust,trust:lite,trust:in,lstc,wedge,gui,bitmap}
REPS=${REPS:-5}
. scripts/deps.sh
tristream_find_cuda

# 1. The build: the CLI (to generate) and the benchmark, unless both are given.
if [ -n "${TRISTREAM:-}" ] && [ -n "${KERNELS_BENCH:-}" ]; then
  T=$TRISTREAM
  B=$KERNELS_BENCH
else
  if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRISTREAM_BUILD_BENCH=ON >&2
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target tristream kernels_bench >&2
  T="$BUILD_DIR/tristream"
  B="$BUILD_DIR/bench/kernels_bench"
fi
[ -x "$B" ] || { echo "kernel_suite: $B was not built (Google Benchmark missing?)" >&2; exit 1; }

# 2. The suite's graphs, by `tristream generate` (kept between runs).
mkdir -p "$WORK/graphs" "$WORK/ncu"
files=()
while read -r shape args; do
  f="$WORK/graphs/$shape-s$SCALE.tcsr"
  if [ ! -s "$f" ]; then
    echo "# generate $args" >&2
    # shellcheck disable=SC2086  # args is a list of options
    "$T" generate $args -q -o "$f" >&2
  fi
  files+=("$f")
done < <("$B" --generate-args "$SCALE")
list=$(IFS=,; echo "${files[*]}")

# 3. Kernel times (and the count checks) over every shape.
status=0
echo "# kernels_bench over ${#files[@]} graphs" >&2
"$B" --graphs "$list" --kernels "$KERNELS" --reps "$REPS" --tcsr-scale 0 \
  --csv "$WORK/times.csv" >"$WORK/times.txt" || status=1
cat "$WORK/times.txt" >&2
grep -q MISMATCH "$WORK/times.txt" && status=1
[ -s "$WORK/times.csv" ] || { echo "kernel_suite: kernels_bench wrote no times" >&2; exit 1; }

# 4. The profile: one ncu report per shape and kernel.
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,gpu__time_duration.sum
METRICS=$METRICS,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed
METRICS=$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed
profiled=0
if [ "$NCU" != none ] && [ -x "$NCU" ]; then
  for f in "${files[@]}"; do
    shape=$(basename "$f" .tcsr)
    for k in ${PROFILE_KERNELS//,/ }; do
      rep="$WORK/ncu/$shape-${k//:/_}"
      echo "# ncu $shape $k" >&2
      if "$NCU" --profile-from-start off --metrics "$METRICS" -f -o "$rep" \
        "$B" --graphs "$f" --kernels "$k" --profile 1 --tcsr-scale 0 >"$rep.log" 2>&1 &&
        "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base >"$rep.csv" 2>>"$rep.log"
      then
        profiled=1
      else
        echo "# ncu failed for $shape $k (see $rep.log)" >&2
        rm -f "$rep.csv"
      fi
    done
  done
else
  echo "# no Nsight Compute (ncu): no roofline table" >&2
fi

# 5. Markdown: the times, then the roofline.
python3 - "$WORK" "$SCALE" "$profiled" <<'EOF'
import csv, glob, os, sys

work, scale, profiled = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
rows = list(csv.DictReader(open(os.path.join(work, "times.csv"))))
edges = {}
print(f"### Kernel times, graph-shape suite at scale {scale}\n")
print("| shape | vertices | edges | triangles | kernel | chosen | ms | GTEPS |")
print("|---|---:|---:|---:|---|---|---:|---:|")
best = {}
for r in rows:
    shape = r["graph"].rsplit("-s", 1)[0]
    edges[shape] = int(r["m"])
    ms = float(r["median_ms"])
    if shape not in best or ms < best[shape][1]:
        best[shape] = (r["kernel"], ms)
    print(f"| {shape} | {int(r['n']):,} | {int(r['m']):,} | {int(r['triangles']):,} | "
          f"{r['kernel']} | {r['chosen']} | {ms:.2f} | {float(r['teps']) / 1e9:.3f} |")
print("\n| shape | fastest kernel | ms |")
print("|---|---|---:|")
for shape, (k, ms) in best.items():
    print(f"| {shape} | {k} | {ms:.2f} |")
if not profiled:
    sys.exit(0)

def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0

print(f"\n### Roofline (Nsight Compute, one count per kernel and shape, all of its launches)\n")
print("| shape | kernel | launches | ms | DRAM GB | DRAM bytes/edge | GB/s | DRAM % of peak "
      "| warp inst (M) | inst/edge | inst/byte | SM % of peak |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sorted(glob.glob(os.path.join(work, "ncu", "*.csv"))):
    name = os.path.basename(path)[:-4]
    shape = name.rsplit("-s", 1)[0]  # FILE: SHAPE-sSCALE-KERNEL (":" written as "_")
    kernel = name[len(shape) + 2:].split("-", 1)[1].replace("_", ":")
    lines = [l for l in open(path) if l.startswith('"')]
    # one row per launch; the units row (and anything else) has no numeric ID
    recs = [r for r in csv.DictReader(lines) if r.get("ID", "").strip().isdigit()]
    if not recs:
        continue
    t = sum(num(r["gpu__time_duration.sum"]) for r in recs)  # ns
    rd = sum(num(r["dram__bytes_read.sum"]) for r in recs)
    wr = sum(num(r["dram__bytes_write.sum"]) for r in recs)
    inst = sum(num(r["smsp__inst_executed.sum"]) for r in recs)
    def share(col):
        return sum(num(r[col]) * num(r["gpu__time_duration.sum"]) for r in recs) / t if t else 0
    m = edges.get(shape, 0) or 1
    b = rd + wr
    print(f"| {shape} | {kernel} | {len(recs)} | {t / 1e6:.2f} | {b / 1e9:.3f} | {b / m:.1f} | "
          f"{b / t if t else 0:.0f} | "
          f"{share('gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'):.1f} | "
          f"{inst / 1e6:.1f} | {inst / m:.2f} | {inst / b if b else 0:.2f} | "
          f"{share('sm__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} |")
print("\nms: the kernels' own durations under the profiler (serialised, without overlap); "
      "GB/s: DRAM bytes over that time; inst: warp-level instructions executed.")
EOF
exit $status
