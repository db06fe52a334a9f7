#!/usr/bin/env bash
# bench_convert.sh — the converter benchmark: generates Kronecker graphs (Graph500 parameters) as
# binary uint64 pairs and as text edge lists, times whole `tristream convert` commands on them and
# prints a markdown table (seconds, input edges per second, peak RSS) with the per-stage seconds
# of every run (the converter's stage clock, TRISTREAM_CONVERT_TIMING=1) below it.
#
# Rows (scale 26, edge factor 16: 1.07 billion generated edges; targets for a 16-core machine):
#   binary file, in memory                                  <= 6 s
#   text file, in memory                                    <= 8 s
#   text file, --memory-limit $MEMORY_LIMIT (out of core)   <= 25 s
#   $BIG_FACTOR * 2^scale edges as bin64 through `cat file |` (standard input), in memory:
#     at least 100 M edges/s (edge factor 27: 1.8 billion edges)
#
# usage: scripts/bench_convert.sh [SCALE]       (default 26; 20..22 on a laptop)
#   BIN           the tristream binary [build/tristream; built with CMake + Ninja if missing]
#   BASE_BIN      a second binary (e.g. the previous version) run right after BIN on every row,
#                 for a before/after table from the same machine [none]
#   ARGS          extra `convert` arguments for BIN, e.g. "--device 0" [none]
#   BASE_ARGS     extra `convert` arguments for BASE_BIN, e.g. "--device cpu" with BASE_BIN=BIN
#                 for the GPU's sorts against the host's from one binary [none]
#   WORK          work folder for the inputs, outputs and spill files [bench/out/convert]
#   THREADS       worker threads [all cores]
#   MEMORY_LIMIT  the out-of-core row's limit [8G]; "off" skips the row
#   BIG_FACTOR    edge factor of the standard-input row [27]; 0 skips the row
#   REPS          runs of every row and binary (the table shows each) [1]
#   ROWS          which rows: any of "bin text limit stdin" [all four]
#   KEEP_INPUTS   1 keeps the generated inputs in WORK for the next invocation (one row per
#                 invocation, e.g. under a time limit per command) [0: each is removed after use]
# Every timed run reads its input from the page cache (the input is read once before it, untimed);
# the standard-input row also times the pipe alone (`cat FILE` into a reader of a 1 MiB pipe).
# Disk: one input at a time is kept (scale 26: text 18 GB, binary 17 GB, the bin64 input of
# edge factor 27 29 GB), plus the output and, out of core, spill files: the runs (8 bytes per
# unique edge; 16 for ids of 2^32 or more) with the merged stream (8), then the stream with the
# row buckets (8): about 38 GB at most at scale 26 under an 8G limit. Writes WORK/results.md and WORK/stages.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-26}
BIN=${BIN:-build/tristream}
BASE_BIN=${BASE_BIN:-}
ARGS=${ARGS:-}
BASE_ARGS=${BASE_ARGS:-}
WORK=${WORK:-bench/out/convert}
THREADS=${THREADS:-0}
MEMORY_LIMIT=${MEMORY_LIMIT:-8G}
BIG_FACTOR=${BIG_FACTOR:-27}
REPS=${REPS:-1}
ROWS=${ROWS:-bin text limit stdin}
KEEP_INPUTS=${KEEP_INPUTS:-0}
want() { case " $ROWS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if [ ! -x "$BIN" ]; then
  echo "bench_convert: building $BIN" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRISTREAM_BUILD_TESTS=OFF >/dev/null
  ninja -C build tristream >/dev/null
  BIN=build/tristream
fi
mkdir -p "$WORK"
RES_MD="$WORK/results.md"
STAGES="$WORK/stages.txt"
: >"$STAGES"
tflag=()
[ "$THREADS" = 0 ] || tflag=(--threads "$THREADS")
bins=("$BIN")
bin_args=("$ARGS")
[ -z "$BASE_BIN" ] || { bins+=("$BASE_BIN"); bin_args+=("$BASE_ARGS"); }

now() { date +%s.%N; }
calc() { python3 -c "import sys; print(format(eval(sys.argv[1]), sys.argv[2]))" "$1" "$2"; }

rows=()
# convert_one LABEL INPUT TARGET FEED [extra args] — times one whole command per binary and rep.
#   INPUT is the file; FEED "file" converts it by name, "cat" pipes it to standard input.
#   TARGET: "s<=X" (seconds) or "rate>=X" (M edges/s) or "-".
convert_one() {
  local label=$1 input=$2 target=$3 feed=$4
  shift 4
  local size
  size=$(du -h "$input" | cut -f1)
  for rep in $(seq "$REPS"); do
    for bi in "${!bins[@]}"; do
      local bin=${bins[$bi]} extra=()
      read -r -a extra <<<"${bin_args[$bi]}"
      local out="$WORK/out.tcsr" timefile="$WORK/time.txt" errfile="$WORK/err.txt" json t0 t1
      rm -f "$out"
      # The input from the page cache, as a file just written or read is: what is timed is the
      # converter, not the disk under the input (a run right after the inputs of the rows before
      # were deleted may find part of it evicted).
      cat "$input" >/dev/null
      sync
      t0=$(now)
      if [ "$feed" = cat ]; then
        json=$(cat "$input" | TRISTREAM_CONVERT_TIMING=1 /usr/bin/time -f %M -o "$timefile" \
          "$bin" convert - -o "$out" --quiet --json --tmp-dir "$WORK" "${tflag[@]}" "${extra[@]}" "$@" \
          2>"$errfile")
      else
        json=$(TRISTREAM_CONVERT_TIMING=1 /usr/bin/time -f %M -o "$timefile" \
          "$bin" convert "$input" -o "$out" --quiet --json --tmp-dir "$WORK" "${tflag[@]}" "${extra[@]}" "$@" \
          2>"$errfile")
      fi
      t1=$(now)
      local wall edges rss mode rate verdict
      wall=$(calc "$t1 - $t0" .2f)
      edges=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['input_edges'])" "$json")
      mode=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(('out of core' if d['out_of_core'] else 'in memory') + ', sorted on ' + d.get('sorter', 'host'))" "$json")
      [ -z "${bin_args[$bi]}" ] || bin="$bin ${bin_args[$bi]}"
      rss=$(calc "$(tail -n 1 "$timefile") / 1048576" .1f)
      rate=$(calc "$edges / $wall / 1e6" .1f)
      case "$target" in
        s\<=*) verdict="<= ${target#s<=} s: $(calc "$wall <= ${target#s<=}" '')" ;;
        rate\>=*) verdict=">= ${target#rate>=} M/s: $(calc "$rate >= ${target#rate>=}" '')" ;;
        *) verdict="-" ;;
      esac
      rows+=("| $label | $bin | $size | $edges | $wall | $rate | $rss | $mode | $verdict |")
      { echo "== $label ($bin, run $rep): $wall s"; grep '^\[convert\]' "$errfile" || true; } >>"$STAGES"
      echo "bench_convert: $label ($bin): $wall s, $rate M edges/s, peak RSS $rss GiB ($mode)" >&2
      rm -f "$out"
    done
  done
}

