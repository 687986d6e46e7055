#!/usr/bin/env bash
# A stateful detector served in front of a model, attacked from another process, beside the
# same defense run locally (the newcomer walk of docs/defenses.md, "Served defenses and
# sessions"): plain Square and OARS Square (oars:quantization=50/square, the detection-aware
# wrapper) on the first N correctly classified CIFAR-10 test images, untargeted, L_inf 8/255,
# BUDGET queries each, Blacklight in reject mode (its paper's setting). Writes
# OUT/{served,local}_{square,oars}.jsonl (the records) and the server's /health of each
# served run; served_detector_table.py turns them into the table.
#   usage: bash tools/bench/bench_served_detector.sh [OUT] [N] [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-results/served_detector}
N=${2:-5}
BUDGET=${3:-1000}
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "bench_served_detector: N must be a positive integer, got '$N'" >&2; exit 2; }
[[ "$BUDGET" =~ ^[1-9][0-9]*$ ]] || { echo "bench_served_detector: BUDGET must be a positive integer, got '$BUDGET'" >&2; exit 2; }
ADVBO=${ADVBO:-build/advbo}
[ -x "$ADVBO" ] || bash tools/setup.sh
mkdir -p "$OUT"
MODEL=models/cifar10_cw.pt
DEFENSE=blacklight
COMMON=(--dataset cifar10 --untargeted --eps 8/255 -n "$N" --budget "$BUDGET" --seed 0 -q)
declare -A ATTACK=([square]=square [oars]=oars:quantization=50/square)
for name in square oars; do
  echo "bench_served_detector: local $name" >&2
  "$ADVBO" attack --model "$MODEL" --defense "$DEFENSE" --clean-images 0 --attack "${ATTACK[$name]}" \
    "${COMMON[@]}" -o "$OUT/local_$name.jsonl" > "$OUT/local_$name.txt"
  # A fresh server per run, as a user would start one.
  "$ADVBO" serve --model "$MODEL" --defense "$DEFENSE" --port 0 --port-file "$OUT/port" \
    > "$OUT/serve_$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -s "$OUT/port" ] && break; sleep 0.1; done
  url="http://127.0.0.1:$(cat "$OUT/port")"
  echo "bench_served_detector: served $name ($url)" >&2
  "$ADVBO" attack --model "$url/predict" --attack "${ATTACK[$name]}" "${COMMON[@]}" \
    -o "$OUT/served_$name.jsonl" > "$OUT/served_$name.txt"
  /usr/bin/python3 -c "import json, sys, urllib.request; print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1]))))" \
    "$url/health" > "$OUT/health_$name.json"
  kill "$pid"; wait "$pid" || true
  rm -f "$OUT/port"
done
/usr/bin/python3 tools/bench/served_detector_table.py "$OUT" --out "$OUT/table.md"
