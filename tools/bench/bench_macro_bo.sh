#!/usr/bin/env bash
# epsilon-Macro-BO studies (Kharkovskii 2020 thesis, Sec. 4.4 / App. B.2), paired realisations:
#  1. plankton (Table B.1): epsilon-Macro-BO H = 1 (DB-GP-UCB) .. 4, nonmyopic GP-UCB H = 4,
#     GP-BUCB; N = 100, beta = 0; RUNS realisations (default 250 as in the thesis);
#  2. plankton (Table B.2): epsilon-Macro-BO H = 2 and 3 with beta in {0 .. 10};
#  3. road and corridor stand-ins (Tables B.3, B.6): anytime epsilon-Macro-BO H = 2, 3 (N = 300,
#     1500 iterations as in the thesis) and H = 4 (N = 100, 300 iterations: the thesis setting
#     costs ~100 s per episode here), DB-GP-UCB, nonmyopic GP-UCB H = 4, GP-BUCB; SMALL_RUNS
#     realisations (default 50); and the exact epsilon-Macro-BO at H = 2, 3 on the same ones.
# Then the tables next to the thesis' and the curves. About 45 min on 2 cores.
#
#   bash tools/bench/bench_macro_bo.sh [RUNS] [SMALL_RUNS] [OUT_DIR]   # default 250 50 tools/results/macro_bo
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-250}"
small="${2:-50}"
out="${3:-tools/results/macro_bo}"
source tools/bench/bench_prologue.sh
bench_prologue bench_macro_bo
mkdir -p "$out"
b=build/tools/bench_macro_bo
betas=""
for h in 2 3; do
  for beta in 0 0.1 0.3 0.6 1 2 4 10; do betas="$betas,emacro:H=$h:beta=$beta"; done
done
[ -s "$out/plankton.jsonl" ] || $b --fields plankton --runs "$runs" --seed 0 --out "$out/plankton.jsonl" \
  --methods "emacro:H=1,emacro:H=2,emacro:H=3,emacro:H=4,nonmyopic-ucb:H=4,gp-bucb"
[ -s "$out/plankton_beta.jsonl" ] || $b --fields plankton --runs "$runs" --seed 0 \
  --out "$out/plankton_beta.jsonl" --methods "${betas#,}"
[ -s "$out/real_standins.jsonl" ] || $b --fields road,corridor --runs "$small" --seed 1000 \
  --out "$out/real_standins.jsonl" \
  --methods "emacro:H=1,anytime:H=2:N=300:iters=1500,anytime:H=3:N=300:iters=1500,anytime:H=4:N=100:iters=300,nonmyopic-ucb:H=4,gp-bucb"
# The exact sampling tree (eq. 4.6) at H = 2, 3 on the same realisations, to tell the anytime
# approximation from the value of lookahead itself.
[ -s "$out/real_standins_exact.jsonl" ] || $b --fields road,corridor --runs "$small" --seed 1000 \
  --out "$out/real_standins_exact.jsonl" --methods "emacro:H=2:N=300,emacro:H=3:N=50"
/usr/bin/python3 tools/bench/macro_bo_table.py "$out" --out "$out/table.md" --plot "$out/curves.png"
