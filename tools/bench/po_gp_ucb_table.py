#!/usr/bin/env python3
"""PO-GP-UCB experiments (Kharkovskii et al. 2020, Sec. 4 / App. A) from tools/bench/bench_po_gp_ucb.sh:
simple regret after T iterations (in units of the function's standard deviation, mean ± SE over
paired runs) for non-private GP-UCB and PO-GP-UCB per (epsilon, r), the paired differences the
issue's goals name, the paper's printed values next to ours, and a PNG of the epsilon sweeps.

Usage: po_gp_ucb_table.py RUNS.jsonl [--out TABLE.md] [--plot CURVES.png]
"""
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, save_png, table_args  # noqa: E402

# The paper's Tables 1-3 (synthetic, S_50 in units of sigma_y) and 10-12 (Branin; not printed
# in our copy of the text as numbers we can read reliably, so only the synthetic ones are shown).
PAPER = {("synthetic", 1.1): {3: 0.073, 6: 0.038, 8: 0.018, 10: 0.014, 15: 0.118, 20: 0.137},
         ("synthetic", 1.3): {3: 0.091, 9: 0.009, 12: 0.019, 15: 0.008, 20: 0.127, 30: 0.134},
         ("synthetic", 1.5): {5: 0.05, 10: 0.021, 15: 0.003, 20: 0.002, 30: 0.094, 50: 0.142}}


def main():
    a = table_args(__doc__)
    by = collections.defaultdict(dict)
    for line in open_text(a.runs):
        r = json.loads(line)
        by[(r["study"], r["method"])][r["run"]] = r
    studies = [s for s in ("synthetic", "branin") if any(k[0] == s for k in by)]
    L, goals = [], []
    final = {}
    for s in studies:
        methods = sorted((m for (st, m) in by if st == s),
                         key=lambda m: (-1, 0) if m == "gp-ucb" else
                         (float(m.split(":")[1]), int(m.split(":")[2])))
        n = max(len(by[(s, m)]) for m in methods)
        T = len(next(iter(by[(s, methods[0])].values()))["regret_curve"])
        final[s] = {m: {k: r["regret_curve"][-1] for k, r in by[(s, m)].items()} for m in methods}
        L += [f"## {s}: {n} paired runs, T = {T}", "",
              "| method | ln ε | r | branch | σ_min | ω | S_T (σ_y units) | paired − GP-UCB | paper |",
              "|---|---|---|---|---|---|---|---|---|"]
        for m in methods:
            rs = by[(s, m)]
            one = next(iter(rs.values()))
            mv, se = mean_se(list(final[s][m].values()))
            if m == "gp-ucb":
                L.append(f"| non-private GP-UCB | | | | | | {mv:.4f} ± {se:.4f} | | |")
                continue
            le, r = float(m.split(":")[1]), int(m.split(":")[2])
            d = paired(final[s][m], final[s]["gp-ucb"]) if "gp-ucb" in methods else (math.nan,) * 2
            paper = PAPER.get((s, le), {}).get(r, "")
            L.append(f"| PO-GP-UCB | {le:g} | {r} | {'else (lifted)' if one['lifted'] else 'if'} | "
                     f"{one['sigma_min']:.2f} | {one['omega']:.2f} | {mv:.4f} ± {se:.4f} | "
                     f"{d[0]:+.4f} ± {d[1]:.4f} | {paper} |")
        L.append("")

    def diff(s, m1, m2):
        if (s, m1) not in by or (s, m2) not in by:
            return None
        return paired(final[s][m1], final[s][m2])

    def check(text, d, want_negative, tol=None):
        if d is None:
            return
        if tol is not None:
            ok = abs(d[0]) <= tol
            verdict = "met" if ok else f"MISSED by {abs(d[0]) - tol:.4f}"
        else:
            ok = d[0] < -2 * d[1] if want_negative else d[0] > 2 * d[1]
            verdict = "met" if ok else "MISSED (not more than 2 paired SE)"
        goals.append(f"- {text}: {d[0]:+.4f} ± {d[1]:.4f} → {verdict}")

    # (the largest epsilon's r = 10 run in the if branch, the r-sweep epsilon, low / high epsilon)
    for s, (e_if, e13, e_lo, e_hi) in {"synthetic": ("1.1", "1.3", "0", "1.1"),
                                       "branin": ("2.3", "2.5", "0", "2.3")}.items():
        r_best, r_lo, r_hi = "15", "3", "30"
        if s not in studies:
            continue
        # the if-branch run at the r the guideline picks (ChooseProjectionDim: r = 10 at the
        # largest epsilon of the sweep) within 0.03 sigma_y of non-private GP-UCB
        m = f"po:{e_if}:10"
        if (s, m) in by and not next(iter(by[(s, m)].values()))["lifted"]:
            check(f"{s}: {m} (if branch, the guideline's r) − GP-UCB within 0.03 σ_y",
                  diff(s, m, "gp-ucb"), None, 0.03)
        check(f"{s}: ε = e^{e13}, r = {r_best} beats r = {r_hi}",
              diff(s, f"po:{e13}:{r_best}", f"po:{e13}:{r_hi}"), True)
        check(f"{s}: ε = e^{e13}, r = {r_best} beats r = {r_lo}",
              diff(s, f"po:{e13}:{r_best}", f"po:{e13}:{r_lo}"), True)
        check(f"{s}: ε = e^{e_lo} worse than e^{e_hi} (r = 10)",
              diff(s, f"po:{e_lo}:10", f"po:{e_hi}:10"), False)
    text = ["# PO-GP-UCB: simple regret after T iterations", "",
            "S_T = f(x*) − max_t f(x_t), divided by the function's standard deviation over the "
            "grid (the paper's σ_y units); mean ± SE over paired runs (same function and initial "
            "rows for every method; the projection is drawn per run and method). 'paper' = "
            "Kharkovskii et al. 2020 Tables 1–3 (one GP draw on a grid whose domain the paper "
            "does not give). No differential-privacy claim is made: the release is one linear map "
            "of all records (tests reconstruct records from d + 1 known ones).", ""] + L
    if goals:
        text += ["## Goals", ""] + goals
    emit(text, a.out)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(studies), figsize=(6 * len(studies), 4), squeeze=False)
        for ax, s in zip(axes[0], studies):
            for (st, m), rs in sorted(by.items()):
                if st != s or not (m == "gp-ucb" or m.endswith(":10")):
                    continue
                T = len(next(iter(rs.values()))["regret_curve"])
                mean = [sum(r["regret_curve"][t] for r in rs.values()) / len(rs) for t in range(T)]
                ax.plot(range(1, T + 1), mean,
                        label="non-private GP-UCB" if m == "gp-ucb" else
                        f"PO-GP-UCB ε = e^{m.split(':')[1]}, r = 10", lw=2 if m == "gp-ucb" else 1)
            ax.set_yscale("log")
            ax.set_xlabel("iteration")
            ax.set_ylabel("simple regret / σ_y")
            ax.set_title(f"{s} (cf. paper Fig. {'2a' if s == 'synthetic' else '3'})")
            ax.legend(fontsize=7)
        fig.tight_layout()
        save_png(fig, a.plot, dpi=120)


if __name__ == "__main__":
    main()
