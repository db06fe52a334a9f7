#!/usr/bin/env bash
# bench_multigpu.sh — several GPUs of one machine: `count --devices` (one process, one worker per
# GPU) and `mpirun -np N` (one rank per GPU) against one GPU. Two parts:
#
#   check   every configuration's count and per-vertex file against one GPU's, on the CHECK
#           graphs, in core and at 1/4 of one GPU's in-core footprint, for every scheme
#   scale   the whole command (process start to exit) of the SCALE graphs on 1, 2, 4, ... GPUs,
#           in one process and as MPI ranks, with the count's own stage figures beside it
#
#   report  the tables of what OUT holds (also on a machine without a GPU)
#
# usage: scripts/bench_multigpu.sh [check] [scale] [report]   (default: all three)
#   BIN        the tristream binary [build/tristream]
#   OUT        output folder: logs, results, traces (no graphs) [bench/out/multigpu]
#   DATA       where the generated .tcsr files are kept (reused when present) [bench/out/graphs]
#   SCRATCH    each run's output and per-vertex file [/dev/shm/bench_multigpu, else /tmp]
#   GPUS       GPU counts to scale over [1 2 4, those the machine has]
#   CHECK      NAME=MODEL graphs of the check, one a line
#              [kron24=kronecker --scale 24; hub22=hub --scale 22 --hubs 64 --hub-share 0.5]
#   SCALE      NAME=MODEL graphs of the scaling, one a line [kron26=kronecker --scale 26;
#              hub28=hub --scale 28 --hubs 4 --hub-share 0.5 --edge-factor 8;
#              kron27=kronecker --scale 27]
#   SCALE_FRACTIONS  the scaling's budgets: 1 = in core, F = 1/F of one GPU's in-core footprint
#              (per worker) [1 4]
#   SCHEMES    the schemes of the check at 1/4 (in core is one unit: auto) [range hash vertex pair]
#   PV         1 = the check compares the per-vertex files too [1]
#   REPEAT     runs per scaling configuration (the median is reported) [1]
#   LIMIT      seconds one command may run before it counts as failed [180]
#   MPIRUN     the launcher and its options, before -np [mpirun --bind-to none]
#   EXTRA      extra arguments for every count
# The scaling graphs are generated in the background while the check runs (they are large), so
# the check's seconds are not figures to quote; the scaling runs start once generation is done.
# Writes OUT/check.jsonl, OUT/scale.jsonl (one object per run), OUT/results.md (both tables), the
# trace of each scaling graph's `--devices` run on every GPU (OUT/trace-NAME-F.json; a PNG:
# scripts/plot_timeline.py), OUT/topo.txt (nvidia-smi topo -m) and OUT/log.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tristream}
OUT=${OUT:-bench/out/multigpu}
DATA=${DATA:-bench/out/graphs}
SCRATCH=${SCRATCH:-}
if [ -z "$SCRATCH" ]; then
  SCRATCH=/tmp/bench_multigpu
  [ -d /dev/shm ] && [ -w /dev/shm ] && SCRATCH=/dev/shm/bench_multigpu
fi
REPEAT=${REPEAT:-1}
LIMIT=${LIMIT:-180}
PV=${PV:-1}
EXTRA=${EXTRA:-}
SCHEMES=${SCHEMES:-range hash vertex pair}
SCALE_FRACTIONS=${SCALE_FRACTIONS:-1 4}
MPIRUN=${MPIRUN:-mpirun --bind-to none}
PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(check scale report)
has_part() { [[ " ${PARTS[*]} " == *" $1 "* ]]; }
if [ -z "${CHECK+x}" ]; then
  CHECK_GRAPHS=("kron24=kronecker --scale 24" "hub22=hub --scale 22 --hubs 64 --hub-share 0.5")
else
  mapfile -t CHECK_GRAPHS <<<"$CHECK" # one graph per line
fi
if [ -z "${SCALE+x}" ]; then
  SCALE_GRAPHS=("kron26=kronecker --scale 26"
    "hub28=hub --scale 28 --hubs 4 --hub-share 0.5 --edge-factor 8"
    "kron27=kronecker --scale 27")