drop() {  # drop PATH — removes a used input unless KEEP_INPUTS=1
  [ "$KEEP_INPUTS" = 1 ] || rm -f "$1"
}

gen() {  # gen PATH [generate args] — a Kronecker graph of this scale, unless PATH exists
  local path=$1
  shift
  [ -f "$path" ] && return 0
  local t0
  t0=$(now)
  "$BIN" generate kronecker --scale "$SCALE" -o "$path" --quiet "${tflag[@]}" "$@" >/dev/null
  echo "bench_convert: generated $path in $(calc "$(now) - $t0" .1f) s" >&2
}

# 1. Binary file.
if want bin; then
  gen "$WORK/kron$SCALE.bin"
  convert_one "binary file (.bin)" "$WORK/kron$SCALE.bin" "s<=6" file
  drop "$WORK/kron$SCALE.bin"
fi
# 2. Text file, in memory and out of core.
if want text || want limit; then
  gen "$WORK/kron$SCALE.el"
  want text && convert_one "text file (.el)" "$WORK/kron$SCALE.el" "s<=8" file
  if want limit && [ "$MEMORY_LIMIT" != off ]; then
    convert_one "text file, --memory-limit $MEMORY_LIMIT" "$WORK/kron$SCALE.el" "s<=25" file \
      --memory-limit "$MEMORY_LIMIT"
  fi
  drop "$WORK/kron$SCALE.el"
fi
# 3. A larger bin64 input on standard input.
if want stdin && [ "$BIG_FACTOR" != 0 ]; then
  gen "$WORK/big$SCALE.bin" --edge-factor "$BIG_FACTOR"
  # The pipe's ceiling, twice: `cat` into a reader that only reads, from a pipe of 1 MiB as the
  # converter asks for (dd would keep the default 64 KiB, a slower pipe), into one 8 MiB buffer.
  for rep in 1 2; do
    cat "$WORK/big$SCALE.bin" >/dev/null
    t0=$(now)
    cat "$WORK/big$SCALE.bin" | python3 -c '
import fcntl, os
try:
    fcntl.fcntl(0, 1031, 1 << 20)  # F_SETPIPE_SZ
except OSError:
    pass
buf = memoryview(bytearray(8 << 20))
while os.readv(0, [buf]):
    pass'
    pipe_s=$(calc "$(now) - $t0" .2f)
    echo "bench_convert: the pipe alone (a reader of a 1 MiB pipe): $pipe_s s" >&2
    echo "== the pipe alone (cat FILE | a reader of a 1 MiB pipe), run $rep: $pipe_s s" >>"$STAGES"
  done
  convert_one "bin64 through cat (edge factor $BIG_FACTOR)" "$WORK/big$SCALE.bin" "rate>=100" cat \
    --format bin64
  drop "$WORK/big$SCALE.bin"
fi

{
  echo "Kronecker scale $SCALE, $(nproc) cores, $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "command: scripts/bench_convert.sh $SCALE (whole commands; peak RSS from /usr/bin/time)"
  echo
  echo "| input | binary | size | input edges | seconds | M edges/s | peak RSS GiB | mode | target |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Seconds per stage (TRISTREAM_CONVERT_TIMING=1):"
  echo
  echo '```'
  cat "$STAGES"
  echo '```'
} | tee "$RES_MD"
