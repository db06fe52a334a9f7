# deps.sh — sourced by run.sh and test.sh: installs what the build needs when it is missing,
# through apt-get (Debian/Ubuntu). Checks files and tools, not package names, so machines that
# already have everything (such as the GPU machine, which has no network) install nothing.
tristream_install_deps() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  [ -d /usr/include/boost/iostreams ] || missing+=(libboost-iostreams-dev)
  [ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
  [ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
  [ -f /usr/include/bzlib.h ] || missing+=(libbz2-dev)
  [ -f /usr/include/lzma.h ] || missing+=(liblzma-dev)
  [ -d /usr/include/gtest ] || missing+=(libgtest-dev)
  [ -d /usr/include/benchmark ] || missing+=(libbenchmark-dev)
  command -v zstd >/dev/null 2>&1 || missing+=(zstd)
  command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
  command -v bzip2 >/dev/null 2>&1 || missing+=(bzip2)
  command -v gzip >/dev/null 2>&1 || missing+=(gzip)
  command -v clang-format >/dev/null 2>&1 || missing+=(clang-format)
  # the per-vertex output is checked against networkx (tests/cli/per_vertex_networkx_test.py)
  python3 -c 'import networkx' >/dev/null 2>&1 || missing+=(python3-networkx)
  # MPI ranks (TRISTREAM_ENABLE_MPI; tests/mpi/ runs mpirun)
  command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
  command -v mpicxx >/dev/null 2>&1 || missing+=(libopenmpi-dev)
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  # de-duplicate
  local uniq
  uniq=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  echo "tristream: installing missing packages: $uniq" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $uniq >&2
}

# Adds the CUDA toolkit to PATH when it is installed but not on PATH.
tristream_find_cuda() {
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
}

# The Python package's build and test tools, from PyPI through pip (python/pyproject.toml):
# nanobind and scikit-build-core build the extension, NumPy, networkx and pytest run its tests.
# Returns non-zero (and prints why) when pip cannot install them, e.g. on a machine without
# network; the Python tests then skip.
tristream_install_python_deps() {
  local py=${PYTHON:-python3}
  command -v "$py" >/dev/null 2>&1 || { echo "tristream: no $py" >&2; return 1; }
  local missing=()
  local mod pkg
  for pair in nanobind:nanobind scikit_build_core:scikit-build-core numpy:numpy \
    networkx:networkx pytest:pytest; do
    mod=${pair%%:*}
    pkg=${pair#*:}
    "$py" -c "import $mod" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  echo "tristream: installing Python packages: ${missing[*]}" >&2
  "$py" -m pip install --quiet --timeout 20 --retries 1 "${missing[@]}" >&2
}

# For scripts/fuzz.sh only: clang with its libFuzzer and sanitizer runtimes.
tristream_install_fuzz_deps() {
  if command -v clang++ >/dev/null 2>&1 &&
    [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ]; then
    return 0
  fi
  echo "tristream: installing clang for fuzzing" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends clang >&2
  # Newer Debian/Ubuntu ship the runtimes (libFuzzer included) in a separate package.
  local rt
  rt=$(apt-cache search --names-only '^libclang-rt-[0-9]+-dev$' 2>/dev/null | sort -V | tail -1 | cut -d' ' -f1)
  if [ -n "$rt" ]; then $sudo apt-get install -y -qq --no-install-recommends "$rt" >&2; fi
}
