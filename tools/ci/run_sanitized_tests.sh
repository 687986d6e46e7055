#!/usr/bin/env bash
# The unit tests and a smoke list of integration tests under AddressSanitizer +
# UndefinedBehaviorSanitizer: builds build-asan/ with clang and
# -DADVBO_SANITIZE=ON (packages from tools/setup.sh, clang from tools/ci/install_clang.sh) and
# runs ctest there. Leaks LibTorch, OpenMP and OpenBLAS make once per process are suppressed by
# tools/ci/lsan.supp; nothing of advbo's own code is. Any sanitizer report fails its test
# (ASan aborts, UBSan halts on the first error, LeakSanitizer exits non-zero).
#
#   bash tools/ci/run_sanitized_tests.sh [CTEST_ARGS...]     # e.g. -R Cli
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS="${JOBS:-$(nproc)}"
bash tools/ci/install_clang.sh
# clang, not GCC: the same build took 669 s with clang 14 against about 1,760 s with GCC 12 on
# one 2-core machine (docs/testing.md). A build-asan/ configured with another compiler is
# configured afresh.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
# -DADVBO_FUZZ=ON: the libFuzzer targets are built here too (their parsers carry coverage
# instrumentation, the rest not), so CI's fuzz stage runs them without a build of its own
# (ADVBO_FUZZ_BUILD=build-asan tools/ci/run_fuzz.sh).
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADVBO_SANITIZE=ON \
  -DADVBO_FUZZ=ON -DADVBO_BENCH=OFF > /dev/null
cmake --build build-asan -j "$JOBS" >&2
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$PWD/tools/ci/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# What runs here (for CI time): every unit test (ctest label "unit": in-process code,
# where a sanitizer report points at the fault) and a short list of integration tests, one per
# subcommand path (attack, BOS^2's saved PNGs, bench over every attack, evaluate with its
# white-box reference, game, bo, fbo, serve, a refused second run). The other integration
# tests -- 60-odd tests that start the advbo binary dozens of times each, 1,900 s of the
# 3,150 s sanitized sum for code the smoke list already runs -- the house-rule
# checks and the unit tests of tools/ci/plain_only_tests.txt (numerical or statistical behaviour
# whose code paths other sanitized tests run, each long under ASan) run in the plain stage
# (tools/ci/run_tests.sh), so CI runs every test once.
# ADVBO_SANITIZED_ALL=1 runs every test of the suite here instead.
cd build-asan
if [ "${ADVBO_SANITIZED_ALL:-0}" = 1 ]; then
  exec ctest --output-on-failure -j "$JOBS" --timeout 1800 "$@"
fi
# One ctest run over the chosen tests (tools/ci/ctest_select.py: the unit tests but the
# plain-only ones, and the smoke list; it refuses a listed name the build does not have), so
# that the smoke tests share the cores with the unit tests instead of running in a second round.
ids=$(/usr/bin/python3 ../tools/ci/ctest_select.py . --label unit --list ../tools/ci/sanitized_smoke_tests.txt \
  --exclude-list ../tools/ci/plain_only_tests.txt)
ctest --output-on-failure -j "$JOBS" --timeout 1800 -I "$ids" "$@"
