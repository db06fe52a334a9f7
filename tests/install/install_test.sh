#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR [GENERATOR [CXX]] — installs the build into a temporary
# prefix, checks the installed files, then builds the example of docs/library.md against it with
# find_package (shared and static library) and with pkg-config, and runs each: the example must
# print the triangles of a 4-clique (4) and of the karate club graph (45). The installed bash
# completion is exercised too.
set -euo pipefail
build=$1 src=$2 gen=${3:-} cxx=${4:-c++}
work=$(mktemp -d "${TMPDIR:-/tmp}/tristream-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

# 1. Install and check the installed tree.
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(ls -d "$prefix"/lib*/cmake/tristream)")
libdir=$(dirname "$libdir")
for f in include/tristream/tristream.hpp include/tristream/error.hpp bin/tristream \
  share/man/man1/tristream.1 share/bash-completion/completions/tristream; do
  [ -e "$prefix/$f" ] || { echo "missing $f"; exit 1; }
done
for f in libtristream.so libtristream.a cmake/tristream/tristreamConfig.cmake \
  cmake/tristream/tristreamTargets.cmake pkgconfig/tristream.pc; do
  [ -e "$libdir/$f" ] || { echo "missing $libdir/$f"; exit 1; }
done
"$prefix/bin/tristream" --version
# The installed bash completion completes commands, options and option values.
complete_words() {  # complete_words WORD...: prints the completions of the last word
  (
    # shellcheck disable=SC1091
    . "$prefix/share/bash-completion/completions/tristream"
    COMP_WORDS=(tristream "$@")
    COMP_CWORD=$#
    _tristream
    echo "${COMPREPLY[*]}"
  )
}
[ "$(complete_words co)" = "convert count" ] || { echo "completion: commands"; exit 1; }
[ "$(complete_words count --backend c)" = "cpu cuda" ] || { echo "completion: values"; exit 1; }
[ "$(complete_words count --per)" = "--per-vertex" ] || { echo "completion: options"; exit 1; }

# 2. The example: the first ```cpp block of docs/library.md.
awk '/^```cpp/ { if (!done) on = 1; next } /^```/ { if (on) done = 1; on = 0; next } on' \
  "$src/docs/library.md" >"$work/example.cpp"
[ -s "$work/example.cpp" ] || { echo "no cpp example in docs/library.md"; exit 1; }
graph=$src/tests/data/karate.el
check() {  # check PROGRAM: runs it on the karate club graph and checks both counts
  local out
  out=$("$1" "$graph")
  echo "$out"
  grep -qx "triangles 4" <<<"$out" || { echo "$1: wrong 4-clique count"; exit 1; }
  grep -qx "$graph: 45 triangles" <<<"$out" || { echo "$1: wrong karate count"; exit 1; }
}

# 3. find_package(tristream): shared and static.
gen_args=()
[ -n "$gen" ] && gen_args=(-G "$gen")
cmake -S "$src/tests/install/consumer" -B "$work/consumer" "${gen_args[@]}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCONSUMER_SOURCE="$work/example.cpp" >/dev/null
cmake --build "$work/consumer" >/dev/null
check "$work/consumer/consumer_shared"
check "$work/consumer/consumer_static"

# 4. pkg-config, the shared library found through the rpath.
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
"$cxx" "$work/example.cpp" -o "$work/pc_example" $(pkg-config --cflags --libs tristream) \
  -Wl,-rpath,"$libdir"
check "$work/pc_example"
echo "install test passed"
