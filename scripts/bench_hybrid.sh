#!/usr/bin/env bash
# bench_hybrid.sh — several workers on one GPU machine: `--hybrid` (the GPU and the CPU) against
# the GPU alone, the CPU alone (its rate), two CUDA workers on one device (`--devices 0,0`) and
# two MPI ranks sharing the GPU (`mpirun -np 2`), on Kronecker graphs in core and at 1/4 of the
# footprint (--gpu-memory) and on a hub-dominated graph. Whole command elapsed (process start to
# exit), median of REPEAT runs; every count must equal the GPU alone's.
#
# usage: scripts/bench_hybrid.sh [SCALE...]   (default: 24 25; "none" = the hub graph only)
#   BIN        the tristream binary [build/tristream]
#   OUT        output folder [bench/out/hybrid]
#   REPEAT     runs per configuration (the median is kept) [3]
#   CPU_REPEAT runs of the CPU alone (slow; its rate only) [1]
#   FRACTIONS  in core (1) and divisors of the footprint [1 4]
#   HUB        the hub-dominated graph's model and options, "" to skip
#              [hub --hubs 8 --hub-share 0.3 --scale 22]
#   MPI        1 = also run `mpirun -np 2` (needs a build with MPI) [1]
#   TWO        1 = also run two CUDA workers on one device (`--devices 0,0`) [1]
#   EXTRA      extra arguments for every count
#   APPEND     1 = add to OUT/results.jsonl instead of starting it afresh (one scale per call,
#              then the table covers every call) [0]
#   BACKEND    the "GPU" runs' backend [cuda] (cpu tries the script on a machine without a GPU:
#              the --devices runs then fail and are marked so)
# The GPU alone and the hybrid run alternately (run i of one, then run i of the other), so that
# the pairs see the same machine. Prints two markdown tables. The first: per graph and budget the
# whole-command seconds of each configuration, r_gpu and r_cpu (edges per second of the GPU and
# the CPU alone), the hybrid speed-up over the GPU (of the medians, and the median and range of
# the pairs' ratios) and the target 0.9 * (r_gpu + r_cpu) / r_gpu (and never below 1.0x).
# The second: the same for the counting itself, the pipeline seconds of `count --json`
# (timing.pipeline: the plan's units through the workers, without the process start, the CUDA
# context, opening and reading the file and planning, which the CPU cannot share), and what the
# hybrid's CPU took (units, share of the estimated work). Writes OUT/results.jsonl and
# OUT/results.md, and the traces of the hybrid runs (OUT/trace-*.json).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tristream}
OUT=${OUT:-bench/out/hybrid}
REPEAT=${REPEAT:-3}
CPU_REPEAT=${CPU_REPEAT:-1}
FRACTIONS=${FRACTIONS:-1 4}
HUB=${HUB-hub --hubs 8 --hub-share 0.3 --scale 22}
MPI=${MPI:-1}
TWO=${TWO:-1}
EXTRA=${EXTRA:-}
BACKEND=${BACKEND:-cuda}
SCALES=("$@")
[ ${#SCALES[@]} -gt 0 ] || SCALES=(24 25)
[ -x "$BIN" ] || {
  echo "bench_hybrid: $BIN not found (build first, or set BIN)" >&2
  exit 1
}
mkdir -p "$OUT"
RES="$OUT/results.jsonl"
[ "${APPEND:-0}" = 1 ] || : >"$RES"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$MPI" = 1 ] && ! command -v mpirun >/dev/null 2>&1; then
  echo "bench_hybrid: no mpirun; the MPI runs are skipped" >&2
  MPI=0
fi

# run GRAPH BUDGET CONFIG REPEATS CMD... — runs the command REPEATS times, appends one JSON line
# per run (seconds = whole command, triangles and the workers from --json).
run() {
  local graph=$1 budget=$2 config=$3 reps=$4
  shift 4
  for ((i = 1; i <= reps; i++)); do
    local t0 t1 out
    t0=$(date +%s.%N)
    if ! out=$("$@" 2>"$OUT/stderr.txt"); then
      echo "  $config: FAILED ($(tail -1 "$OUT/stderr.txt"))" >&2
      printf '{"graph":"%s","budget":"%s","config":"%s","failed":true}\n' \
        "$graph" "$budget" "$config" >>"$RES"
      return 0
    fi
    t1=$(date +%s.%N)
    python3 - "$graph" "$budget" "$config" "$t0" "$t1" "$out" >>"$RES" <<'EOF'
import json, sys
graph, budget, config, t0, t1, out = sys.argv[1:]
d = json.loads(out)
st = d.get("stats") or {}
row = {"graph": graph, "budget": budget, "config": config,
       "seconds": float(t1) - float(t0), "triangles": d["triangles"], "edges": d["edges"],
       "scheme": st.get("scheme"), "parts": st.get("parts"), "units": st.get("units"),
       "wall_s": st.get("wall_s"), "pipeline_s": (d.get("timing") or {}).get("pipeline"),
       "cutoff": st.get("cutoff"),
       "workers": [{"device": w["device"], "units": w["units"], "busy_s": w["busy_s"],
                    "work": w.get("work", 0)}
                   for w in st.get("workers", [])]}
print(json.dumps(row))
EOF
    echo "  $config run $i: $(tail -1 "$RES" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.3f s (pipeline %.3f s), %s triangles, %s" % (r["seconds"], r["pipeline_s"] or 0, r["triangles"], [(w["device"][:24], w["units"]) for w in r["workers"]]))')"
  done
}

# bench GRAPH FILE — every configuration at every budget of one graph.
bench() {
  local name=$1 f=$2
  local foot
  foot=$("$BIN" plan "$f" --parts 1 --gpu-memory 1024T --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["device_bytes"])')
  echo "== $name: in-core footprint $foot bytes, file $(stat -L -c %s "$f") bytes"
  for frac in $FRACTIONS; do
    local budget="in core" mem=()
    if [ "$frac" != 1 ]; then
      budget="1/$frac"
      mem=(--gpu-memory "$((foot / frac))")
    fi
    local common=(count "$f" --json -q "${mem[@]}")
    # shellcheck disable=SC2206 # EXTRA holds several arguments
    common+=($EXTRA)
    echo "-- $name $budget"
    for ((pair = 1; pair <= REPEAT; pair++)); do
      run "$name" "$budget" gpu 1 "$BIN" "${common[@]}" --backend "$BACKEND"
      run "$name" "$budget" hybrid 1 "$BIN" "${common[@]}" --backend "$BACKEND" --hybrid \
        --trace "$OUT/trace-$name-$frac-hybrid.json"
    done
    run "$name" "$budget" cpu "$CPU_REPEAT" "$BIN" "${common[@]}" --backend cpu
    [ "$TWO" = 1 ] && run "$name" "$budget" "devices 0,0" "$REPEAT" "$BIN" "${common[@]}" --devices 0,0
    if [ "$MPI" = 1 ]; then
      run "$name" "$budget" "mpirun -np 2" "$REPEAT" mpirun --oversubscribe --bind-to none -np 2 "$BIN" \
        "${common[@]}" --backend "$BACKEND"
    fi
  done
}

for s in "${SCALES[@]}"; do
  [ "$s" = none ] && continue
  f="$OUT/kron$s.tcsr"
  [ -s "$f" ] || "$BIN" generate kronecker --scale "$s" -o "$f" -q
  bench "kronecker $s" "$f"
done
if [ -n "$HUB" ]; then
  f="$OUT/hub.tcsr"
  # shellcheck disable=SC2086 # HUB is the model and its options
  [ -s "$f" ] || "$BIN" generate $HUB -o "$f" -q
  bench "${HUB%% *}" "$f"
fi

# The tables: medians, rates, the hybrid speed-up and its target; whole command, then counting.
python3 - "$RES" <<'EOF' | tee "$OUT/results.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = []
for r in rows:
    k = (r["graph"], r["budget"])
    if k not in keys:
        keys.append(k)
configs = ["gpu", "hybrid", "cpu", "devices 0,0", "mpirun -np 2"]


def medians(sel, field):
    return {c: statistics.median([r[field] for r in v]) if v and not any(
        r.get("failed") or r.get(field) is None for r in v) else None for c, v in sel.items()}


def rates(med, edges):
    r_gpu = edges / med["gpu"]
    r_cpu = edges / med["cpu"] if med["cpu"] else 0.0
    target = max(1.0, 0.9 * (r_gpu + r_cpu) / r_gpu) if r_cpu else 1.0
    speed = med["gpu"] / med["hybrid"] if med["hybrid"] else None
    return r_gpu, r_cpu, target, speed


def met(speed, target):
    return "yes" if speed and speed >= target - 1e-9 else "no"


whole, counting = [], []
for k in keys:
    sel = {c: [r for r in rows if (r["graph"], r["budget"]) == k and r["config"] == c]
           for c in configs}
    gpu = [r for r in sel["gpu"] if not r.get("failed")]
    med = medians(sel, "seconds")
    if not gpu or med["gpu"] is None:
        continue
    edges = gpu[0]["edges"]
    want = gpu[0]["triangles"]
    exact = all(r.get("triangles") == want for v in sel.values() for r in v
                if not r.get("failed"))
    plan = "%s p=%s, %s units" % (gpu[0]["scheme"], gpu[0]["parts"], gpu[0]["units"])
    r_gpu, r_cpu, target, speed = rates(med, edges)
    cells = ["%.3f" % med[c] if med[c] is not None else "-" for c in configs]
    # run i of the GPU alone against run i of the hybrid (they ran one after the other)
    hy = [r for r in sel["hybrid"] if not r.get("failed")]
    ratios = sorted(g["seconds"] / h["seconds"] for g, h in zip(gpu, hy))
    paired = ("%.3fx (%.3f-%.3f)" % (statistics.median(ratios), ratios[0], ratios[-1])
              if ratios else "-")
    whole.append("| %s | %s | %s | %s | %.0f | %.1f | %s | %s | %.3fx | %s | %s |" % (
        k[0], k[1], plan, " | ".join(cells), r_gpu / 1e6, r_cpu / 1e6,
        "%.3fx" % speed if speed else "-", paired, target, met(speed, target),
        "exact" if exact else "DIFFER"))
    pipe = medians(sel, "pipeline_s")
    if pipe["gpu"] is None:
        continue
    r_gpu, r_cpu, target, speed = rates(pipe, edges)
    # what the hybrid's CPU (the cut-off worker) took in the hybrid's median run
    took = "-"
    hyb = sorted([r for r in sel["hybrid"] if not r.get("failed")], key=lambda r: r["seconds"])
    if hyb:
        h = hyb[len(hyb) // 2]
        cut = [w for w in h["workers"] if "cut-off" in w["device"]]
        total = sum(w["work"] for w in h["workers"]) or 1.0
        took = ("%d units, %.1f%% of the work" % (cut[0]["units"], 100.0 * cut[0]["work"] / total)
                if cut else "-")
        if h.get("cutoff"):  # admitted or not (stats.cutoff), the reason cut short
            took += "; " + h["cutoff"].split(" (")[0]
    counting.append("| %s | %s | %s | %.0f | %.1f | %s | %.3fx | %s | %s |" % (
        k[0], k[1], " | ".join("%.3f" % pipe[c] if pipe[c] is not None else "-"
                               for c in ["gpu", "hybrid", "cpu"]),
        r_gpu / 1e6, r_cpu / 1e6, "%.3fx" % speed if speed else "-", target,
        met(speed, target), took))

print("Whole command (process start to exit), median seconds:\n")
print("| graph | budget | plan | " + " | ".join(c + " s" for c in configs) +
      " | r_gpu (M edges/s) | r_cpu | hybrid speed-up | pairs' speed-up, median (range) "
      "| target | met | counts |")
print("|" + "---|" * (len(configs) + 10))
print("\n".join(whole))
print("\nCounting (timing.pipeline of count --json), median seconds:\n")
print("| graph | budget | gpu s | hybrid s | cpu s | r_gpu (M edges/s) | r_cpu | hybrid speed-up"
      " | target | met | the hybrid's CPU took |")
print("|" + "---|" * 11)
print("\n".join(counting))
EOF
