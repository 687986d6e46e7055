#!/usr/bin/env bash
# The whole GoogleTest suite under AddressSanitizer + UndefinedBehaviorSanitizer (issue #13):
# builds build-asan/ with clang and -DADVBO_SANITIZE=ON (packages from tools/setup.sh, clang
# from tools/install_clang.sh) and runs ctest
# there. Leaks LibTorch, OpenMP and OpenBLAS make once per process are suppressed by
# tools/lsan.supp; nothing of advbo's own code is. Any sanitizer report fails its test
# (ASan aborts, UBSan halts on the first error, LeakSanitizer exits non-zero).
#
#   bash tools/run_sanitized_tests.sh [CTEST_ARGS...]     # e.g. -R Cli
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-$(nproc)}"
bash tools/install_clang.sh
# clang, not GCC: the same build took 669 s with clang 14 against about 1,760 s with GCC 12 on
# one 2-core machine (docs/testing.md). A build-asan/ configured with another compiler is
# configured afresh.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADVBO_SANITIZE=ON \
  -DADVBO_BENCH=OFF > /dev/null
cmake --build build-asan -j "$JOBS" >&2
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Left to the plain stage (CI time, issue #56 session 35: the sanitizer stage grew to 1,955 s):
# three tests of numerical or statistical behaviour whose code paths other sanitized tests run
# too -- the trust region's replay (Bos2OnMnist.* run BOS^2 with it on, 112 s here), 20 seeds of
# BO on Branin (RunBo.* run the same loop, 51 s), records equal across thread counts (a
# determinism property, 65 s). Session 36 added the longest sanitized test of all,
# BadInput.AttackAndBenchOptionsAreValidatedBeforeAnyWork (257 s under ASan against 49 s plain:
# about 80 advbo processes, each refused in option validation before any work; the option
# parsers are fuzzed in the fuzz stage and the other BadInput tests run sanitized).
# ADVBO_SANITIZED_ALL=1 runs them as well.
skip='^(Bos2OnMnist\.TrustRegionFollowsTurboRulesAcrossLoops|RunBo\.EiAndUcbSolveBraninWithin40EvaluationsOn18Of20Seeds|Cli\.RecordsDoNotDependOnTheThreadCount|BadInput\.AttackAndBenchOptionsAreValidatedBeforeAnyWork)$'
[ "${ADVBO_SANITIZED_ALL:-0}" = 1 ] && skip='^$'
cd build-asan && ctest --output-on-failure -j "$JOBS" --timeout 1800 -E "$skip" "$@"
