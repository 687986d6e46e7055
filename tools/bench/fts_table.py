#!/usr/bin/env python3
"""FTS synthetic study (Dai 2021 thesis, Sec. 5.5.1 / Fig. 5.1) from tools/bench/bench_fts.sh: mean
simple regret over iterations 1-30 and at iterations 30 / 50 per setting (mean ± SE over paired
function × init runs), paired differences to standard TS, the share of iterations chosen by an
agent, the issue's goal checks, and a PNG with the three panels of Fig. 5.1.

Usage: fts_table.py RUNS.jsonl [--out TABLE.md] [--plot CURVES.png]
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, save_png, table_args  # noqa: E402


def label(r):
    if r["setting"] == "ts":
        return "TS (no messages)"
    return f"FTS d_n = {r['d']:g}, t_n = {r['t_n']}, M = {r['M']}, p_t = {r['schedule']}"


def main():
    a = table_args(__doc__)
    by = collections.defaultdict(dict)
    names = {}
    for line in open_text(a.runs):
        r = json.loads(line)
        by[r["setting"]][(r["function"], r["init"])] = r
        names[r["setting"]] = label(r)
    settings = list(by)
    n = max(len(v) for v in by.values())
    T = len(next(iter(by["ts"].values()))["regret_curve"])
    auc = {s: {k: sum(r["regret_curve"][:30]) / 30 for k, r in by[s].items()} for s in settings}
    L = [f"# FTS synthetic study: {n} paired runs (functions × inits), N = 50 agents, T = {T}", "",
         "Simple regret (f scaled into [0, 1]); mean ± SE; paired difference to TS on the same "
         "function and initial point (negative = better). The thesis' Fig. 5.1 plots these "
         "curves without printing values.", "",
         "| setting | mean regret, iterations 1–30 | at 30 | at 50 | − TS (1–30) | agent share |",
         "|---|---|---|---|---|---|"]
    for s in settings:
        m, se = mean_se(list(auc[s].values()))
        r30 = mean_se([r["regret_curve"][29] for r in by[s].values()])[0]
        rT = mean_se([r["regret_curve"][-1] for r in by[s].values()])[0]
        share = mean_se([r["agent_share"] for r in by[s].values()])[0]
        d = paired(auc[s], auc["ts"]) if s != "ts" else None
        L.append(f"| {names[s]} | {m:.4f} ± {se:.4f} | {r30:.4f} | {rT:.4f} | "
                 f"{'' if d is None else f'{d[0]:+.4f} ± {d[1]:.4f}'} | {share:.2f} |")
    goals = []
    for s in settings:
        r = next(iter(by[s].values()))
        if s == "ts":
            continue
        d = paired(auc[s], auc["ts"])
        if r["d"] <= 0.05:
            ok = d[0] < -2 * d[1]
            goals.append(f"- {names[s]}: beats TS over iterations 1–30: {d[0]:+.4f} ± {d[1]:.4f} → "
                         f"{'met' if ok else 'MISSED (not more than 2 paired SE better)'}")
        else:
            ok = d[0] <= 2 * d[1]
            goals.append(f"- {names[s]}: matches TS (not worse by more than 2 paired SE): "
                         f"{d[0]:+.4f} ± {d[1]:.4f} → {'met' if ok else 'MISSED'}")
    L += ["", "## Goals", ""] + goals
    emit(L, a.out)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        panels = [("(a) d_n = 0.02, t_n = 40", lambda r: r["d"] == 0.02 and r["t_n"] == 40),
                  ("(b) d_n = 0.02, t_n = 100", lambda r: r["d"] == 0.02 and r["t_n"] == 100),
                  ("(c) d_n = 1.2, t_n = 100", lambda r: r["d"] == 1.2)]
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        for ax, (title, keep) in zip(axes, panels):
            for s in settings:
                r0 = next(iter(by[s].values()))
                if s != "ts" and not keep(r0):
                    continue
                mean = [sum(r["regret_curve"][t] for r in by[s].values()) / len(by[s])
                        for t in range(T)]
                ax.plot(range(1, T + 1), mean, label=names[s].replace("FTS ", ""),
                        lw=2 if s == "ts" else 1)
            ax.set_title(f"{title} (cf. thesis Fig. 5.1)")
            ax.set_xlabel("iteration")
            ax.set_ylabel("simple regret")
            ax.legend(fontsize=6)
        fig.tight_layout()
        save_png(fig, a.plot, dpi=110)


if __name__ == "__main__":
    main()
