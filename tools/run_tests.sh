#!/usr/bin/env bash
# The README's test command (and CI's): sets up (tools/setup.sh), builds, and runs every test
# once (issue #57, CI time):
#   1. plain (build/, the production build): the integration tests (ctest label
#      "integration": the advbo binary, the server, the Python module end to end), the
#      house-rule checks and the unit tests of tools/plain_only_tests.txt;
#   2. the other unit tests and a smoke list of integration tests built with AddressSanitizer
#      + UndefinedBehaviorSanitizer (tools/run_sanitized_tests.sh, build-asan/);
#   3. a fuzz smoke run of every input parser, 12 s per target (tools/run_fuzz.sh, on the
#      libFuzzer targets step 2's build made).
# ADVBO_QUICK_TESTS=1 runs the whole suite plain instead, and nothing else (a quick local check;
# CI runs all three steps).
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
if [ "${ADVBO_QUICK_TESTS:-0}" = 1 ]; then
  stage "plain tests (all)" bash -c 'cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900'
else
  plain_only="^($(grep -o '^[A-Za-z0-9_.]*' tools/plain_only_tests.txt | grep . | sed 's/\./\\./g' | paste -sd'|'))\$"
  listed=$(cd build && ctest -N -R "$plain_only" | grep -c 'Test *#' || true)
  wanted=$(grep -c '^[A-Za-z]' tools/plain_only_tests.txt)
  if [ "$listed" != "$wanted" ]; then  # a renamed test would otherwise drop out silently
    echo "run_tests.sh: tools/plain_only_tests.txt names $wanted tests, ctest finds $listed" >&2
    exit 1
  fi
  # One ctest run over the chosen tests' numbers (-I 0,0,0,N,...), so that the long ones share
  # the cores with the rest instead of running in a second round.
  nums=$(cd build && { ctest -N -L "integration|check"; ctest -N -R "$plain_only"; } |
    sed -n 's/^ *Test *#\([0-9]*\):.*/\1/p' | sort -nu | paste -sd,)
  export nums
  stage "plain tests (integration, checks, plain-only unit tests)" bash -c \
    'cd build && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 -I "0,0,0,$nums"'
fi
if [ "${ADVBO_QUICK_TESTS:-0}" != 1 ]; then
  stage "sanitizer build + tests" bash tools/run_sanitized_tests.sh
  stage "fuzz smoke run" env ADVBO_FUZZ_BUILD=build-asan bash tools/run_fuzz.sh 12s
fi
echo "[run_tests] all stages: $((SECONDS - t0)) s" >&2
