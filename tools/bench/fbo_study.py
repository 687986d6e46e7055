#!/usr/bin/env python3
"""DP-FTS-DE / FTS utility study with `advbo fbo` (Dai 2021 thesis, Sec. 6.5.1 and App. C.2;
): runs every configuration on the same seeds (a seed fixes the function, the agents'
objectives and the initial points, so configurations are paired by seed), then writes the
table with paired differences, the goal checks, the S sweep with the fraction of clipped
vectors, epsilon against utility, and PNG curves. Records go to OUT_DIR/runs.jsonl as they
finish (a rerun skips what is there).

Usage: fbo_study.py --advbo build/advbo --out-dir DIR [--seeds 5] [--jobs 2] [--real]
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, records_path  # noqa: E402

NODP = "--z 0 --q 1 --clip 1e9"
SYNTHETIC = [  # (key, label, arguments); N = 200, T = 40, N_init = 10, M = 50, p_t = 1 - 1/sqrt(t), p_1 = 0
    ("ts", "TS", "--algo ts"),
    ("fts-ch5", "FTS, Ch. 5 (one other agent's omega)", "--algo fts"),
    ("fts", "FTS (server average, P = 1)", f"--regions 1 {NODP}"),
    ("fts-de2", "FTS-DE, P = 2", f"--regions 2 {NODP}"),
    ("fts-de3", "FTS-DE, P = 3", f"--regions 3 {NODP}"),
    ("de2-uniform", "FTS-DE P = 2, equal weights (ablation b)", f"--regions 2 {NODP} --uniform-weights"),
    ("de2-global", "FTS-DE P = 2, global initialisation (ablation a)", f"--regions 2 {NODP} --no-local-init"),
    ("dp-fts", "DP-FTS (P = 1), q = 0.25, z = 1, S = 8", "--regions 1 --q 0.25 --z 1 --clip 8"),
    ("dp", "DP-FTS-DE (P = 2), q = 0.25, z = 1, S = 11", "--regions 2 --q 0.25 --z 1 --clip 11"),
] + [(f"S{s}", f"DP-FTS-DE, S = {s}", f"--regions 2 --q 0.25 --z 1 --clip {s}")
     for s in (2, 5, 20, 40)] + [
    (f"q{q}", f"DP-FTS-DE, q = {q}, z = 1", f"--regions 2 --q {q} --z 1 --clip 11")
     for q in (0.15, 0.5)] + [
    (f"z{z}", f"DP-FTS-DE, q = 0.25, z = {z}", f"--regions 2 --q 0.25 --z {z} --clip 11")
     for z in (1.2, 1.5)]
REAL = [  # mnist-lssvm: 20 agents, T = 30, 3 initial points, p_t = 1 - 1/t^2, weights (10, 30)
    ("r-ts", "TS", "--algo ts"),
    ("r-fts", "FTS, Ch. 5", "--algo fts"),
    ("r-fts-de", "FTS-DE, P = 2", f"--regions 2 {NODP}"),
    ("r-dp", "DP-FTS-DE, P = 2, q = 0.25, z = 1, S = 11", "--regions 2 --q 0.25 --z 1 --clip 11"),
]


def run(advbo, key, args, seed, family_args):
    with tempfile.TemporaryDirectory() as d:
        cmd = f"{advbo} fbo {family_args} {args} --seed {seed} -q --out-dir {d}"
        subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL)
        summary = json.load(open(os.path.join(d, "summary.json")))
        with open(os.path.join(d, "curves.csv")) as f:
            curve = [float(r[1]) for r in list(csv.reader(f))[1:]]
    rec = {"key": key, "seed": seed, "curve": curve, "summary": summary}
    return rec


def table(recs, keys, labels, title, lower_better=True, T=None):
    by = {k: {r["seed"]: r for r in recs if r["key"] == k} for k in keys}
    keys = [k for k in keys if by[k]]
    T = T or len(next(iter(by[keys[0]].values()))["curve"]) - 1
    auc = {k: {s: sum(r["curve"][1:T + 1]) / T for s, r in by[k].items()} for k in keys}
    fin = {k: {s: r["curve"][T] for s, r in by[k].items()} for k in keys}
    base = keys[0]
    L = [f"## {title}", "",
         f"| configuration | mean over rounds 1–{T} | at round {T} | − {labels[base]} (1–{T}, paired) | "
         "clipped | ε |", "|---|---|---|---|---|---|"]
    for k in keys:
        m, se = mean_se(list(auc[k].values()))
        f = mean_se(list(fin[k].values()))
        d = paired(auc[k], auc[base]) if k != base else None
        one = next(iter(by[k].values()))["summary"]
        clip = one.get("clipped_fraction")
        clip_s = "" if clip is None or one.get("z", 0) == 0 else \
            f"{100 * mean_se([r['summary']['clipped_fraction'] for r in by[k].values()])[0]:.2f} %"
        eps = "" if not one.get("privacy") else f"{one['privacy']['epsilon']:.2f}"
        L.append(f"| {labels[k]} | {m:.4f} ± {se:.4f} | {f[0]:.4f} ± {f[1]:.4f} | "
                 f"{'' if d is None else f'{d[0]:+.4f} ± {d[1]:.4f}'} | {clip_s} | {eps} |")
    return L, auc


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--advbo", default="build/advbo")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--real", action="store_true", help="also the mnist-lssvm family")
    p.add_argument("--mnist", default="data/mnist")
    p.add_argument("--real-seeds", type=int, default=3)
    p.add_argument("--table-only", action="store_true",
                   help="print the table of OUT_DIR's records (runs.jsonl or .jsonl.gz) and exit: "
                        "nothing is run or written")
    a = p.parse_args()
    if not a.table_only:
        os.makedirs(a.out_dir, exist_ok=True)
    path = os.path.join(a.out_dir, "runs.jsonl")
    done = set()
    recs = []
    if os.path.exists(records_path(path)):
        for line in open_text(path):
            r = json.loads(line)
            recs.append(r)
            done.add((r["key"], r["seed"]))
    jobs = [(k, args, s, "--family synthetic --agents 200 --rounds 40 --schedule sqrt-all")
            for k, _, args in SYNTHETIC for s in range(a.seeds)]
    if a.real:
        jobs += [(k, args, s, f"--family mnist-lssvm --mnist-dir {a.mnist} --agents 20 --rounds 30 "
                  "--schedule square --weight-hold 10 --weight-decay 30") for k, _, args in REAL
                 for s in range(a.real_seeds)]
    todo = [] if a.table_only else [j for j in jobs if (j[0], j[2]) not in done]
    with (open(os.devnull, "w") if a.table_only else open(path, "a")) as out, \
            cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(run, a.advbo, *j) for j in todo]
        for i, f in enumerate(cf.as_completed(futs)):
            r = f.result()
            out.write(json.dumps(r) + "\n")
            out.flush()
            recs.append(r)
            print(f"\r{i + 1}/{len(todo)} runs", end="", file=sys.stderr, flush=True)
    if todo:
        print(file=sys.stderr)
    labels = {k: l for k, l, _ in SYNTHETIC + REAL}
    L = ["# Federated BO with `advbo fbo`: FTS, FTS-DE and DP-FTS-DE (Dai 2021 thesis, Ch. 5–6)", "",
         "Synthetic family (Sec. 6.5.1): f ~ GP (SE, ℓ = 0.03) on 1,000 points of [0, 1] scaled into "
         "[0, 1]; N = 200 agents with f ± 0.02 per point; 10 initial points per agent (from its "
         "sub-region with DE); M = 50 features; p_t = 1 − 1/√t for all t (p₁ = 0); T = 40. Metric: simple regret "
         "averaged over the 200 agents; mean ± SE over seeds (a seed fixes function, agents and "
         "initial points: paired). ε at δ = N^−1.1 for the server's 40 releases.", ""]
    syn_keys = [k for k, _, _ in SYNTHETIC]
    t, auc = table(recs, syn_keys, labels, f"Synthetic, N = 200 agents × {a.seeds} seeds")
    L += t + [""]
    goals = []

    def beats(x, y, text):
        if x in auc and y in auc and auc[x] and auc[y]:
            d = paired(auc[x], auc[y])
            goals.append(f"- {text}: {d[0]:+.4f} ± {d[1]:.4f} → "
                         f"{'met' if d[0] < -2 * d[1] else 'MISSED (not more than 2 paired SE better)'}")
    beats("fts-de2", "fts", "FTS-DE (P = 2) beats FTS (P = 1)")
    beats("fts", "ts", "FTS (P = 1) beats TS")
    beats("fts-de2", "de2-uniform", "FTS-DE beats its equal-weights ablation")
    beats("fts-de2", "de2-global", "FTS-DE beats its global-initialisation ablation")
    beats("dp", "ts", "DP-FTS-DE (q = 0.25, z = 1, S = 11) beats TS")
    if a.real:
        rk = [k for k, _, _ in REAL]
        t2, auc2 = table(recs, rk, labels, f"mnist-lssvm family: 20 agents × {a.real_seeds} seeds, mean best "
                         "validation error (lower is better)")
        L += t2 + [""]
    L += ["## Goals (DP-FTS-DE, synthetic family)", ""] + goals
    if a.table_only:
        print("\n".join(L))
        return
    emit(L, os.path.join(a.out_dir, "table.md"))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    groups = [["ts", "fts", "fts-de2", "fts-de3", "de2-uniform", "de2-global"],
              ["ts", "dp-fts", "dp", "q0.15", "q0.5", "z1.2", "z1.5"]]
    for ax, keys, title in zip(axes, groups, ["(a) DE and its ablations (cf. Fig. 6.3a, C.2)",
                                              "(b) privacy-utility (cf. Fig. 6.4, C.1)"]):
        for k in keys:
            rs = [r for r in recs if r["key"] == k]
            if not rs:
                continue
            T = len(rs[0]["curve"])
            ax.plot(range(T), [sum(r["curve"][t] for r in rs) / len(rs) for t in range(T)],
                    label=labels[k], lw=2 if k == "ts" else 1)
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_ylabel("simple regret (mean over agents)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    png = os.path.join(a.out_dir, "curves.png")
    fig.savefig(png + ".partial.png", dpi=110)
    os.replace(png + ".partial.png", png)


if __name__ == "__main__":
    main()
