#!/usr/bin/env bash
# Builds the libFuzzer targets of the input parsers (tests/fuzz/, clang, ASan + UBSan) into
# build-fuzz/ and runs each one, starting from the committed corpus tests/fuzz/corpus/<target>.
# ADVBO_FUZZ_BUILD=build-asan uses the sanitizer build instead, which CI configures with the
# fuzz targets (tools/ci/run_sanitized_tests.sh: one clang build for both stages).
#
#   bash tools/ci/run_fuzz.sh [RUNS|SECONDSs] [TARGET...]
#
# RUNS (e.g. 10000000) = executions per target; "60s" = seconds per target instead (CI smoke
# runs use a few seconds each). Targets: mnist cifar10 images specs bounds (default all).
# Prints one line per target (executions, seconds, exec/s, crashes) and writes the same as
# JSON lines to BUILD/fuzz_report.jsonl. Crashing inputs land in BUILD/crashes/;
# copy them into tests/fuzz/corpus/<target>/ so test_fuzz_regressions replays them.
# Exit status 1 if any target crashed, leaked or hung.
set -euo pipefail
cd "$(dirname "$0")/../.."
budget="${1:-60s}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(mnist cifar10 images specs bounds)
build="${ADVBO_FUZZ_BUILD:-build-fuzz}"
bash tools/ci/install_clang.sh
if [ "$build" = build-fuzz ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADVBO_FUZZ=ON \
    -DADVBO_BUILD_TESTS=OFF -DADVBO_NATIVE=OFF > /dev/null
elif ! grep -q '^ADVBO_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "run_fuzz.sh: $build is not a build configured with -DADVBO_FUZZ=ON" >&2
  exit 1
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target $(printf 'fuzz_%s ' "${targets[@]}") >&2
mkdir -p "$build"/crashes "$build"/work
rm -f "$build"/fuzz_report.jsonl
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
export LSAN_OPTIONS="suppressions=$PWD/tools/ci/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for t in "${targets[@]}"; do
  work="$build/work/$t"
  rm -rf "$work" && mkdir -p "$work" && cp tests/fuzz/corpus/"$t"/* "$work"/
  rm -f "$build"/crashes/"$t"-*  # count this run's findings only
  if [[ "$budget" == *s ]]; then limit=(-max_total_time="${budget%s}"); else limit=(-runs="$budget"); fi
  start=$(date +%s.%N)
  set +e
  "$build"/fuzz_"$t" "${limit[@]}" -timeout=10 -rss_limit_mb=4096 -max_len=8192 \
    -artifact_prefix="$build"/crashes/"$t"- "$work" > "$build/fuzz_$t.log" 2>&1
  rc=$?
  set -e
  secs=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/fuzz_$t.log" | awk '{print $2}' || true)
  [ -n "$execs" ] || execs=$(grep -oE '^(#|Done )[0-9]+' "$build/fuzz_$t.log" | tail -1 | tr -dc 0-9)
  crashes=$(find "$build"/crashes -name "$t-*" | wc -l)
  ((rc == 0)) || status=1
  printf '%-8s %12s executions in %7.1f s (%s exec/s), exit %d, %d crashing inputs\n' "$t" "$execs" \
    "$secs" "$(awk -v e="${execs:-0}" -v s="$secs" 'BEGIN { printf "%d", e / (s > 0 ? s : 1) }')" "$rc" "$crashes"
  printf '{"target":"%s","executions":%s,"seconds":%.1f,"exit":%d,"crashes":%d}\n' "$t" "${execs:-0}" \
    "$secs" "$rc" "$crashes" >> "$build"/fuzz_report.jsonl
done
exit $status
