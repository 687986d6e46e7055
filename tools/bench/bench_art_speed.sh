#!/usr/bin/env bash
# advbo's time per query against IBM ART 1.20's on HopSkipJump L2 (label
# feedback, the whole budget walked) and Square L_inf (scores, eps 8/255, success at the first
# adversarial query), on the shipped CIFAR-10 model, the same test images, float queries, one
# thread each, in one run. advbo runs with its defaults (frozen graph, auto lockstep: B = 8 on
# this model) and, as the sequential reference, with --lockstep 1.
#
#   bash tools/bench/bench_art_speed.sh ART_DIR [N] [BUDGET] [OUT]
#
# ART_DIR: a checkout of ART's public code (tools/bench/art_peer.py; e.g. `git archive 1.20.1
# art` of its repository). N test images from index 100 (default 20; misclassified ones skipped
# by both), BUDGET default 1000, OUT default tools/results/art_speed. ADVBO=path overrides
# build/advbo. advbo's time per query is the whole command's wall time (model loading and
# freezing included) over the model evaluations of its records; ART's is the sum of its
# per-image attack times (its import and model loading left out) over its queries -- the
# comparison is tilted towards ART. OUT/README.md is the table; the records stay beside it.
set -euo pipefail
cd "$(dirname "$0")/../.."
art="${1:?usage: $0 ART_DIR [N] [BUDGET] [OUT]}"
n="${2:-20}"
budget="${3:-1000}"
out="${4:-tools/results/art_speed}"
ADVBO="${ADVBO:-build/advbo}"
indices=$(seq -s, 100 $((100 + n - 1)))
mkdir -p "$out"
common=(bench --dataset cifar10 --untargeted --indices "$indices" --budget "$budget" --seed 0
        --threads 1 --quiet --pixels float)
hsja=(--feedback label --norm l2 --eps 0.0001 --attacks hsja)
square=(--feedback scores --norm linf --eps 8/255 --attacks square)
: > "$out/wall.tsv"
for lockstep in 0 1; do
  for set in hsja square; do
    if [[ $set == hsja ]]; then args=("${hsja[@]}"); else args=("${square[@]}"); fi
    dir="$out/advbo_${set}_lockstep$lockstep"
    rm -rf "$dir"
    start=$(date +%s.%N)
    "$ADVBO" "${common[@]}" "${args[@]}" --lockstep "$lockstep" --out "$dir"
    end=$(date +%s.%N)
    printf "%s\t%s\n" "$(basename "$dir")" "$(/usr/bin/python3 -c "print($end - $start)")" >> "$out/wall.tsv"
  done
done
rm -rf "$out/art"
/usr/bin/python3 tools/bench/art_peer.py --art "$art" --out "$out/art" --n "$n" --offset 100 \
  --budget "$budget" --attacks hsja_l2,square_linf --eps-linf 0.03137254901960784 --threads 1
/usr/bin/python3 - "$out" <<'EOF'
import json, statistics, sys
out = sys.argv[1]
wall = dict(line.split("\t") for line in open(f"{out}/wall.tsv").read().split("\n") if line)

def records(path):
    return [json.loads(l) for l in open(path) if l.strip()]

def advbo(set_, lockstep):
    recs = records(f"{out}/advbo_{set_}_lockstep{lockstep}/records.jsonl")
    q = sum(r["queries_used"] for r in recs)
    return recs, q, float(wall[f"advbo_{set_}_lockstep{lockstep}"]) / q * 1e3

def summary(recs, label):
    if label:
        d = [r["distance"] for r in recs if r.get("distance") is not None]
        return f"median L2 {statistics.median(d):.3f}" if d else "no adversarial query"
    ok = sum(bool(r["success"]) for r in recs)
    qs = [r["queries"] for r in recs if r["success"]]
    return f"ASR {ok}/{len(recs)}, median queries {statistics.median(qs) if qs else '-'}"

rows = []
for set_, art_group, label in (("hsja", "label_l2", True), ("square", "score_linf", False)):
    art = records(f"{out}/art/{art_group}/records.jsonl")
    art_ms = sum(r["seconds"] for r in art) / sum(r["queries_used"] for r in art) * 1e3
    for lockstep in ("0", "1"):
        recs, q, ms = advbo(set_, lockstep)
        rows.append((set_, f"advbo, lockstep {'auto (8)' if lockstep == '0' else '1'}", len(recs),
                     q, ms, art_ms / ms, summary(recs, label)))
    rows.append((set_, "ART 1.20.1", len(art), sum(r["queries_used"] for r in art), art_ms, 1.0,
                 summary(art, label)))
with open(f"{out}/README.md", "w") as f:
    f.write("# advbo against ART 1.20, time per query\n\n")
    f.write("`bash tools/bench/bench_art_speed.sh ART_DIR` -- shipped CIFAR-10 model, test images "
            "from index 100, budget 1,000, float queries, 1 thread each. advbo: wall time of the "
            "whole command / model evaluations; ART: its per-image attack time / queries.\n\n")
    f.write("| attack | run | images | queries | ms per query | ART's time / this | result |\n")
    f.write("| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
    for s, run, n, q, ms, x, res in rows:
        f.write(f"| {s} | {run} | {n} | {q} | {ms:.3f} | {x:.2f}x | {res} |\n")
print(open(f"{out}/README.md").read())
EOF
