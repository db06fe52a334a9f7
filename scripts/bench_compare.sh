#!/usr/bin/env bash
# bench_compare.sh — two tristream binaries side by side on one machine, runs interleaved so that
# drift of a shared machine hits both alike: the whole `count` command (process start to exit),
# its pipeline wall time and overlap, in core and at fractions of the in-core device footprint.
#
# usage: BASE=old/tristream NEW=build/tristream scripts/bench_compare.sh [SCALE|NAME=MODEL...]
#   (default 25; SCALE is a Kronecker scale, NAME=MODEL a `tristream generate` model and its
#   options, e.g. "hub24=hub --scale 24 --hubs 64 --hub-share 0.5 --edge-factor 8")
#   FRACTIONS  divisors of the in-core footprint; 1 = in core [1 4]
#   REPEAT     runs per binary and configuration (interleaved) [5]
#   OUT        output folder [bench/out/compare]
#   BACKEND    cuda | cpu [cuda]
# Prints one table row per configuration: medians of whole-command seconds, pipeline wall and
# overlap for each binary, and NEW/BASE; every count is checked equal between the two.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:?set BASE to the baseline tristream binary}
NEW=${NEW:-build/tristream}
FRACTIONS=${FRACTIONS:-1 4}
REPEAT=${REPEAT:-5}
OUT=${OUT:-bench/out/compare}
BACKEND=${BACKEND:-cuda}
SCALES=("$@")
[ ${#SCALES[@]} -gt 0 ] || SCALES=(25)
mkdir -p "$OUT"
RES="$OUT/compare.jsonl"
: >"$RES"

# one LABEL BIN ARGS... — one count; appends {label, bin, elapsed_s, json} to results.
one() {
  local label=$1 which=$2 bin=$3
  shift 3
  local t0 t1 out
  t0=$(date +%s.%N)
  out=$("$bin" "$@" --json)
  t1=$(date +%s.%N)
  python3 - "$label" "$which" "$t0" "$t1" "$out" >>"$RES" <<'EOF'
import json, sys
d = json.loads(sys.argv[5])
s = d.get("stats", {})
print(json.dumps({"label": sys.argv[1], "bin": sys.argv[2],
                  "elapsed_s": float(sys.argv[4]) - float(sys.argv[3]),
                  "wall_s": s.get("wall_s"), "overlap": s.get("overlap"),
                  "triangles": d.get("triangles"), "parts": s.get("parts"),
                  "kernel_s": s.get("kernel", {}).get("busy_s")}))
EOF
}

for S in "${SCALES[@]}"; do
  if [[ $S == *=* ]]; then NAME=${S%%=*} MODEL=${S#*=}; else NAME=kron$S MODEL="kronecker --scale $S"; fi
  F="$OUT/$NAME.tcsr"
  # made by BASE, so that both read it (a newer format may be unknown to BASE); NEW then takes
  # the census by a pass as BASE does
  # shellcheck disable=SC2086
  [ -s "$F" ] || "$BASE" generate $MODEL -o "$F" -q
  FOOT=$("$NEW" plan "$F" --parts 1 --gpu-memory 1024T --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["device_bytes"])')
  for frac in $FRACTIONS; do
    if [ "$frac" = 1 ]; then args=(--parts 1); else args=(--gpu-memory $((FOOT / frac))); fi
    for _ in $(seq "$REPEAT"); do
      one "$NAME 1/$frac" base "$BASE" count "$F" --backend "$BACKEND" "${args[@]}"
      one "$NAME 1/$frac" new "$NEW" count "$F" --backend "$BACKEND" "${args[@]}"
    done
  done
done

python3 - "$RES" <<'EOF' | tee "$OUT/compare.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
labels = list(dict.fromkeys(r["label"] for r in rows))
print("| graph, budget | base whole s | new whole s | new/base | base wall s | new wall s | "
      "base overlap | new overlap | counts |")
print("|---|---|---|---|---|---|---|---|---|")
med = lambda xs: statistics.median(xs) if xs else float("nan")
for lab in labels:
    b = [r for r in rows if r["label"] == lab and r["bin"] == "base"]
    n = [r for r in rows if r["label"] == lab and r["bin"] == "new"]
    tri = {r["triangles"] for r in b + n}
    ov = lambda rs: "%.1f%%" % (100 * med([r["overlap"] for r in rs if r["overlap"] is not None]))
    print("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %s |" % (
        lab, med([r["elapsed_s"] for r in b]), med([r["elapsed_s"] for r in n]),
        med([r["elapsed_s"] for r in n]) / med([r["elapsed_s"] for r in b]),
        med([r["wall_s"] for r in b]), med([r["wall_s"] for r in n]), ov(b), ov(n),
        "equal" if len(tri) == 1 else "DIFFER %s" % sorted(tri)))
EOF