else
  mapfile -t SCALE_GRAPHS <<<"$SCALE"
fi
mkdir -p "$OUT"
# setup — the binary, the GPUs and the folders of a check or scale run
setup() {
  [ -x "$BIN" ] || {
    echo "bench_multigpu: $BIN not found (build first, or set BIN)" >&2
    exit 1
  }
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "$NGPU" -ge 1 ] || {
    echo "bench_multigpu: no GPU (nvidia-smi -L lists none)" >&2
    exit 1
  }
  if [ -z "${GPUS:-}" ]; then
    GPUS=""
    for g in 1 2 4 8; do [ "$g" -le "$NGPU" ] && GPUS="$GPUS $g"; done
  fi
  mkdir -p "$DATA" "$SCRATCH"
}
LOG="$OUT/log.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HAVE_MPI=0
command -v mpirun >/dev/null 2>&1 && HAVE_MPI=1
T0=$(date +%s%N)
# since NS — seconds since the clock reading NS (date +%s%N)
since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
say() { echo "[$(since "$T0") s] $*" | tee -a "$LOG" >&2; }

# devlist N — the ordinals 0,1,...,N-1
devlist() { seq -s, 0 $(($1 - 1)); }

# gen NAME MODEL... — generates DATA/NAME.tcsr unless it exists
gen() {
  local name=$1 f="$DATA/$1.tcsr"
  shift
  [ -s "$f" ] && return 0
  local t
  t=$(date +%s%N)
  # shellcheck disable=SC2068 # the model and its options
  "$BIN" generate $@ -o "$f" -q >/dev/null
  say "generated $name ($*) in $(since "$t") s, $(stat -c %s "$f") bytes"
}

# footprint FILE — one GPU's in-core device bytes of the graph
footprint() {
  "$BIN" plan "$1" --parts 1 --gpu-memory 1024T --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["device_bytes"])'
}

# launch CONFIG — the command prefix of a configuration: "1" (one GPU), "devices N" (one process,
# N GPUs), "mpi N" (N ranks, one GPU each)
launch() {
  case $1 in
  1) echo "$BIN count" ;;
  devices*) echo "$BIN count --devices $(devlist "${1#devices }")" ;;
  mpi*) echo "$MPIRUN -np ${1#mpi } $BIN count" ;;
  esac
}

