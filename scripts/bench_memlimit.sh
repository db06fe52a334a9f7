#!/usr/bin/env bash
# bench_memlimit.sh — `count` inside cgroup memory limits: each graph unconstrained and under a
# memory limit of 1/2, 1/3 and 1/4 of its file size (cgroup v2 memory.max, or v1
# memory.limit_in_bytes; swap off in the group), the whole command timed by /usr/bin/time
# (elapsed, peak RSS) beside the count's own host_budget_bytes and host_peak_bytes and the group's
# peak. A run may end in the floor error (exit 1, "... need X; Y given"); an OOM kill (137) is a
# failure of the host model and is marked so.
#
# usage: scripts/bench_memlimit.sh [GRAPH.tcsr[@LIMITS]...]
#   (default: Kronecker 25 and 26, generated). LIMITS after a graph: its limits, comma separated,
#   each 1/K (of the file size) or N M (MiB), e.g. k21.tcsr@48M,64M or big.tcsr@1/2.
#   PRESET=cpu: the 2-core CPU set instead: Kronecker 21 (default chunks) at 48 and 64 MiB, and
#   a uniform graph of 2^20 vertices and 16 edges per vertex in 256 KiB chunks (a 58 MiB file)
#   at half its size; BACKEND cpu, TIMEOUT 1800 unless given.
#   BIN        the tristream binary [build/tristream]
#   BACKEND    auto | cpu | cuda [auto]
#   FRACTIONS  divisors of the file size [2 3 4]
#   LIMITS_MIB limits in MiB instead of fractions (e.g. "48 64"); empty = FRACTIONS
#   TIMEOUT    seconds a count may run before it is stopped (SIGTERM; the row says so) [0 = none]
#   THREADS    --threads of the counts [all cores]
#   EXTRA      more `count` arguments, e.g. "--per-vertex bench/out/memlimit/pv.csv" []
#   OUT        folder for generated graphs and the raw results [bench/out/memlimit]
# Needs root and a cgroup memory controller; says so and stops otherwise. Prints a markdown
# table; the groups it makes are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tristream}
PRESET=${PRESET:-}
if [ "$PRESET" = cpu ]; then
  BACKEND=${BACKEND:-cpu}
  TIMEOUT=${TIMEOUT:-1800}
fi
BACKEND=${BACKEND:-auto}
FRACTIONS=${FRACTIONS:-2 3 4}
OUT=${OUT:-bench/out/memlimit}
LIMITS_MIB=${LIMITS_MIB:-}
TIMEOUT=${TIMEOUT:-0}
THREADS=${THREADS:-$(nproc)}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "bench_memlimit: no binary at $BIN (set BIN)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_memlimit: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

# 1. The cgroup flavour: v2 (unified, memory enabled for children of the root) or v1.
[ "$(id -u)" -eq 0 ] || { echo "bench_memlimit: needs root to make memory cgroups" >&2; exit 2; }
MODE=""
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
    echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control && MODE=v2
