#!/usr/bin/env python3
"""Table of tools/bench/bench_r2b2_bound.sh: per setting and attacker, successful
attack rounds (of 150, mean +- s.e. over runs) against no defender, a random defender, the
R2-B2-Lite defender as the thesis has it and with the tuned learning ("tuned"), and
the omniscient defender (the bound), each defender's cut against no defender, the tuned cut as
a share of the omniscient cut, paired per-run differences, the
defender's prediction match rate, and the runs where a defender let through more successes than
no defender. Stdlib only.

    /usr/bin/python3 tools/bench/r2b2_bound_table.py [OUT] [--markdown FILE]
"""
import argparse
import json
import math
import pathlib

DEFENDERS = ["none", "random", "r2b21-lite", "r2b21-lite-tuned", "omniscient"]
LABEL = {"none": "no defender", "random": "random", "r2b21-lite": "R2-B2-Lite",
         "r2b21-lite-tuned": "R2-B2-Lite, tuned", "omniscient": "omniscient (bound)"}
SETTINGS = {"mnist_6590": "MNIST image 6590, 10 inits",
            "mnist_10": "MNIST first 10 images",
            "cifar10_10": "CIFAR-10 first 10 images"}
WHERE = {"mnist_6590": "--game mnist --indices 6590 --inits 10",
         "mnist_10": "--game mnist --games 10 --inits 1",
         "cifar10_10": "--game cifar10 --games 10 --inits 1"}


def mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    se = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n) if n > 1 else 0.0
    return m, se


def load(out):
    runs = {}
    for summary in sorted(pathlib.Path(out).glob("*/*/summary.json")):
        setting, name = summary.parent.parent.name, summary.parent.name
        attacker, defender = name.split("-vs-", 1)
        row = json.loads(summary.read_text())["results"][0]
        runs[(setting, attacker, defender)] = row
    return runs


def table(runs):
    lines = ["| setting | attacker | " + " | ".join(LABEL[d] for d in DEFENDERS) +
             " | R2-B2 cut | tuned cut | bound cut | tuned / bound | tuned − R2-B2 (paired) | "
             "tuned − bound (paired) | defender match | runs above none (R2-B2 / tuned / bound) |",
             "| --- | --- |" + " --- |" * (len(DEFENDERS) + 8)]
    for setting in SETTINGS:
        for attacker in ("gpucb", "ts"):
            have = {d: runs.get((setting, attacker, d)) for d in DEFENDERS}
            if have["none"] is None:
                continue
            succ = {d: r["per_run_successes"] for d, r in have.items() if r}
            cells = []
            for d in DEFENDERS:
                if d in succ:
                    m, se = mean_se(succ[d])
                    cells.append(f"{m:.1f} ± {se:.1f}")
                else:
                    cells.append("–")
            none = sum(succ["none"])

            def cut(d):
                return 1 - sum(succ[d]) / none if d in succ and none > 0 else None

            def paired(a, b):
                if a not in succ or b not in succ:
                    return "–"
                m, se = mean_se([x - y for x, y in zip(succ[a], succ[b])])
                return f"{m:+.1f} ± {se:.1f}"

            def above(d):
                if d not in succ:
                    return "–"
                return str(sum(x > y for x, y in zip(succ[d], succ["none"])))

            c_r, c_t, c_o = cut("r2b21-lite"), cut("r2b21-lite-tuned"), cut("omniscient")
            ratio = f"{c_t / c_o:.0%}" if c_t is not None and c_o else "–"
            pred = have["r2b21-lite"]["predictions"]["defender"] if have["r2b21-lite"] else None
            match = (f"{pred['match_rate']:.0%} of {pred['rounds_predicted']}"
                     if pred and pred.get("match_rate") is not None else "–")
            fmt = lambda c: f"{c:.1%}" if c is not None else "–"  # noqa: E731
            lines.append(f"| {SETTINGS[setting]} | {attacker} | " + " | ".join(cells) +
                         f" | {fmt(c_r)} | {fmt(c_t)} | {fmt(c_o)} | {ratio} | "
                         f"{paired('r2b21-lite-tuned', 'r2b21-lite')} | "
                         f"{paired('r2b21-lite-tuned', 'omniscient')} | {match} | "
                         f"{above('r2b21-lite')} / {above('r2b21-lite-tuned')} / "
                         f"{above('omniscient')} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="tools/results/r2b2_bound")
    ap.add_argument("--markdown", help="also write the table into this file")
    args = ap.parse_args()
    runs = load(args.out)
    if not runs:
        raise SystemExit(f"{args.out}: no */*/summary.json")
    text = table(runs)
    text += "\n\nCommands: `bash tools/bench/bench_r2b2_bound.sh` plays, per setting, " \
            "`advbo game <where> --attacker A --defender D --rounds 150 --seed 0`, with <where>:\n"
    text += "\n".join(f"- {SETTINGS[s]}: `{WHERE[s]}`" for s in SETTINGS) + "\n"
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text + "\n")


if __name__ == "__main__":
    main()
