#!/usr/bin/env bash
# The README's test command (and CI's): sets up (tools/setup.sh), builds, and runs
#   1. the whole GoogleTest suite through ctest (build/);
#   2. the unit tests and a smoke list of integration tests built with AddressSanitizer +
#      UndefinedBehaviorSanitizer (tools/run_sanitized_tests.sh, build-asan/);
#   3. a fuzz smoke run of every input parser, 12 s per target (tools/run_fuzz.sh, on the
#      libFuzzer targets step 2's build made).
# ADVBO_QUICK_TESTS=1 runs step 1 only (for a quick local check; CI runs all three).
# Each stage's wall time is printed as "[run_tests] <stage>: N s" (docs/testing.md keeps them).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
stage() {  # stage NAME COMMAND...: runs it and prints its wall time
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "[run_tests] $name: $((SECONDS - start)) s" >&2
}
stage "setup + plain build" bash tools/setup.sh
stage "plain tests" bash -c 'cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900'
if [ "${ADVBO_QUICK_TESTS:-0}" != 1 ]; then
  stage "sanitizer build + tests" bash tools/run_sanitized_tests.sh
  stage "fuzz smoke run" env ADVBO_FUZZ_BUILD=build-asan bash tools/run_fuzz.sh 12s
fi
echo "[run_tests] all stages: $((SECONDS - t0)) s" >&2