fi
if [ -z "$MODE" ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then MODE=v1; fi
if [ -z "$MODE" ]; then
  echo "bench_memlimit: no cgroup memory controller can be used here (neither v2 memory.max" \
    "under /sys/fs/cgroup nor v1 /sys/fs/cgroup/memory); nothing measured" >&2
  exit 2
fi
GROUPS_MADE=()
cleanup() {
  local g
  for g in "${GROUPS_MADE[@]:-}"; do
    [ -n "$g" ] && [ -d "$g" ] && rmdir "$g" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

# make_group NAME BYTES — prints the group's folder.
make_group() {
  local dir
  if [ "$MODE" = v2 ]; then
    dir=/sys/fs/cgroup/$1
    mkdir -p "$dir"
    echo "$2" >"$dir/memory.max"
    echo 0 >"$dir/memory.swap.max" 2>/dev/null || true
  else
    local self
    self=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}://p' /proc/self/cgroup | head -1)
    dir=/sys/fs/cgroup/memory$self/$1
    mkdir -p "$dir"
    echo "$2" >"$dir/memory.limit_in_bytes"
    echo "$2" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null || true
  fi
  GROUPS_MADE+=("$dir")
  echo "$dir"
}
group_peak() {
  if [ "$MODE" = v2 ]; then cat "$1/memory.peak" 2>/dev/null || echo 0
  else cat "$1/memory.max_usage_in_bytes" 2>/dev/null || echo 0; fi
}

# 2. The graphs.
GRAPHS=("$@")
if [ "$PRESET" = cpu ] && [ ${#GRAPHS[@]} -eq 0 ]; then
  [ -f "$OUT/kron21.tcsr" ] || "$BIN" generate kronecker --scale 21 -o "$OUT/kron21.tcsr" -q >/dev/null
  if [ ! -f "$OUT/uniform20.tcsr" ]; then
    "$BIN" generate uniform --scale 20 --edge-factor 16 --seed 7 -o "$OUT/uniform20.bin" -q >/dev/null
    "$BIN" convert "$OUT/uniform20.bin" -o "$OUT/uniform20.tcsr" --chunk-size 256K -q >/dev/null
    rm -f "$OUT/uniform20.bin"
  fi
  GRAPHS=("$OUT/kron21.tcsr@48M,64M" "$OUT/uniform20.tcsr@1/2")
elif [ ${#GRAPHS[@]} -eq 0 ]; then
  for s in 25 26; do
    g="$OUT/kron$s.tcsr"
    [ -f "$g" ] || "$BIN" generate kronecker --scale "$s" -o "$g" -q >/dev/null
    GRAPHS+=("$g")
  done
fi

# one GRAPH LIMIT(0 = none) — one count; prints a table row.
RES="$OUT/memlimit.txt"
: >"$RES"
one() {
  local graph=$1 limit=$2 dir="" log="$OUT/run.log" json="$OUT/run.json" status=0
  local prefix=()
  if [ "$limit" -gt 0 ]; then
    dir=$(make_group "tristream-bench-$$-$limit" "$limit")
    prefix=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir")
  fi
  local stop=()
  [ "$TIMEOUT" -gt 0 ] && stop=(timeout -k 30 "$TIMEOUT")
  ${prefix[@]+"${prefix[@]}"} /usr/bin/time -f '%e %M' -o "$OUT/time.txt" \
    ${stop[@]+"${stop[@]}"} "$BIN" count "$graph" --backend "$BACKEND" --threads "$THREADS" \
    --json -q $EXTRA >"$json" 2>"$log" || status=$?
  local peak_group=0
  [ -n "$dir" ] && peak_group=$(group_peak "$dir") && rmdir "$dir" 2>/dev/null || true
  python3 - "$graph" "$limit" "$status" "$OUT/time.txt" "$json" "$log" "$peak_group" "$TIMEOUT" \
    <<'PY' | tee -a "$RES"
import json, os, sys
graph, limit, status, timef, jsonf, logf, gpeak, timeout = sys.argv[1:9]
limit, status, gpeak = int(limit), int(status), int(gpeak)
mib = lambda b: f"{b / 2**20:.0f}"
fsize = os.path.getsize(graph)
t = open(timef).read().split() if os.path.exists(timef) else []
elapsed = t[-2] if len(t) >= 2 else "?"
rss = mib(int(t[-1]) * 1024) if len(t) >= 2 else "?"
frac = f"{mib(limit)} MiB (file / {fsize / limit:.2f})" if limit else "none"
if status == 0:
    d = json.loads(open(jsonf).read())
    plan = d.get("plan") or {}
    result = f"{d['triangles']} ({plan.get('scheme')}, p = {plan.get('parts')})"
    budget, peak = mib(d.get("host_budget_bytes", 0)), mib(d.get("host_peak_bytes", 0))
else:
    err = open(logf).read().strip().splitlines()
    why = "OOM-killed" if status == 137 else (err[-1][:160] if err else "")
    if status == 124: why = f"stopped after {timeout} s (timeout), no count"
    result, budget, peak = f"exit {status}: {why}", "-", "-"
print(f"| {os.path.basename(graph)} ({mib(fsize)} MiB) | {frac} | {result} | {elapsed} | "
      f"{rss} | {budget} | {peak} | {mib(gpeak) if gpeak else '-'} |")
PY
}

echo "cgroup $MODE, backend $BACKEND, $(nproc) cores, --threads $THREADS${EXTRA:+, $EXTRA}, $("$BIN" --version)"
echo
echo "| graph | limit | triangles (plan) or error | elapsed s | peak RSS MiB | host budget MiB | host_peak MiB | group peak MiB |"
echo "|---|---|---|---|---|---|---|---|"
for spec in "${GRAPHS[@]}"; do
  g=${spec%@*}
  size=$(stat -c %s "$g")
  limits=()
  if [ "$spec" != "$g" ]; then
    IFS=, read -r -a items <<<"${spec##*@}"
    for x in "${items[@]}"; do
      case "$x" in
        1/*) limits+=($((size / ${x#1/}))) ;;
        *M) limits+=($((${x%M} << 20))) ;;
        *) echo "bench_memlimit: bad limit '$x' (1/K or N M)" >&2; exit 2 ;;
      esac
    done
  elif [ -n "$LIMITS_MIB" ]; then
    for l in $LIMITS_MIB; do limits+=($((l << 20))); done
  else
    for f in $FRACTIONS; do limits+=($((size / f))); done
  fi
  one "$g" 0
  for l in "${limits[@]}"; do one "$g" "$l"; done
done
