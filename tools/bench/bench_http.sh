#!/usr/bin/env bash
# Served model vs in-process model on loopback: `advbo serve` in the background,
# then (1) bench_http: seconds per image of the same batches scored both ways (MNIST and
# CIFAR-10 models, batches 1/10/100), and (2) the same `advbo bench` (BOS^2 and Square, 5
# images x 9 targets on MNIST) against the file and against the URL: records identical apart
# from timings, and the model seconds per query of each. Writes tools/results/http/.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x build/advbo ] || bash tools/setup.sh
cmake --build build --target advbo bench_http >&2
OUT=tools/results/http
mkdir -p "$OUT"
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
serve() {  # serve MODEL NAME: starts the server, sets URL
  build/advbo serve --model "$1" --port 0 --port-file "$TMP/$2.port" --torch-threads 1 \
    > "$TMP/$2.out" 2> "$TMP/$2.log" &
  PIDS+=($!)
  for _ in $(seq 300); do [ -s "$TMP/$2.port" ] && break; sleep 0.1; done
  [ -s "$TMP/$2.port" ] || { cat "$TMP/$2.log" >&2; exit 1; }
  URL="http://127.0.0.1:$(cat "$TMP/$2.port")/predict"
}
rm -f "$OUT/overhead.jsonl.partial"
for m in mnist cifar10; do
  serve "models/${m}_cw.pt" "$m"
  build/tools/bench_http --model "models/${m}_cw.pt" --url "$URL" --reps "${REPS:-300}" \
    --threads 1 -o "$OUT/overhead.jsonl.partial"
done
mv "$OUT/overhead.jsonl.partial" "$OUT/overhead.jsonl"
serve models/mnist_cw.pt attack
args=(--attacks bos2,square -n 5 --budget 300 --seed 0 --threads 1 -q)
rm -rf "$OUT/bench_local" "$OUT/bench_served"
build/advbo bench "${args[@]}" --out-dir "$OUT/bench_local"
build/advbo bench "${args[@]}" --model "$URL" --out-dir "$OUT/bench_served"
/usr/bin/python3 tools/bench/http_table.py "$OUT" --out "$OUT/report.md"
