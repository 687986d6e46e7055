#!/usr/bin/env bash
# Sets up (tools/setup.sh), builds, and runs the whole GoogleTest suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900
