#!/usr/bin/python3
"""Markdown table of an R2-B2 adversarial-game run (tools/bench/bench_r2b2_adv.sh) next to the
Dai 2021 thesis (Table 8.1; App. E.6.2.1b for several images; App. E.6.2.2b, Fig. E.10, for
the GP-UCB / TS attackers). Stdlib only.

Usage: /usr/bin/python3 tools/bench/r2b2_table.py results/r2b2_adv/SETTING [--out FILE.md]
Reads SETTING/{one,multi}/<matchup>/summary.json; prints (and with --out writes) the table
and whether the ordering goal holds: reasoning one level higher helps whichever side does it
(1v0 > 0v0 > 0v1).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit  # noqa: E402

ORDER = ["0v0", "1v0", "1Lv0", "0v1", "0v1L", "2v1", "1v2",
         "gpucb-vs-none", "gpucb-vs-random", "gpucb-vs-r2b21-lite", "ts-vs-none", "ts-vs-random",
         "ts-vs-r2b21-lite"]
LABEL = {"0v0": "0 vs 0", "1v0": "1 vs 0", "1Lv0": "1 vs 0 (Lite)", "0v1": "0 vs 1",
         "0v1L": "0 vs 1 (Lite)", "2v1": "2 vs 1", "1v2": "1 vs 2",
         "gpucb-vs-none": "GP-UCB attacker, no defender",
         "gpucb-vs-random": "GP-UCB attacker vs random-search (level-0) defender",
         "gpucb-vs-r2b21-lite": "GP-UCB attacker vs level-1 Lite defender",
         "ts-vs-random": "TS attacker vs random-search (level-0) defender",
         "ts-vs-none": "TS attacker, no defender",
         "ts-vs-r2b21-lite": "TS attacker vs level-1 Lite defender"}
# Successful attacks per 150 rounds in the thesis: one image (Table 8.1, Fig. E.10) and
# several images (App. E.6.2.1b: 30 MNIST images, 9 CIFAR-10 images; 5 CIFAR rows given).
PAPER_ONE = {
    "mnist-random": [2.6, 12.8, 10.2, 0.8, 1.8, 3.0, 0.9],
    "mnist-gpmw": [4.3, 6.0, 6.8, 0.4, 1.0, 5.2, 0.4],
    "cifar10-random": [70.1, 113.1, 99.7, 25.2, 29.7, 70.9, 54.0],
    "outside": {"gpucb-vs-none": 70.1, "ts-vs-none": 67.0, "gpucb-vs-r2b21-lite": 0.8,
                "ts-vs-r2b21-lite": 0.7},
}
PAPER_MULTI = {
    "mnist-random": [20.4, 23.0, 21.3, 9.7, 11.0, 12.4, 7.9],
    "cifar10-random": [32.9, 43.0, 38.8, 12.2, 21.0, None, None],
}


def load(path):
    rows = {}
    for scope in ("one", "multi"):
        d = os.path.join(path, scope)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            f = os.path.join(d, name, "summary.json")
            if os.path.isfile(f):
                with open(f) as fh:
                    s = json.load(fh)
                rows.setdefault(name, {})[scope] = s
    return rows


def paper(setting, name, scope):
    if "outside" in setting:
        return PAPER_ONE["outside"].get(name) if scope == "one" else None
    table = PAPER_ONE if scope == "one" else PAPER_MULTI
    vals = table.get(setting)
    if not vals or name not in ORDER[:7]:
        return None
    return vals[ORDER.index(name)]


def cell(s):
    if s is None:
        return "—"
    r = s["results"][0]
    return f"{r['successful_attacks']:.1f} ± {r['successful_attacks_stderr']:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="results/r2b2_adv/SETTING")
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--plot", help="also draw the attack-score curves (running mean over rounds, "
                                   "one line per matchup, as Fig. 8.3) into this PNG (matplotlib)")
    a = ap.parse_args()
    setting = os.path.basename(os.path.normpath(a.run))
    rows = load(a.run)
    if not rows:
        sys.exit(f"{a.run}: no finished games (summary.json) found")
    any_s = next(iter(next(iter(rows.values())).values()))
    one_img = next((v["one"]["images"][0] for v in rows.values() if "one" in v), None)
    multi_imgs = next((v["multi"]["images"] for v in rows.values() if "multi" in v), None)
    lines = [f"**{setting}** — successful attacks per {any_s['rounds']} rounds (mean ± s.e.); "
             f"eps {any_s.get('epsilon')}, S = {any_s['samples']}, seed {any_s['seed']}.",
             f"One image: test image {one_img}, 10 initialisations. "
             f"Several images: {multi_imgs}, 1 initialisation each.", "",
             "| levels (attacker vs defender) | one image | paper, one image | "
             "mean attack score (one) | 10 images | paper, several images |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name in ORDER:
        if name not in rows:
            continue
        r = rows[name]
        p1, pm = paper(setting, name, "one"), paper(setting, name, "multi")
        score = f"{r['one']['results'][0]['mean_attack_score']:.3f}" if "one" in r else "—"
        lines.append(f"| {LABEL[name]} | {cell(r.get('one'))} | {p1 if p1 is not None else '—'} | "
                     f"{score} | {cell(r.get('multi'))} | {pm if pm is not None else '—'} |")
    # The ordering goal: 1v0 > 0v0 > 0v1 (one level higher helps either side).
    for scope in ("one", "multi"):
        get = lambda n: rows.get(n, {}).get(scope, {}).get("results", [{}])[0].get("successful_attacks")
        a10, a00, a01 = get("1v0"), get("0v0"), get("0v1")
        if None not in (a10, a00, a01):
            ok = a10 > a00 > a01
            lines.append(f"\n{scope}: 1v0 {a10:.1f} > 0v0 {a00:.1f} > 0v1 {a01:.1f}: "
                         f"{'holds' if ok else 'does NOT hold'}")
        for att in ("gpucb", "ts"):
            b, d = get(f"{att}-vs-none"), get(f"{att}-vs-r2b21-lite")
            if None not in (b, d) and b > 0:
                lines.append(f"\n{scope}: the level-1 defender cuts the {att} attacker's successes "
                             f"{b:.1f} -> {d:.1f} ({100 * (b - d) / b:.1f} %; goal >= 90 %)")
            r = get(f"{att}-vs-random")
            if None not in (r, d) and r > 0:
                lines.append(f"\n{scope}: against the {att} attacker the level-1 defender vs a "
                             f"random-search defender: {r:.1f} -> {d:.1f} "
                             f"({100 * (r - d) / r:.1f} % fewer successes)")
    emit(lines, a.out)
    if a.plot:
        plot(a.run, setting, rows, a.plot)


def plot(run, setting, rows, path):
    """Running-mean attack score per matchup, one panel per scope (Fig. 8.3 style)."""
    import csv
    import itertools
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    scopes = [sc for sc in ("one", "multi") if any(sc in r for r in rows.values())]
    fig, axes = plt.subplots(1, len(scopes), figsize=(6 * len(scopes), 4), squeeze=False)
    for ax, scope in zip(axes[0], scopes):
        for name in ORDER:
            f = os.path.join(run, scope, name, "curves.csv")
            if not os.path.isfile(f):
                continue
            with open(f) as fh:
                reader = csv.DictReader(fh)
                col = next(c for c in reader.fieldnames if c.endswith("_attack_score"))
                ys = [float(r[col]) for r in reader]
            run_mean = [c / (t + 1) for t, c in enumerate(itertools.accumulate(ys))]
            ax.plot(range(1, len(ys) + 1), run_mean, label=LABEL[name])
        ax.set_title(f"{setting}: {'one image' if scope == 'one' else 'several images'}")
        ax.set_xlabel("round")
        ax.set_ylabel("attack score (running mean)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path + ".partial.png", dpi=90)
    os.replace(path + ".partial.png", path)


if __name__ == "__main__":
    main()