# record FILE JSONFIELDS... — runs the command after "--", appends a JSON line with the whole
# command's seconds, its exit status, the count's JSON output and the fields given
record() {
  local file=$1 meta=$2
  shift 3
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  timeout "$LIMIT" "$@" >"$SCRATCH/out.json" 2>"$SCRATCH/err.txt" || rc=$?
  t1=$(date +%s.%N)
  python3 - "$meta" "$t0" "$t1" "$rc" "$SCRATCH/out.json" "$SCRATCH/err.txt" >>"$file" <<'EOF'
import json, sys
meta, t0, t1, rc, ofile, efile = sys.argv[1:]
row = json.loads(meta)
row.update({"whole_s": float(t1) - float(t0), "rc": int(rc)})
try:
    row["out"] = json.loads(open(ofile).read().strip().splitlines()[-1])
except Exception:
    row["out"] = None
if int(rc) != 0 or row["out"] is None:
    err = open(efile, errors="replace").read()
    row["err"] = err[-600:]
    row["unfit"] = "no partition fits" in err
print(json.dumps(row))
EOF
  local last
  last=$(tail -1 "$file" | python3 -c 'import json,sys; r=json.load(sys.stdin); o=r["out"] or {}
print("%.2f s rc %d, %s triangles%s" % (r["whole_s"], r["rc"], o.get("triangles"), (" " + r.get("err","").strip().splitlines()[-1]) if r.get("err","").strip() else ""))')
  say "  $meta: $last"
}

# pv_digest FILE — sha256 of a per-vertex file, or "none"
pv_digest() { if [ -s "$1" ]; then sha256sum "$1" | cut -c1-16; else echo none; fi; }

check() {
  local spec name model f foot
  for spec in "${CHECK_GRAPHS[@]}"; do
    name=${spec%%=*}
    model=${spec#*=}
    # shellcheck disable=SC2086
    gen "$name" $model
    f="$DATA/$name.tcsr"
    foot=$(footprint "$f")
    say "check $name: footprint $foot bytes"
    local budget scheme config mem pvflag pvfile meta digest
    for budget in "in core" "1/4"; do
      mem=()
      [ "$budget" = "1/4" ] && mem=(--gpu-memory $((foot / 4)))
      local schemes=(auto)
      # shellcheck disable=SC2206 # SCHEMES is a list
      [ "$budget" = "1/4" ] && schemes=($SCHEMES)
      for scheme in "${schemes[@]}"; do
        local configs=(1)
        [ "$NGPU" -ge 2 ] && configs+=("devices $NGPU")
        if [ "$HAVE_MPI" = 1 ]; then
          for n in 2 4; do [ "$n" -le "$NGPU" ] && configs+=("mpi $n"); done
        fi
        for config in "${configs[@]}"; do
          pvflag=()
          pvfile="$SCRATCH/pv.csv"
          rm -f "$pvfile"
          [ "$PV" = 1 ] && pvflag=(--per-vertex "$pvfile")
          meta=$(printf '{"graph":"%s","budget":"%s","scheme":"%s","config":"%s"}' \
            "$name" "$budget" "$scheme" "$config")
          # shellcheck disable=SC2046,SC2086
          record "$OUT/check.jsonl" "$meta" -- $(launch "$config") "$f" --json -q \
            --scheme "$scheme" "${mem[@]}" "${pvflag[@]}" $EXTRA
          digest=$(pv_digest "$pvfile")
          python3 - "$OUT/check.jsonl" "$digest" <<'EOF'
import json, sys
path, digest = sys.argv[1:]
rows = [l for l in open(path) if l.strip()]
last = json.loads(rows[-1]); last["pv"] = digest
rows[-1] = json.dumps(last) + "\n"
open(path, "w").writelines(rows)
EOF
        done
      done
    done
  done
}

scale() {
  local spec name f config g n frac foot
  for frac in $SCALE_FRACTIONS; do
    for spec in "${SCALE_GRAPHS[@]}"; do
      name=${spec%%=*}
      f="$DATA/$name.tcsr"
      # shellcheck disable=SC2086 # the model and its options
      [ -s "$f" ] || gen "$name" ${spec#*=}
      local budget="in core" mem=()
      if [ "$frac" != 1 ]; then
        foot=$(footprint "$f")
        budget="1/$frac"
        mem=(--gpu-memory $((foot / frac)))
      fi
      say "scale $name $budget: $(stat -c %s "$f") bytes"
      for g in $GPUS; do
        local configs=()
        if [ "$g" = 1 ]; then configs=(1); else configs=("devices $g"); fi
        [ "$HAVE_MPI" = 1 ] && configs+=("mpi $g")
        for config in "${configs[@]}"; do
          local trace=()
          [ "$config" = "devices $NGPU" ] && trace=(--trace "$OUT/trace-$name-$frac.json")
          for ((n = 1; n <= REPEAT; n++)); do
            # shellcheck disable=SC2046,SC2086
            record "$OUT/scale.jsonl" "$(printf '{"graph":"%s","budget":"%s","gpus":%d,"config":"%s"}' \
              "$name" "$budget" "$g" "$config")" -- $(launch "$config") "$f" --json -q \
              "${mem[@]}" "${trace[@]}" $EXTRA
          done
        done
      done
    done
  done
}

# measure — the check and the scaling; the scaling graphs are generated one after another
# behind the check
measure() {
  setup
  say "machine: $NGPU GPUs: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader |
    sort | uniq -c | tr '\n' ' ')"
  say "cores $(nproc), memory $(free -g | awk '/Mem:/ {print $2}') GiB, mpirun: $HAVE_MPI"
  nvidia-smi topo -m >"$OUT/topo.txt" 2>&1 || true
  has_part check && : >"$OUT/check.jsonl"
  has_part scale && : >"$OUT/scale.jsonl"
  local bg=""
  if has_part scale; then
    (
      for spec in "${SCALE_GRAPHS[@]}"; do
        # shellcheck disable=SC2086 # the model and its options
        gen "${spec%%=*}" ${spec#*=}
      done
    ) &
    bg=$!
  fi
  has_part check && check
  if [ -n "$bg" ]; then
    wait "$bg"
    scale
  fi
  say "done"
}
if has_part check || has_part scale; then measure; fi

# The tables.
has_part report || exit 0
python3 - "$OUT" <<'EOF' | tee "$OUT/results.md"
import json, os, statistics, sys
out = sys.argv[1]

def rows(name):
    p = os.path.join(out, name)
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []

check = rows("check.jsonl")
if check:
    print("| graph | budget | scheme | configuration | plan | triangles | per-vertex | exact |")
    print("|---|---|---|---|---|---:|---|---|")
    ref, unfit = {}, set()
    for r in check:
        key = (r["graph"], r["budget"], r["scheme"])
        if r["config"] == "1" and r["out"]:
            ref[key] = (r["out"]["triangles"], r.get("pv"))
        if r["config"] == "1" and (r.get("unfit") or "no partition fits" in r.get("err", "")):
            unfit.add(key)  # (one GPU cannot either: the scheme needs more at this budget)
    for r in check:
        o = r["out"] or {}
        st = o.get("stats") or {}
        key = (r["graph"], r["budget"], r["scheme"])
        want = ref.get(key)
        if key in unfit and r["rc"] == 1:
            ok = "does not fit (as on one GPU)"
        elif r["rc"] or not o:
            ok = "FAILED (rc %d)" % r["rc"]
        else:
            ok = ("exact" if want and o.get("triangles") == want[0] and r.get("pv") == want[1]
                  else "DIFFER")
        print("| %s | %s | %s | %s | %s p=%s, %s units | %s | %s | %s |" % (
            r["graph"], r["budget"], r["scheme"], r["config"], st.get("scheme"), st.get("parts"),
            st.get("units"), o.get("triangles"), r.get("pv"), ok))
    print()

scale = rows("scale.jsonl")
if scale:
    print("| graph | budget | GPUs | configuration | whole s | speed-up | pipeline s | kernel busy s "
          "(per worker) | open | image | census | plan | triangles | exact |")
    print("|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    keys = list(dict.fromkeys((r["graph"], r["budget"], r["gpus"], r["config"]) for r in scale))
    def median(g, b, n, c):
        rs = sorted((r for r in scale if (r["graph"], r["budget"], r["gpus"], r["config"]) ==
                     (g, b, n, c) and r["rc"] == 0 and r["out"]), key=lambda r: r["whole_s"])
        return rs[len(rs) // 2] if rs else None
    for g, b, n, c in keys:
        r = median(g, b, n, c)
        if r is None:
            print("| %s | %s | %d | %s | FAILED | | | | | | | | | |" % (g, b, n, c))
            continue
        base = median(g, b, 1, "1")
        o = r["out"]
        t = o.get("timing") or {}
        st = o.get("stats") or {}
        busy = [w.get("busy_s", 0) for w in st.get("workers", [])]
        kern = ", ".join("%.2f" % b for b in busy) if busy else "%.2f" % (
            st.get("kernel", {}).get("busy_s", 0))
        exact = "exact" if base and o["triangles"] == base["out"]["triangles"] else "DIFFER"
        print("| %s | %s | %d | %s | %.2f | %s | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %d | %s |" % (
            g, b, n, c, r["whole_s"], "%.2fx" % (base["whole_s"] / r["whole_s"]) if base else "-",
            t.get("pipeline", 0), kern, t.get("open", 0), t.get("image", 0),
            t.get("census", 0), t.get("plan", 0), o["triangles"], exact))
EOF
