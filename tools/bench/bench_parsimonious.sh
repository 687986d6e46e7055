#!/usr/bin/env bash
# Parsimonious (Moon et al. 2019) against query-loop defenders, the protocol of the Dai 2021
# thesis Sec. 8.4.2.2 / App. E.6.2.2a: images that Parsimonious attacks successfully within
# ROUNDS queries WITHOUT a defender are replayed against each defender; the report counts
# the images fully defended (no success within ROUNDS) and the queries-to-success ratio on
# the others.
#
#   bash tools/bench/bench_parsimonious.sh DATASET [N] [ROUNDS] [JOBS] [OUT_ROOT]
#
# DATASET mnist | cifar10 (eps 0.3 / 0.05, the attack-game defaults); N first correctly
# classified test images screened (default 20); ROUNDS queries per image (default 500, the
# thesis'); JOBS defenders played side by side (default nproc). Defenders: r2b2:latent
# (R2-B2 level 1 in the defender VAE's latent space, clip = eps), random:latent,
# r2b2:jpeg+noise. Each is `advbo game --attacker parsimonious --defender D` writing
# OUT_ROOT/DATASET-parsimonious-screened/<defender>/ (default OUT_ROOT results/r2b2_adv);
# finished ones (summary.json present) are skipped, so an interrupted run resumes.
# ADVBO=path overrides build/advbo. Table: tools/bench/parsimonious_table.py OUT_ROOT/DATASET-...
set -euo pipefail
cd "$(dirname "$0")/../.."
ds="${1:?usage: $0 DATASET [N] [ROUNDS] [JOBS] [OUT_ROOT]}"
n="${2:-20}"
rounds="${3:-500}"
jobs="${4:-$(nproc)}"
root="${5:-results/r2b2_adv}"
ADVBO="${ADVBO:-build/advbo}"
case "$ds" in mnist | cifar10) ;; *) echo "unknown dataset $ds (mnist | cifar10)" >&2; exit 2 ;; esac
out="$root/$ds-parsimonious-screened"
mkdir -p "$out"
common=(game --game "$ds" --attacker parsimonious --rounds "$rounds" --seed 0 --quiet --pixels float)

if [[ ! -f "$out/none/summary.json" ]]; then
  "$ADVBO" "${common[@]}" --defender none --games "$n" --out-dir "$out/none" >"$out/none.log" 2>&1
fi
images=$(/usr/bin/python3 -c "
import json
s = json.load(open('$out/none/summary.json'))
print(' '.join(str(i) for i, ok in zip(s['images'], s['per_run_success']) if ok))")
[[ -n "$images" ]] || { echo "bench_parsimonious: no image attacked successfully" >&2; exit 1; }
echo "bench_parsimonious: $ds, attacked without a defender: test images $images"

commands=()
for d in r2b2:latent random:latent r2b2:jpeg+noise; do
  dir="$out/${d//[:+]/_}"
  [[ -f "$dir/summary.json" ]] && continue
  commands+=("$ADVBO ${common[*]} --defender $d --indices $images --out-dir $dir > $dir.log 2>&1")
done
if ((${#commands[@]} > 0)); then
  printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -I{} bash -c '{}'
fi
/usr/bin/python3 tools/bench/parsimonious_table.py "$out"
