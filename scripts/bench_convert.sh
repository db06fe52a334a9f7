#!/usr/bin/env bash
# bench_convert.sh — the converter benchmark: generates a Kronecker graph (Graph500 parameters,
# edge factor 16) as binary uint64 pairs (.bin) and as a text edge list (.el), times
# `tristream convert` on each and prints a table. Targets on the 16-core GPU machine at scale 26
# (about 1.07 billion generated edges): binary under 60 s, text under 120 s.
#
# usage: scripts/bench_convert.sh [SCALE]             (default: 26; try 18..22 on a laptop)
#   BIN           the tristream binary [build/tristream; built with CMake + Ninja if missing]
#   WORK          work folder for the inputs and outputs [bench/out/convert]
#   THREADS       worker threads [all cores]
#   MEMORY_LIMIT  also convert the text input out of core under this limit (e.g. 4G) [off]
#   KEEP          1 = keep the generated inputs [0]
# Needs free disk of about 40 bytes per generated edge (scale 26: about 40 GiB).
# Writes WORK/results.md (the table) and WORK/results.jsonl (the converter's JSON summaries).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-26}
BIN=${BIN:-build/tristream}
WORK=${WORK:-bench/out/convert}
THREADS=${THREADS:-0}
MEMORY_LIMIT=${MEMORY_LIMIT:-}
KEEP=${KEEP:-0}

if [ ! -x "$BIN" ]; then
  echo "bench_convert: building $BIN" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRISTREAM_BUILD_TESTS=OFF >/dev/null
  ninja -C build tristream >/dev/null
  BIN=build/tristream
fi
mkdir -p "$WORK"
RES_JSON="$WORK/results.jsonl"
RES_MD="$WORK/results.md"
: >"$RES_JSON"
cores=$(nproc)
tflag=()
[ "$THREADS" = 0 ] || tflag=(--threads "$THREADS")

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

rows=()
# convert_one LABEL INPUT TARGET_S [extra args] — times one conversion, appends a table row
convert_one() {
  local label=$1 input=$2 target=$3
  shift 3
  local out="$WORK/kron$SCALE.tcsr" t0 t1 json wall rss="" timefile="$WORK/time.txt"
  rm -f "$out"
  sync
  t0=$(now)
  if [ -x /usr/bin/time ]; then
    json=$(/usr/bin/time -f %M -o "$timefile" "$BIN" convert "$input" -o "$out" --quiet --json \
      --tmp-dir "$WORK" "${tflag[@]}" "$@")
    rss=$(( $(tail -n 1 "$timefile") / 1024 ))
  else
    json=$("$BIN" convert "$input" -o "$out" --quiet --json --tmp-dir "$WORK" "${tflag[@]}" "$@")
  fi
  t1=$(now)
  wall=$(elapsed "$t0" "$t1")
  echo "$json" >>"$RES_JSON"
  local edges secs mode verdict
  edges=$(field "$json" input_edges)
  secs=$(field "$json" seconds)
  mode=$([ "$(field "$json" out_of_core)" = True ] && echo "out of core" || echo "in memory")
  if [ "$target" = - ]; then
    verdict="-"
  else
    verdict="< $target s: $(python3 -c "import sys; print('yes' if float(sys.argv[1]) < float(sys.argv[2]) else 'NO')" "$wall" "$target")"
  fi
  rows+=("| $label | $(du -h "$input" | cut -f1) | $edges | $(field "$json" edges) | $wall | $(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]) / 1e6:.1f}')" "$edges" "$wall") | ${rss:-?} | $mode | $verdict |")
  echo "bench_convert: $label: $wall s ($mode)" >&2
  rm -f "$out"
}

gen() {
  local path=$1
  [ -f "$path" ] && return 0
  local t0 t1
  t0=$(now)
  "$BIN" generate kronecker --scale "$SCALE" -o "$path" "${tflag[@]}" >/dev/null
  t1=$(now)
  echo "bench_convert: generated $path in $(elapsed "$t0" "$t1") s" >&2
}

gen "$WORK/kron$SCALE.bin"
convert_one "binary (.bin, uint64 pairs)" "$WORK/kron$SCALE.bin" 60
[ "$KEEP" = 1 ] || rm -f "$WORK/kron$SCALE.bin"
gen "$WORK/kron$SCALE.el"
convert_one "text (.el)" "$WORK/kron$SCALE.el" 120
if [ -n "$MEMORY_LIMIT" ]; then
  convert_one "text, --memory-limit $MEMORY_LIMIT" "$WORK/kron$SCALE.el" - --memory-limit "$MEMORY_LIMIT"
fi
[ "$KEEP" = 1 ] || rm -f "$WORK/kron$SCALE.el"

{
  echo "Kronecker scale $SCALE (edge factor 16), $cores cores, $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "command: scripts/bench_convert.sh $SCALE"
  echo
  echo "| input | size | input edges | edges after cleaning | seconds | M edges/s | peak RSS MiB | mode | target |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$RES_MD"
