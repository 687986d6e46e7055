#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root, or with sudo available):
# installs exactly the Debian packages advbo builds and tests with, then configures and
# builds the project into build/ (Release). Re-running only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(cmake g++ make pkg-config zlib1g-dev libtorch-dev libeigen3-dev libopencv-dev
      libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev liblbfgspp-dev
      libnlopt-cxx-dev libboost-dev libtbb-dev libgtest-dev libgmock-dev
      libopenblas0-pthread liblapack-dev dataset-fashion-mnist
      libcpp-httplib-dev pybind11-dev python3-dev python3-numpy python3-pytest
      python3-torch python3-pip python3-venv python3-setuptools python3-wheel
      clang-format doxygen)
# clang-format: the house-style check (ctest clang_format); doxygen: the C++ API reference
# (tools/build_docs.sh, ctest docs_build).
# python3-torch: the Python API's nn.Module models (and its tests); pip, venv, setuptools and
# wheel: `pip install --no-build-isolation .` of the Python package (setup.py).
# libopenblas0-pthread becomes Debian's libblas.so.3 alternative (priority 100 over the
# reference BLAS), so LibTorch's linear/conv layers run ~8x faster on CIFAR-10 models.
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
# ADVBO_BUILD_TARGETS (space-separated) limits the build to those targets: CI's plain stage
# builds only what it runs (tools/ci/run_tests.sh); unset = everything.
cmake --build build -j "$JOBS" ${ADVBO_BUILD_TARGETS:+--target $ADVBO_BUILD_TARGETS} >&2
# The Python package is importable from the build tree with PYTHONPATH=build/python (the
# tests do so) or installed into a venv with pip (README). Earlier versions of this script
# wrote a .pth file into Debian's site-packages; remove it if it points at this tree.
SITE=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
if [ "$(cat "$SITE/advbo.pth" 2>/dev/null)" = "$PWD/build/python" ]; then
  SUDO=""; [ -w "$SITE" ] || [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO rm -f "$SITE/advbo.pth" && echo "[setup] removed the old $SITE/advbo.pth" >&2
fi
