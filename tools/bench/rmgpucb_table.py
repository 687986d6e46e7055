#!/usr/bin/env python3
"""RM-GP-UCB synthetic study (Dai 2021 thesis, Sec. 7.6.1 / Fig. 7.1) from tools/bench/bench_rmgpucb.sh:
mean simple regret over BO iterations 1-20 and at iterations 30 / 50 (mean ± SE over paired
function × init runs), paired differences to GP-UCB, the share of runs whose dissimilar
meta-tasks hold less than 0.1 of the weight by t = 10, the issue's goal checks, and a PNG of the
regret curves and meta-weights.

Usage: rmgpucb_table.py RUNS.jsonl [--out TABLE.md] [--plot CURVES.png]
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, save_png, table_args  # noqa: E402

LABEL = {"gp-ucb": "GP-UCB", "rm-uniform": "RM-GP-UCB, uniform weights", "rm": "RM-GP-UCB"}
TITLE = {"similar": "gaps 0.05, 0.05, 4, 4", "dissimilar": "all gaps 8 (r = 0.99)"}


def main():
    a = table_args(__doc__)
    by = collections.defaultdict(dict)
    for line in open_text(a.runs):
        r = json.loads(line)
        by[(r["setting"], r["method"])][(r["function"], r["init"])] = r
    settings = [s for s in ("similar", "dissimilar") if any(k[0] == s for k in by)]
    methods = [m for m in ("gp-ucb", "rm-uniform", "rm") if any(k[1] == m for k in by)]
    n = max(len(v) for v in by.values())
    T = len(next(iter(next(iter(by.values())).values()))["regret_curve"])
    L = [f"# RM-GP-UCB synthetic study: {n} paired runs (functions × inits), {T} iterations", ""]
    goals = []
    for s in settings:
        L += [f"## {TITLE[s]}", "", "| method | mean regret, iterations 1–20 | regret at 30 | "
              f"regret at {T} | paired vs GP-UCB (1–20) | paired vs GP-UCB (at 30) |",
              "|---|---|---|---|---|---|"]
        auc, r30 = {}, {}
        for m in methods:
            runs = by[(s, m)]
            auc[m] = {k: sum(r["regret_curve"][:20]) / 20 for k, r in runs.items()}
            r30[m] = {k: r["regret_curve"][min(29, T - 1)] for k, r in runs.items()}
            rT = {k: r["regret_curve"][-1] for k, r in runs.items()}
            row = (f"| {LABEL[m]} | {mean_se(list(auc[m].values()))[0]:.4f} ± "
                   f"{mean_se(list(auc[m].values()))[1]:.4f} | {mean_se(list(r30[m].values()))[0]:.4f}"
                   f" | {mean_se(list(rT.values()))[0]:.4f} |")
            if m != "gp-ucb" and "gp-ucb" in methods:
                d1, d30 = paired(auc[m], auc["gp-ucb"]), paired(r30[m], r30["gp-ucb"])
                row += f" {d1[0]:+.4f} ± {d1[1]:.4f} | {d30[0]:+.4f} ± {d30[1]:.4f} |"
            else:
                row += " | |"
            L.append(row)
        if "rm" in methods and "gp-ucb" in methods:
            d1, d30 = paired(auc["rm"], auc["gp-ucb"]), paired(r30["rm"], r30["gp-ucb"])
            if s == "similar":
                goals.append(f"- gaps 0.05/0.05/4/4: RM-GP-UCB beats GP-UCB on regret over "
                             f"iterations 1–20 (paired {d1[0]:+.4f} ± {d1[1]:.4f}; beats = more "
                             f"than 2 SE): {'met' if -d1[0] > 2 * d1[1] else 'missed'}")
                runs = list(by[(s, "rm")].values())
                off = sum(1 for r in runs if len(r["weights"]) >= 10
                          and sum(r["weights"][9][2:]) < 0.1)
                goals.append(f"- ω₃ + ω₄ < 0.1 by t = 10 in {off} of {len(runs)} runs "
                             f"({100 * off / len(runs):.0f} %; goal ≥ 90 %): "
                             f"{'met' if off >= 0.9 * len(runs) else 'missed'}")
            else:
                goals.append(f"- all gaps 8: RM-GP-UCB matches GP-UCB at T = 30 (paired "
                             f"{d30[0]:+.4f} ± {d30[1]:.4f}; within 2 SE or better): "
                             f"{'met' if d30[0] <= 2 * d30[1] else 'missed'}")
        L.append("")
    L += ["## Goals", ""] + goals
    emit(L, a.out)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(settings) + 1, figsize=(5 * (len(settings) + 1), 4))
        for ax, s in zip(axes, settings):
            for m in methods:
                runs = list(by[(s, m)].values())
                curve = [sum(r["regret_curve"][t] for r in runs) / len(runs) for t in range(T)]
                ax.plot(range(1, T + 1), curve, label=LABEL[m])
            ax.set_title(TITLE[s])
            ax.set_xlabel("iterations")
            ax.set_ylabel("mean simple regret")
            ax.set_yscale("log")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        if ("similar", "rm") in by:
            runs = list(by[("similar", "rm")].values())
            for i in range(len(runs[0]["weights"][0])):
                w = [sum(r["weights"][t][i] for r in runs) / len(runs) for t in range(T)]
                axes[-1].plot(range(1, T + 1), w, label=f"ω{i + 1} (gap {[0.05, 0.05, 4, 4][i]})")
            axes[-1].set_title("RM-GP-UCB meta-weights (gaps 0.05, 0.05, 4, 4)")
            axes[-1].set_xlabel("iterations")
            axes[-1].set_ylabel("mean weight")
            axes[-1].grid(alpha=0.3)
            axes[-1].legend(fontsize=8)
        fig.tight_layout()
        save_png(fig, a.plot, dpi=80)


if __name__ == "__main__":
    main()
