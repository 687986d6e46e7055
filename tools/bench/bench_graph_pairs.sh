#!/usr/bin/env bash
# Goal: "against today's build, a paired table per attack family shows ASR and
# queries unchanged within noise". The scores changed in the last float bits when the frozen
# inference graph became the default (step 1) and again with lockstep batches (step 2); the
# same `advbo bench` runs with --model-graph plain --lockstep 1 (the scores of the build the
# issue was filed against) and with the defaults, on the same instances and seeds, paired.
#
#   bash tools/bench/bench_graph_pairs.sh [OUT]      (default tools/results/graph_pairs)
#
# Families: score-based (Square, Parsimonious), BOS^2 (the chaotic one: a GP fit that reacts
# to the last float bit), hard-label (HopSkipJump, label feedback, success at eps L2), on the
# shipped MNIST model (auto lockstep 1) and CIFAR-10 model (auto lockstep 8). Per case: ASR of
# both arms, instances whose verdict / query count differs, and the mean paired difference of
# queries (defaults - plain) with its standard error; successes only count queries, failures
# the budget. ADVBO=path overrides build/advbo. OUT/README.md is the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/graph_pairs}"
ADVBO="${ADVBO:-build/advbo}"
mkdir -p "$out"
ADVBO="$ADVBO" /usr/bin/python3 - "$out" <<'EOF'
import json, math, os, shutil, subprocess, sys
out, advbo = sys.argv[1], os.environ["ADVBO"]
cases = {
    "square_mnist": "--dataset mnist --attacks square --untargeted -n 40 --budget 1000 --eps 0.1",
    "parsimonious_mnist": "--dataset mnist --attacks parsimonious --untargeted -n 40 --budget 1000 --eps 0.1",
    "bos2_mnist": "--dataset mnist --attacks bos2 -n 20",
    "hsja_label_mnist": "--dataset mnist --attacks hsja --untargeted -n 20 --budget 1000 --norm l2 --eps 2.0 --feedback label",
    "square_cifar10": "--dataset cifar10 --attacks square --untargeted -n 40 --budget 1000 --eps 4/255",
    "bos2_cifar10": "--dataset cifar10 --attacks bos2 --untargeted -n 20 --eps 4/255",
}
arms = {"plain": "--model-graph plain --lockstep 1", "defaults": ""}

def run(case, arm):
    folder = f"{out}/{case}/{arm}"
    shutil.rmtree(folder, ignore_errors=True)
    cmd = [advbo, "bench", *cases[case].split(), *arms[arm].split(), "--seed", "0", "-q",
           "-o", folder]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return [json.loads(l) for l in open(f"{folder}/records.jsonl")]

rows = []
for case in cases:
    a, b = run(case, "plain"), run(case, "defaults")
    key = lambda r: (r["image_index"], r["target"], r["attack"])
    pa, pb = {key(r): r for r in a}, {key(r): r for r in b}
    common = sorted(set(pa) & set(pb), key=str)
    d = [pb[k]["queries"] - pa[k]["queries"] for k in common]
    n = len(d)
    mean = sum(d) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n) if n > 1 else float("nan")
    row = {"case": case, "args": cases[case], "instances": n,
           "asr_plain": sum(pa[k]["success"] for k in common) / n,
           "asr_defaults": sum(pb[k]["success"] for k in common) / n,
           "verdict_differs": sum(pa[k]["success"] != pb[k]["success"] for k in common),
           "queries_differ": sum(x != 0 for x in d),
           "mean_queries_plain": sum(pa[k]["queries"] for k in common) / n,
           "mean_queries_defaults": sum(pb[k]["queries"] for k in common) / n,
           "paired_diff": mean, "paired_se": se,
           "lockstep_defaults": pb[common[0]].get("lockstep", 1)}
    rows.append(row)
    print(json.dumps(row), flush=True)
with open(f"{out}/runs.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
with open(f"{out}/README.md", "w") as f:
    f.write("# Plain graph, one at a time vs the defaults, paired\n\n")
    f.write("`bash tools/bench/bench_graph_pairs.sh` -- each case run with `--model-graph plain "
            "--lockstep 1` (the scores before the frozen graph) and with the defaults (frozen graph, auto "
            "lockstep), `--seed 0`, same instances. Paired difference = defaults - plain "
            "queries, mean ± standard error.\n\n")
    f.write("| case | arguments | instances | ASR plain / defaults | verdicts differ | query counts differ | mean queries plain / defaults | paired difference ± SE | lockstep (defaults) |\n")
    f.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for r in rows:
        f.write(f'| {r["case"]} | `{r["args"]}` | {r["instances"]} | {100 * r["asr_plain"]:.1f} / '
                f'{100 * r["asr_defaults"]:.1f} % | {r["verdict_differs"]} | {r["queries_differ"]} | '
                f'{r["mean_queries_plain"]:.1f} / {r["mean_queries_defaults"]:.1f} | '
                f'{r["paired_diff"]:+.1f} ± {r["paired_se"]:.1f} | {r["lockstep_defaults"]} |\n')
print(open(f"{out}/README.md").read())
EOF
