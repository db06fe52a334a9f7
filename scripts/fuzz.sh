#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer targets (fuzz/, clang with ASan and UBSan, installing clang when
# it is missing), writes their seed corpora and runs each target for SECONDS [60].
#   scripts/fuzz.sh [SECONDS]
#   FUZZ_BUILD_DIR  build directory [build-fuzz]; the corpora grow in $FUZZ_BUILD_DIR/corpus/
#                   across runs, findings land in $FUZZ_BUILD_DIR/findings/
#   FUZZ_TARGETS    the targets to run [fuzz_tcsr fuzz_convert]
#   FUZZ_CMAKE_ARGS extra CMake arguments for the fuzz build
#   FUZZ_TMPDIR     where fuzz_convert writes its outputs [/dev/shm when writable, else $TMPDIR or
#                   /tmp]: the writer fsyncs every file, which costs little in memory
# Exit status 0 when no target found anything; otherwise 1, with the reproducer's path printed
# (replay it with `$FUZZ_BUILD_DIR/fuzz/TARGET FILE`).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
targets=${FUZZ_TARGETS:-fuzz_tcsr fuzz_convert}
. scripts/deps.sh
tristream_install_deps
tristream_install_fuzz_deps

# 1. Configure and build (only what the fuzzers need).
# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DTRISTREAM_FUZZ=ON -DTRISTREAM_ENABLE_CUDA=OFF -DTRISTREAM_BUILD_TESTS=OFF \
  -DTRISTREAM_BUILD_BENCH=OFF ${FUZZ_CMAKE_ARGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target make_seeds $targets

# 2. Seeds (regenerated each run; libFuzzer keeps what it learns in corpus/).
rm -rf "$build/seeds"
"$build/fuzz/make_seeds" "$build/seeds"
mkdir -p "$build/findings"

# 3. Run each target for the given time.
if [ -z "${FUZZ_TMPDIR:-}" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then FUZZ_TMPDIR=/dev/shm; else FUZZ_TMPDIR=${TMPDIR:-/tmp}; fi
fi
status=0
for t in $targets; do
  case $t in
    fuzz_tcsr) seeds=tcsr max_len=16384 ;;
    fuzz_convert) seeds=convert max_len=4096 ;;
    *) echo "fuzz.sh: unknown target $t" >&2; exit 1 ;;
  esac
  mkdir -p "$build/corpus/$t"
  echo "fuzz.sh: $t for ${seconds}s" >&2
  if ! TMPDIR=$FUZZ_TMPDIR "$build/fuzz/$t" "$build/corpus/$t" "$build/seeds/$seeds" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=2560 \
    -artifact_prefix="$build/findings/$t-" -print_final_stats=1 2>"$build/findings/$t.log"; then
    echo "fuzz.sh: $t found a problem; see $build/findings/$t.log and the file it names" >&2
    tail -n 40 "$build/findings/$t.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units' "$build/findings/$t.log" | sed "s/^/fuzz.sh: $t: /" >&2 || true
  fi
done
exit $status
