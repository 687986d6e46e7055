#!/usr/bin/env bash
# robust accuracy a defense paper can cite, on the adversarially trained models.
#
#   bash tools/bench/bench_at_evaluate.sh STEP MODEL [N] [SHARDS] [OUT_ROOT]
#
# STEP:  reference  the white-box reference alone (by default APGD-CE + APGD-T, Croce & Hein
#                   2020; REFERENCE=standard adds FAB-T), float and 8-bit iterates: what the
#                   model cards quote
#        evaluate   the default `advbo evaluate` (black-box ensemble, 10,000 queries per
#                   image, the reference and the combined worst case beside)
# MODEL: mnist_at (the robust MNIST target, eps 0.3) | mnist_fgsm_overfit (the stress case,
#        eps 0.3) | cifar10_at (eps 8/255); mnist and cifar10 stand for mnist_at and cifar10_at
# N:     the first N test images (default 1000 MNIST, 500 CIFAR-10); evaluate writes
#        OUT_ROOT/MODEL at the default N, OUT_ROOT/MODEL_N at another
# SHARDS: evaluate in this many shards, one process each, then combine (default 2 = the
#         machine's cores). An interrupted run resumes when run again.
# OUT_ROOT default tools/results/at_reference (reference) / tools/results/at_evaluate.
# ADVBO=path overrides build/advbo; EXTRA adds options to every evaluate run.
set -euo pipefail
cd "$(dirname "$0")/../.."
step="${1:?step: reference | evaluate}"
model="${2:?model: mnist | cifar10}"
case "$model" in
  mnist | cifar10) model="${model}_at" ;;
esac
case "$model" in
  mnist_at | mnist_fgsm_overfit) dataset=mnist; default_n=1000 ;;
  cifar10_at) dataset=cifar10; default_n=500 ;;
  *) echo "model must be mnist_at, mnist_fgsm_overfit or cifar10_at" >&2; exit 1 ;;
esac
n="${3:-$default_n}"
[[ "$n" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "N must be a whole number of images in [1, 99999], got '$n'" >&2; exit 1; }
shards="${4:-2}"
ADVBO="${ADVBO:-build/advbo}"
common=(--dataset "$dataset" --model "models/${model}.pt" -n "$n" --seed 0 --threads 1 -q
        --reference "${REFERENCE:-auto}")
case "$step" in
  reference)
    root="${5:-tools/results/at_reference}"
    for px in float 8bit; do
      "$ADVBO" evaluate "${common[@]}" --reference-only --pixels "$px" -o "$root/${model}_$px"
    done
    ;;
  evaluate)
    root="${5:-tools/results/at_evaluate}"
    out="$root/${model}"
    [ "$n" = "$default_n" ] || out="${out}_${n}"
    pids=()
    for k in $(seq 1 "$shards"); do
      "$ADVBO" evaluate "${common[@]}" ${EXTRA:-} --shard "$k/$shards" -o "$out" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    "$ADVBO" evaluate "${common[@]}" ${EXTRA:-} -o "$out"  # combines the shards: no new query
    ;;
  *) echo "step must be reference or evaluate" >&2; exit 1 ;;
esac
