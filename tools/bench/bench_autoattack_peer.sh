#!/usr/bin/env bash
# advbo evaluate beside AutoAttack's own code (Croce & Hein, ICML 2020; github.com/fra31/auto-attack,
# MIT, fetched and run, never copied) on the same first N test images of a shipped robust model.
#
#   bash tools/bench/bench_autoattack_peer.sh AA_DIR MODEL [N] [OUT_ROOT]
#
# AA_DIR:   a checkout of fra31/auto-attack (the folder holding autoattack/)
# MODEL:    mnist_at (eps 0.3) | cifar10_at (eps 8/255) | mnist_fgsm_overfit (eps 0.3)
# N:        the first N test images (default 100)
# OUT_ROOT: default tools/results/autoattack_peer; writes OUT_ROOT/MODEL_N/{autoattack,advbo}
#
# Protocol: both tools start at the same moment and run side by side, one LibTorch thread each
# (one core each of the 2-core machine), in float pixels (AutoAttack's setting). AutoAttack runs
# version='standard' (APGD-CE, APGD-T, FAB-T, Square at 5,000 queries), seed 0; advbo runs the
# default `advbo evaluate` (black-box ensemble at 10,000 queries per image, the default
# white-box reference beside it, the combined worst case), seed 0. Each tool's wall time is the
# whole command, model loading included (wall.json). The table: tools/bench/autoattack_peer_table.py.
# ADVBO=path overrides build/advbo; REFERENCE overrides advbo's --reference (default auto).
set -euo pipefail
cd "$(dirname "$0")/../.."
aa="${1:?AA_DIR: a checkout of github.com/fra31/auto-attack}"
model="${2:?MODEL: mnist_at | cifar10_at | mnist_fgsm_overfit}"
n="${3:-100}"
[[ "$n" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "N must be a whole number of images in [1, 99999], got '$n'" >&2; exit 1; }
case "$model" in
  mnist_at | mnist_fgsm_overfit) dataset=mnist; eps=0.3 ;;
  cifar10_at) dataset=cifar10; eps=$(/usr/bin/python3 -c 'print(8/255)') ;;
  *) echo "MODEL must be mnist_at, cifar10_at or mnist_fgsm_overfit" >&2; exit 1 ;;
esac
[ -d "$aa/autoattack" ] || { echo "$aa: no autoattack/ folder (a checkout of fra31/auto-attack)" >&2; exit 1; }
ADVBO="${ADVBO:-build/advbo}"
out="${4:-tools/results/autoattack_peer}/${model}_${n}"
mkdir -p "$out"

timed() {  # NAME CMD...: runs CMD, writes $out/NAME.seconds
  local name="$1"; shift
  local t0; t0=$(date +%s.%N)
  "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  /usr/bin/python3 -c "print(round($(date +%s.%N) - $t0, 1))" > "$out/$name.seconds"
}

timed autoattack /usr/bin/python3 tools/bench/autoattack_peer.py --aa "$aa" \
  --model "models/$model.pt" --dataset "$dataset" --eps "$eps" --n "$n" --threads 1 \
  --out "$out/autoattack" &
pa=$!
timed advbo "$ADVBO" evaluate --dataset "$dataset" --model "models/$model.pt" -n "$n" --seed 0 \
  --threads 1 --workers 1 --pixels float --reference "${REFERENCE:-auto}" -q -o "$out/advbo" &
pb=$!
wait "$pa"
wait "$pb"
/usr/bin/python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
wall = {k: float(open(os.path.join(out, k + ".seconds")).read()) for k in ("autoattack", "advbo")}
json.dump({"wall_seconds": wall, "threads": 1, "side_by_side": True}, open(os.path.join(out, "wall.json"), "w"), indent=1)
for k in ("autoattack", "advbo"):
    os.remove(os.path.join(out, k + ".seconds"))
print(wall)
PY
