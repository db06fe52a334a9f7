#!/usr/bin/env bash
# gpu_e2e_check.sh — on a GPU machine, checks the whole-command work for exactness: each graph
# counted in core (its unit streamed through the pinned ring, the kernels warmed up on the
# start-up thread), with the in-core unit streamed in pieces (TRISTREAM_IN_CORE_STAGING=stream), without the
# warm-up (TRISTREAM_NO_WARMUP=1), out of core at 1/4 and 1/8 of the footprint (the stored
# census), and on the CPU: every triangle count must agree. Prints each run's `timing`.
#
# usage: scripts/gpu_e2e_check.sh   (BIN [build/tristream], OUT [bench/out/gpu_e2e_check],
#        SPECS: NAME=MODEL entries separated by ';' [Kronecker 22, uniform 21, a hub graph])
# Exit status 0 when every count agrees, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tristream}
OUT=${OUT:-bench/out/gpu_e2e_check}
mkdir -p "$OUT"
[ -x "$BIN" ] || {
  echo "gpu_e2e_check: $BIN not found (build first, or set BIN)" >&2
  exit 1
}
status=0
# count LABEL FILE [ARGS...] — prints the label, the triangles and the timing; the triangles go
# to $OUT/last.
count() {
  local label=$1 file=$2
  shift 2
  "$BIN" count "$file" --json "$@" >"$OUT/out.json"
  python3 - "$label" "$OUT/out.json" "$OUT/last" <<'EOF'
import json, sys
label, path, last = sys.argv[1:]
o = json.loads(open(path).read().strip().splitlines()[-1])
t = o.get("timing", {})
print("  %-22s triangles %-14s seconds %.3f  kernel %.4f  %s" % (
    label, o["triangles"], o["seconds"], o["stats"]["kernel"]["busy_s"],
    " ".join("%s %.3f" % (k, v) for k, v in t.items() if isinstance(v, float))),
    t.get("census_source"))
open(last, "w").write(str(o["triangles"]))
EOF
}
# (in-core footprints above the 128 MiB pieces of 16 threads, so that the in-core unit streams)
SPECS=${SPECS:-"kron22=kronecker --scale 22;unif21=uniform --scale 21;hub20=hub --scale 20 --hubs 64 --hub-share 0.5 --edge-factor 8"}
IFS=';' read -r -a specs <<<"$SPECS"
for spec in "${specs[@]}"; do
  name=${spec%%=*}
  model=${spec#*=}
  file="$OUT/$name.tcsr"
  # shellcheck disable=SC2086
  [ -f "$file" ] || "$BIN" generate $model -o "$file" -q >/dev/null
  echo "== $name"
  count "in core" "$file"
  want=$(cat "$OUT/last")
  footprint=$("$BIN" count "$file" --json | python3 -c \
    "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['plan']['device_bytes'])")
  runs=("streamed pieces|TRISTREAM_IN_CORE_STAGING=stream|"
    "no warm-up|TRISTREAM_NO_WARMUP=1|"
    "out of core 1/4||--gpu-memory $((footprint / 4))"
    "out of core 1/8||--gpu-memory $((footprint / 8))"
    "per-vertex in core||--per-vertex $OUT/pv.csv"
    "cpu||--backend cpu")
  for r in "${runs[@]}"; do
    IFS='|' read -r label env args <<<"$r"
    if [ -n "$env" ]; then export "${env?}"; fi
    # shellcheck disable=SC2086
    count "$label" "$file" $args
    if [ -n "$env" ]; then unset "${env%%=*}"; fi
    got=$(cat "$OUT/last")
    if [ "$got" != "$want" ]; then
      echo "  MISMATCH: $label counted $got, in core $want" >&2
      status=1
    fi
  done
done
[ $status = 0 ] && echo "gpu_e2e_check: every count agrees" || echo "gpu_e2e_check: MISMATCHES" >&2
exit $status
