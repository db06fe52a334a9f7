#!/usr/bin/env bash
# run_pytest.sh PYTHON BUILD_DIR — runs the Python tests against the module built in BUILD_DIR
# (BUILD/python/tristream); exits 77 (CTest: skipped) with a message when pytest, NumPy or
# networkx is missing (scripts/deps.sh's tristream_install_python_deps installs them).
set -euo pipefail
py=$1 build=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c "import pytest, numpy, networkx" 2>/dev/null; then
  echo "skipped: the Python tests need pytest, numpy and networkx (scripts/deps.sh installs them)"
  exit 77
fi
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" -m pytest -q -p no:cacheprovider "$here"
