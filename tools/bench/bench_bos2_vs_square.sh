#!/usr/bin/env bash
# BOS² beside Square, in one run per model, on the five shipped target models, and BOS² beside
# BayesOpt in the BOS² thesis' own protocol (docs/benchmarks/attacks.md): targeted on every
# other class, T = 900, seed 0, 8-bit queries, MNIST 50 images x 9 targets at eps 0.3, CIFAR-10
# 20 x 9 at eps 0.05 (tools/bench/bench_paper.sh's settings); the thesis protocol is Carlini's
# network with float queries and BayesOpt's rescaling (--pixels float --rescale-compat).
#
#   bash tools/bench/bench_bos2_vs_square.sh [SHARDS] [OUT_ROOT] [MODELS]
#
# SHARDS single-threaded shards per run (default nproc); OUT_ROOT default
# tools/results/bos2_vs_square; MODELS (default "cifar10_cw mnist_cw mnist_cw_plain
# mnist_carlini cifar10_cw_plain thesis_protocol") picks the runs. Each run goes to
# OUT_ROOT/NAME/ (records.jsonl.gz, summary.json, table.txt); a finished run is skipped, an
# interrupted one resumes. ADVBO=path overrides build/advbo.
# Table: /usr/bin/python3 tools/bench/attack_table.py (the commands are in the page).
set -euo pipefail
cd "$(dirname "$0")/../.."
shards="${1:-$(nproc)}"
root="${2:-tools/results/bos2_vs_square}"
for name in ${3:-cifar10_cw mnist_cw mnist_cw_plain mnist_carlini cifar10_cw_plain thesis_protocol}; do
  out="$root/$name"
  [[ -f "$out/records.jsonl.gz" ]] && continue
  case "$name" in
    mnist_*) env=(PIXELS=8bit ATTACKS=bos2,square MODEL="models/$name.pt") ds=mnist ;;
    cifar10_*) env=(PIXELS=8bit ATTACKS=bos2,square MODEL="models/$name.pt") ds=cifar10 ;;
    thesis_protocol) env=(PIXELS=float RESCALE=1 ATTACKS=bos2,bayesopt MODEL=models/mnist_carlini.pt)
      ds=mnist ;;
    *) echo "bench_bos2_vs_square: unknown run $name" >&2; exit 2 ;;
  esac
  echo "bench_bos2_vs_square: $name" >&2
  env "${env[@]}" OUT="$out" bash tools/bench/bench_paper.sh "$ds" "$shards"
  # Keep what the tables read: the merged records (compressed), summary and table.
  rm -rf "$out"/shard-* "$out"/curves.* "$out"/paper_compare.md
  gzip -9nf "$out/records.jsonl"
done
