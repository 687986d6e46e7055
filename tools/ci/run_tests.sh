#!/usr/bin/env bash
# The README's test command (and CI's): sets up (tools/setup.sh), builds, and runs every test
# once (for CI time):
#   1. plain (build/, the production build): the integration tests (ctest label
#      "integration": the advbo binary, the server, the Python module end to end), the
#      house-rule checks and the unit tests of tools/ci/plain_only_tests.txt;
#   2. the other unit tests and a smoke list of integration tests built with AddressSanitizer
#      + UndefinedBehaviorSanitizer (tools/ci/run_sanitized_tests.sh, build-asan/);
#   3. a fuzz smoke run of every input parser, 12 s per target (tools/ci/run_fuzz.sh, on the
#      libFuzzer targets step 2's build made).
# ADVBO_QUICK_TESTS=1 runs the whole suite plain instead, and nothing else (a quick local check;
# CI runs all three steps).
# Each stage's wall time is printed as "[run_tests] <stage>: N s" (docs/testing.md keeps them).
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
stage() {  # stage NAME COMMAND...: runs it and prints its wall time
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "[run_tests] $name: $((SECONDS - start)) s" >&2
}
# The full run builds in build/ only what its plain stage runs: the advbo binary, the Python
# module and the test executables of the integration and plain-only tests (the unit tests run
# in the sanitizer build). A quick run builds everything.
if [ "${ADVBO_QUICK_TESTS:-0}" != 1 ]; then
  export ADVBO_BUILD_TARGETS="advbo advbo_python test_cli test_pixels test_attacks test_bo test_whitebox"
fi
stage "setup + plain build" bash tools/setup.sh
if [ "${ADVBO_QUICK_TESTS:-0}" = 1 ]; then
  stage "plain tests (all)" bash -c 'cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900'
else
  # One ctest run over the chosen tests (tools/ci/ctest_select.py), so that the long ones share the
  # cores with the rest instead of running in a second round.
  ids=$(/usr/bin/python3 tools/ci/ctest_select.py build --label integration --label check \
    --list tools/ci/plain_only_tests.txt)
  export ids
  stage "plain tests (integration, checks, plain-only unit tests)" bash -c \
    'cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 -I "$ids"'
fi
if [ "${ADVBO_QUICK_TESTS:-0}" != 1 ]; then
  stage "sanitizer build + tests" bash tools/ci/run_sanitized_tests.sh
  stage "fuzz smoke run" env ADVBO_FUZZ_BUILD=build-asan bash tools/ci/run_fuzz.sh 12s
fi
echo "[run_tests] all stages: $((SECONDS - t0)) s" >&2
