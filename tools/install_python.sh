#!/usr/bin/env bash
# Installs the advbo Python package into a venv, checking first what a bare `pip install`
# would only find out after minutes (or with `invalid command 'bdist_wheel'`):
#   1. the interpreter: Debian's /usr/bin/python3 (PYTHON=... to choose another) with numpy,
#      torch, wheel, setuptools, pip and venv importable (tools/setup.sh installs them);
#   2. the venv (default .venv, made with --system-site-packages so Debian's numpy and torch
#      are seen);
#   3. `pip install --no-build-isolation .`, printing CMake's progress ([ NN%]) while the C++
#      extension builds (4-7 min on 2 cores); the full log is build-pip/install.log.
#
#   bash tools/install_python.sh [VENV]
#   .venv/bin/python -c "import advbo; print(advbo.__version__)"
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-/usr/bin/python3}"
VENV="${1:-.venv}"
say() { echo "[install_python] $*" >&2; }

if ! command -v "$PY" > /dev/null; then
  say "no interpreter $PY; advbo installs with Debian's /usr/bin/python3 (PYTHON=... to choose)"
  exit 1
fi
missing=() debs=()
for pair in numpy:python3-numpy torch:python3-torch wheel:python3-wheel \
            setuptools:python3-setuptools pip:python3-pip venv:python3-venv; do
  module=${pair%%:*}
  "$PY" -c "import $module" 2> /dev/null || { missing+=("$module"); debs+=("${pair#*:}"); }
done
if ((${#missing[@]})); then
  say "$PY lacks: ${missing[*]}"
  if [ "$PY" = /usr/bin/python3 ]; then
    say "install them with 'bash tools/setup.sh' (or: sudo apt-get install ${debs[*]})"
  else
    say "use Debian's interpreter, which has them after 'bash tools/setup.sh':"
    say "  PYTHON=/usr/bin/python3 bash tools/install_python.sh"
  fi
  exit 1
fi
command -v cmake > /dev/null || { say "cmake not found: run 'bash tools/setup.sh' first"; exit 1; }
say "interpreter $PY ($("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'))"

if [ ! -x "$VENV/bin/pip" ]; then
  say "creating the venv $VENV (--system-site-packages: Debian's numpy and torch)"
  "$PY" -m venv --system-site-packages "$VENV"
fi
mkdir -p build-pip
LOG=build-pip/install.log
say "pip install --no-build-isolation . (CMake builds advbo._core; log: $LOG)"
set +e
"$VENV/bin/pip" install -v --no-build-isolation . 2>&1 | tee "$LOG" |
  grep --line-buffered -E '^ *\[ *[0-9]+%\]|^Successfully installed' |
  sed -u 's/^ *//' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  say "pip failed (exit $status); the end of $LOG:"
  tail -n 30 "$LOG" >&2
  exit "$status"
fi
say "done: $VENV/bin/python -c \"import advbo\" ($("$VENV/bin/python" -c 'import advbo; print("advbo", advbo.__version__)'))"
