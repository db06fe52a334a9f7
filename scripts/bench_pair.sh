#!/usr/bin/env bash
# bench_pair.sh — the pair scheme (--scheme pair) against the planner's own choice (auto), the
# whole `count` command out of core: runs scripts/bench_e2e.sh once per scheme on the same
# graphs (generated once, shared), then prints per graph and budget the whole command, the
# kernels' busy seconds, the units, p, the bytes uploaded and the overlap of each scheme. The
# figures that decide whether `auto` should consider pair: its kernel seconds against auto's
# (pair does the in-core kernel work, auto's hash and range plans visit rows p times), its
# uploads (each unit holds two whole row parts beside its A) and the overlap.
#
# usage: scripts/bench_pair.sh [NAME=MODEL...]   (default: Kronecker 24 and the hub graph of
#        scale 24; see bench_e2e.sh)
#   OUT        output folder [bench/out/pair]; each scheme's bench_e2e output in OUT/SCHEME
#   SCHEMES    schemes compared [auto pair]
#   DATA, BIN, FLOOR, REPEAT, FRACTIONS, EXTRA  as for bench_e2e.sh (FRACTIONS default 4 8)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/pair}
DATA=${DATA:-bench/out/e2e/graphs}
SCHEMES=${SCHEMES:-auto pair}
GRAPHS=("$@")
if [ ${#GRAPHS[@]} -eq 0 ]; then
  GRAPHS=("kron24=kronecker --scale 24"
    "hub24=hub --scale 24 --hubs 64 --hub-share 0.5 --edge-factor 8")
fi
mkdir -p "$OUT" "$DATA"
for s in $SCHEMES; do
  echo "== scheme $s" >&2
  OUT="$OUT/$s" DATA="$DATA" EXTRA="--scheme $s ${EXTRA:-}" scripts/bench_e2e.sh "${GRAPHS[@]}" \
    >/dev/null
done
# shellcheck disable=SC2086
python3 - "$OUT" $SCHEMES <<'EOF' | tee "$OUT/results.md"
import json, sys
out, schemes = sys.argv[1], sys.argv[2:]
rows = {}
for s in schemes:
    for line in open("%s/%s/runs.jsonl" % (out, s)):
        if line.strip():
            r = json.loads(line)
            if r["kind"] == "count":
                rows.setdefault((r["graph"], r["label"], s), []).append(r)
print("| graph | budget | scheme | whole s (median) | kernel s | units | p | uploaded GB "
      "| overlap | triangles |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (g, label, s) in sorted(rows, key=lambda k: (k[0], k[1] != "in core", k[1], k[2])):
    rs = sorted(rows[(g, label, s)], key=lambda r: r["whole_s"])
    r = rs[len(rs) // 2]
    o, st = r["out"], r["out"]["stats"]
    print("| %s | %s | %s | %.3f | %.3f | %d | %d | %.2f | %.0f%% | %s |" % (
        g, label, s, r["whole_s"], st.get("kernel", {}).get("busy_s", 0), st.get("units", 0),
        st.get("parts", 0), st.get("upload", {}).get("bytes", 0) / 1e9,
        100 * st.get("overlap", 0), o.get("triangles")))
EOF
