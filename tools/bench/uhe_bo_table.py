#!/usr/bin/env python3
"""UHE-BO synthetic study (Ha et al., Sec. 7 / App. D) from tools/bench/bench_uhe_bo.sh: final simple
regret and GP-fit MSE on 20,000 uniform points (mean ± SE over paired seeds) per function and
method, the paired UHE-BO − MAP-BO differences, the issue's goal checks, and a PNG of the mean
regret curves.

Usage: uhe_bo_table.py RUNS.jsonl [--out TABLE.md] [--plot CURVES.png]
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, save_png, table_args  # noqa: E402

FUNCS = ["branin", "hartmann3", "deceptive", "h1"]
TITLE = {"branin": "Branin", "hartmann3": "Hartmann-3", "deceptive": "Deceptive (n = 3)",
         "h1": "h1"}
METHODS = ["uhe", "map", "ra", "random-exp3", "random"]
LABEL = {"uhe": "UHE-BO", "map": "MAP-BO", "ra": "RA-BO", "random-exp3": "Random+EXP3",
         "random": "Random"}


def main():
    a = table_args(__doc__)
    by = collections.defaultdict(dict)
    for line in open_text(a.runs):
        r = json.loads(line)
        by[(r["function"], r["method"])][r["run"]] = r
    funcs = [f for f in FUNCS if any(k[0] == f for k in by)]
    methods = [m for m in METHODS if any(k[1] == m for k in by)]
    nruns = max(len(v) for v in by.values())
    horizon = next(iter(next(iter(by.values())).values()))["horizon"]
    L = [f"# UHE-BO synthetic study: {nruns} paired seeds, T = {horizon} after d + 1 Sobol points",
         "", "Final simple regret (mean ± SE):", "",
         "| method | " + " | ".join(TITLE[f] for f in funcs) + " |", "|---|" + "---|" * len(funcs)]
    reg, mse = {}, {}
    for m in methods:
        cells = []
        for f in funcs:
            runs = by.get((f, m), {})
            reg[(f, m)] = {r: x["regret"] for r, x in runs.items()}
            mse[(f, m)] = {r: x["fit_mse"] for r, x in runs.items()}
            cells.append("{:.4f} ± {:.4f}".format(*mean_se(list(reg[(f, m)].values()))))
        L.append(f"| {LABEL[m]} | " + " | ".join(cells) + " |")
    L += ["", "GP-fit MSE of the final model on 20,000 uniform points (mean ± SE; hyperparameters "
          "from the method's own loss):", "",
          "| method | " + " | ".join(TITLE[f] for f in funcs) + " |", "|---|" + "---|" * len(funcs)]
    for m in methods:
        cells = ["{:.4g} ± {:.2g}".format(*mean_se(list(mse[(f, m)].values()))) for f in funcs]
        L.append(f"| {LABEL[m]} | " + " | ".join(cells) + " |")
    if "uhe" in methods and "map" in methods:
        L += ["", "Paired UHE-BO − MAP-BO (negative = UHE-BO better):", "",
              "| difference | " + " | ".join(TITLE[f] for f in funcs) + " |",
              "|---|" + "---|" * len(funcs)]
        dr = {f: paired(reg[(f, "uhe")], reg[(f, "map")]) for f in funcs}
        dm = {f: paired(mse[(f, "uhe")], mse[(f, "map")]) for f in funcs}
        L.append("| regret | " + " | ".join("{:+.4f} ± {:.4f}".format(*dr[f]) for f in funcs) + " |")
        L.append("| fit MSE | " + " | ".join("{:+.4g} ± {:.2g}".format(*dm[f]) for f in funcs) + " |")
        lower = [f for f in funcs if mean_se(list(mse[(f, "uhe")].values()))[0]
                 < mean_se(list(mse[(f, "map")].values()))[0]]
        beats = [f for f in ("deceptive", "h1") if f in funcs and dr[f][0] + dr[f][1] < 0]
        matches = [f for f in ("branin", "hartmann3") if f in funcs
                   and abs(dr[f][0]) <= 2 * dr[f][1] + 1e-12 or (f in funcs and dr[f][0] < 0)]
        L += ["", "Goals:", "",
              f"- UHE-BO's fit MSE below MAP-BO's on {len(lower)} of {len(funcs)} functions "
              f"(goal >= 3): {'met' if len(lower) >= 3 else 'missed'} "
              f"({', '.join(TITLE[f] for f in lower)})",
              f"- UHE-BO beats MAP-BO on final regret (paired mean + 1 SE < 0) on Deceptive or h1: "
              f"{'met' if beats else 'missed'} ({', '.join(TITLE[f] for f in beats) or 'neither'})",
              f"- and matches it on Branin and Hartmann-3 (paired difference within 2 SE or "
              f"better): {'met' if len(matches) == 2 else 'missed'} "
              f"({', '.join(TITLE[f] for f in matches) or 'neither'})"]
    emit(L, a.out)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(funcs), figsize=(5 * len(funcs), 4), squeeze=False)
        for ax, f in zip(axes[0], funcs):
            for m in methods:
                runs = list(by[(f, m)].values())
                n = min(len(r["regret_curve"]) for r in runs)
                curve = [sum(r["regret_curve"][i] for r in runs) / len(runs) for i in range(n)]
                ax.plot(range(1, n + 1), curve, label=LABEL[m])
            ax.set_title(TITLE[f])
            ax.set_xlabel("evaluations")
            ax.set_ylabel("mean simple regret")
            ax.set_yscale("log")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        save_png(fig, a.plot, dpi=80)


if __name__ == "__main__":
    main()
