#!/usr/bin/env bash
# The README's test command (and CI's): sets up (tools/setup.sh), builds, and runs
#   1. the whole GoogleTest suite through ctest (build/);
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#      (tools/run_sanitized_tests.sh, build-asan/);
#   3. a fuzz smoke run of every input parser, 12 s per target (tools/run_fuzz.sh, clang,
#      build-fuzz/).
# ADVBO_QUICK_TESTS=1 runs step 1 only (for a quick local check; CI runs all three).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
(cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900)
if [ "${ADVBO_QUICK_TESTS:-0}" != 1 ]; then
  bash tools/run_sanitized_tests.sh
  bash tools/run_fuzz.sh 12s
fi
