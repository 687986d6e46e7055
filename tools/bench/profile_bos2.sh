#!/usr/bin/env bash
# Where BOS²'s time goes: a perf profile of one targeted BOS² instance set (one image x 9
# targets, 8-bit, T 900), one lane, one worker, one LibTorch thread, so every sample is the
# instance's own work (no lane waiting). Run it on an otherwise idle machine.
#
#   bash tools/bench/profile_bos2.sh DATASET [OUT_ROOT]
#
# DATASET:  mnist (eps 0.3) | cifar10 (eps 0.05, the BOS² thesis' CIFAR-10 protocol)
# OUT_ROOT: default tools/results/profile_bos2; writes OUT_ROOT/DATASET/
#   command.txt   the attack command
#   records.jsonl the attack's records (model_seconds, bo_seconds, bo_phase_seconds)
#   ratio.md      BO ÷ model per query and BO time by phase (tools/bench/bo_model_ratio.py)
#   flat.txt      perf's flat profile: self time per function, top entries
#   inclusive.txt time per function including its callees (the call path, summed)
#   callers.txt   the heaviest call chains, caller first
# Needs perf (Debian package linux-perf) and kernel.perf_event_paranoid <= 2 or root.
# ADVBO=path overrides build/advbo (a Release build: frames come from DWARF unwinding).
# ONE_CORE=1 runs it on one core (taskset -c 0): the BO core's TBB work then stays on the
# attack's own thread, under RunBos2's call chain, so the shares compare with a serial build's.
set -euo pipefail
cd "$(dirname "$0")/../.."
ds="${1:?DATASET: mnist | cifar10}"
case "$ds" in
  mnist) eps=0.3 ;;
  cifar10) eps=0.05 ;;
  *) echo "DATASET must be mnist or cifar10" >&2; exit 1 ;;
esac
command -v perf >/dev/null || { echo "perf not found (apt-get install linux-perf)" >&2; exit 1; }
ADVBO="${ADVBO:-build/advbo}"
[ -x "$ADVBO" ] || { echo "$ADVBO: no advbo binary (bash tools/setup.sh)" >&2; exit 1; }
out="${2:-tools/results/profile_bos2}/$ds"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(attack --dataset "$ds" --attack bos2 --targeted -n 1 --eps "$eps" --budget 900
      --lockstep 1 --workers 1 --threads 1 --seed 0 -q --out "$tmp/records.jsonl")
prefix=()
[ "${ONE_CORE:-0}" = 1 ] && prefix=(taskset -c 0)
perf record -q -F 499 --call-graph dwarf,16384 -o "$tmp/perf.data" -- "${prefix[@]}" "$ADVBO" \
  "${args[@]}" > "$tmp/attack.txt"
# perf pads every line to its widest symbol and adds IPC columns the cpu-clock event cannot
# fill: both are cut, and symbols longer than 200 characters (Eigen's templates) truncated.
report() {
  perf report -i "$tmp/perf.data" --stdio --sort symbol "$@" 2>/dev/null | grep -v '^$' |
    sed -e 's/ *- *- *$//' -e 's/ *$//' | cut -c1-220
}
mkdir -p "$tmp/out"
echo "${prefix[*]:+${prefix[*]} }advbo ${args[*]/$tmp\/records.jsonl/records.jsonl}" \
  > "$tmp/out/command.txt"
cp "$tmp/records.jsonl" "$tmp/out/records.jsonl"
/usr/bin/python3 tools/bench/bo_model_ratio.py "$tmp/records.jsonl" > "$tmp/out/ratio.md"
report --no-children -g none --percent-limit 0.5 > "$tmp/out/flat.txt"
report --children -g none --percent-limit 2 > "$tmp/out/inclusive.txt"
report --no-children -g caller,2,callee,function,percent --percent-limit 3 | head -400 \
  > "$tmp/out/callers.txt"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$tmp/out" "$out"
cat "$out/ratio.md"
