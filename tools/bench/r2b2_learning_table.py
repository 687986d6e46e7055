#!/usr/bin/env python3
"""Paired table of the defender learning changes tried on the R2-B2-Lite defender (same seeds as the bench
of tools/bench/bench_r2b2_bound.sh): successful rounds of 150 per variant, the paired
difference to the thesis' R2-B2-Lite defender (mean +- s.e. over runs), and the cut against
no defender beside the omniscient bound. Variants live in OUT/learning/SETTING/ATTACKER-NAME/.
Stdlib only.

    /usr/bin/python3 tools/bench/r2b2_learning_table.py [OUT] [--setting mnist_6590]
        [--attacker gpucb] [--markdown FILE]
"""
import argparse
import json
import math
import pathlib


def per_run(path):
    return json.loads(pathlib.Path(path).read_text())["results"][0]["per_run_successes"]


def options(path):
    s = json.loads(pathlib.Path(path).read_text())
    parts = []
    if s.get("defender_beta") and s["defender_beta"] != s.get("beta"):
        parts.append(f"--defender-beta {s['defender_beta']}")
    if s.get("defender_candidates") and s["defender_candidates"] != s.get("candidates"):
        parts.append(f"--defender-candidates {s['defender_candidates']}")
    if s.get("defender_vertices"):
        parts.append("--defender-vertices")
    if s.get("defender_kernel", "joint") != "joint":
        parts.append(f"--defender-kernel {s['defender_kernel']}")
    if s.get("defender_observes"):
        parts.append("--defender-observes")
    if s.get("defender_strength"):
        parts.append("--defender-strength")
    defender = s["results"][0]["matchup"].split("-vs-", 1)[1]
    if defender != "1L":  # a level-0 defender, e.g. gpucb: BO over its own action only
        parts.insert(0, f"--defender {defender}")
    return " ".join(parts) or "(the thesis' R2-B2-Lite)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="tools/results/r2b2_bound")
    ap.add_argument("--setting", default="mnist_6590")
    ap.add_argument("--attacker", default="gpucb")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    here = out / a.setting
    base = per_run(here / f"{a.attacker}-vs-r2b21-lite/summary.json")
    none = sum(per_run(here / f"{a.attacker}-vs-none/summary.json"))
    bound = per_run(here / f"{a.attacker}-vs-omniscient/summary.json")
    rows = [("(the thesis' R2-B2-Lite)", base)]
    tuned = here / f"{a.attacker}-vs-r2b21-lite-tuned/summary.json"
    if tuned.exists():
        rows.append((options(tuned), per_run(tuned)))
    for p in sorted((out / "learning" / a.setting).glob(f"{a.attacker}-*/summary.json")):
        if (options(p), per_run(p)) not in rows:  # the bench's tuned run, played again
            rows.append((options(p), per_run(p)))
    lines = [f"| defender (beside `--attacker {a.attacker} --defender r2b2:1-lite`) | "
             "successful rounds | "
             "paired − thesis' Lite | cut vs none | share of the bound's cut | runs above none |",
             "| --- | --- | --- | --- | --- | --- |"]
    none_runs = per_run(here / f"{a.attacker}-vs-none/summary.json")
    c_bound = 1 - sum(bound) / none
    for name, runs in sorted(rows, key=lambda r: sum(r[1])):
        n = len(runs)
        m = sum(runs) / n
        se = math.sqrt(sum((x - m) ** 2 for x in runs) / (n - 1) / n)
        d = [x - y for x, y in zip(runs, base)]
        dm = sum(d) / n
        dse = math.sqrt(sum((x - dm) ** 2 for x in d) / (n - 1) / n)
        cut = 1 - sum(runs) / none
        above = sum(x > y for x, y in zip(runs, none_runs))
        lines.append(f"| {name} | {m:.1f} ± {se:.1f} | {dm:+.1f} ± {dse:.1f} | {cut:.1%} | "
                     f"{cut / c_bound:.0%} | {above} of {n} |")
    text = "\n".join(lines) + (f"\n\nNo defender: {none / len(base):.1f} successful rounds per run;"
                               f" omniscient bound: {sum(bound) / len(bound):.1f} "
                               f"(cut {c_bound:.1%}).\n")
    print(text)
    if a.markdown:
        pathlib.Path(a.markdown).write_text(text)


if __name__ == "__main__":
    main()
