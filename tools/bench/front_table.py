#!/usr/bin/env python3
"""The README's benchmark table: one headline per area, each computed from the committed
records in tools/results (the same records as the benchmark page its row links to), so the
front page cannot drift from them. Stdlib only.

    /usr/bin/python3 tools/bench/front_table.py
"""
import gzip
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
R = os.path.join(ROOT, "tools", "results")


def records(path, attack):
    with gzip.open(os.path.join(R, path), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = [r for r in rows if r["attack"] == attack]
    if not rows:
        sys.exit(f"front_table: {path}: no records of {attack}")
    return rows


def summary(path):
    with open(os.path.join(R, path), encoding="utf-8") as f:
        return json.load(f)


def asr(rows):
    q = [r["queries"] for r in rows if r["success"]]
    return f"{100 * len(q) / len(rows):.1f} % (median {statistics.median(q):g} queries)"


def attack_row(name, other, label):
    a, b = records(f"bos2_vs_square/{name}/records.jsonl.gz", "bos2"), \
        records(f"bos2_vs_square/{name}/records.jsonl.gz", other)
    return f"BOS² **{asr(a)}**, {label} {asr(b)}; {len(a)} instances"


def distance_row():
    by = {e["attack"]: e["distance_at"]["1000"]["median"]
          for e in summary("distance/cifar10_l2_1000/summary.json")}
    return (f"median L2 at 1,000 queries: `bo-hl` **{by['bo-hl']:.3f}**, CGBA {by['cgba']:.3f}, "
            f"HopSkipJump {by['hsja']:.3f}; 100 images")


def evaluate_row():
    """advbo's combined and black-box numbers beside AutoAttack's own code on the same images
    (tools/results/autoattack_peer; the black-box number from the default 8-bit evaluation)."""
    parts, sizes = [], []
    for peer, eight in (("mnist_at_100", "mnist_at_200"), ("cifar10_at_500", "cifar10_at")):
        aa = summary(f"autoattack_peer/{peer}/autoattack/autoattack.json")
        s = summary(f"autoattack_peer/{peer}/advbo/summary.json")
        # The 8-bit folder may hold more images: read the same ones.
        with gzip.open(os.path.join(R, "at_evaluate", eight, "images.jsonl.gz"), "rt") as f:
            rows = [json.loads(line) for line in f]
        bb = sum(r["robust"] for r in rows if r["image_index"] < aa["n"]) / aa["n"]
        parts.append((aa["robust_accuracy"], s["combined_robust_accuracy"], bb))
        sizes.append(f"{aa['n']:,}")
    fmt = " / ".join
    return (f"AutoAttack {fmt(f'{100 * a:.1f} %' for a, _, _ in parts)}, advbo combined "
            f"**{fmt(f'{100 * c:.1f} %' for _, c, _ in parts)}**, black-box alone (8-bit) "
            f"{fmt(f'{100 * b:.1f} %' for _, _, b in parts)}; {fmt(sizes)} images")


def aaa_row():
    s = summary("query_defenses/aaa/aaa/summary.json")
    return (f"robust {100 * s['robust_accuracy_plain_ensemble']:.0f} % against plain Square, "
            f"**{100 * s['robust_accuracy']:.0f} %** against its adaptive attack; {s['images']} images")


def games_row():
    res = {r["matchup"]: r["mean_regret"][0]
           for r in summary("r2b2_synthetic/common/summary.json")["results"]}
    return f"agent 1's mean regret: level 0 vs 0 {res['0v0']:.3f}, 1 vs 0 {res['1v0']:.3f}, " \
           f"**2 vs 1 {res['2v1']:.3f}**"


def defender_row():
    cuts = {}
    base = os.path.join(R, "r2b2_seeds")
    seeds = sorted(d for d in os.listdir(base) if d.startswith("seed"))
    for d in ("r2b21-lite", "r2b21-lite-tuned"):
        c = []
        for s in seeds:
            g = os.path.join("r2b2_seeds", s, "mnist_6590")
            none = sum(summary(f"{g}/gpucb-vs-none/summary.json")["results"][0]["per_run_successes"])
            got = sum(summary(f"{g}/gpucb-vs-{d}/summary.json")["results"][0]["per_run_successes"])
            c.append(1 - got / none)
        cuts[d] = statistics.mean(c)
    return (f"attack rounds cut against a GP-UCB attacker: thesis' Lite {100 * cuts['r2b21-lite']:.0f} %, "
            f"tuned **{100 * cuts['r2b21-lite-tuned']:.0f} %** (mean of seeds 1–{len(seeds)}, fresh)")


def gp_row():
    with gzip.open(os.path.join(R, "gp_benchmark/openblas.jsonl.gz"), "rt") as f:
        r = next(x for x in map(json.loads, f) if x["n"] == 500 and x["d"] == 10)
    return (f"n = 500, d = 10: fit **{r['fit_speedup']:.1f}×**, predict "
            f"**{r['predict_speedup']:.1f}×** faster, same optimum")


def main():
    rows = [
        ("BOS² vs Square, CIFAR-10, targeted, 8-bit, ε = 0.05, T = 900",
         attack_row("pool250_polish8/cifar10_cw", "square", "Square"), "attacks.md"),
        ("BOS² vs Square, MNIST, targeted, 8-bit, ε = 0.3, T = 900",
         attack_row("pool250_polish8/mnist_cw", "square", "Square"), "attacks.md"),
        ("BOS² vs BayesOpt, the BOS² thesis' protocol (Carlini's MNIST network)",
         attack_row("thesis_protocol", "bayesopt", "BayesOpt"), "attacks.md"),
        ("hard-label, CIFAR-10, L2, untargeted", distance_row(),
         "threat_models.md#hard-label-distance-at-every-budget"),
        ("`advbo evaluate` beside AutoAttack's own code (standard), robust MNIST / CIFAR-10",
         evaluate_row(), "defenses.md#beside-autoattacks-own-code"),
        ("AAA output defense, CIFAR-10, Square at 2,500 queries", aaa_row(),
         "defenses.md#aaa-and-rnd-at-their-papers-budget"),
        ("R2-B2 synthetic games (common payoff), 50 runs", games_row(),
         "games.md#synthetic-games-thesis-sec-841"),
        ("R2-B2 defender, MNIST adversarial game", defender_row(),
         "games.md#the-tuned-defender-on-fresh-seeds"),
        ("GP core vs scikit-learn (OpenBLAS)", gp_row(), "bo.md#the-gp-core-against-scikit-learn"),
    ]
    print("| benchmark | result | details |\n| --- | --- | --- |")
    for what, result, link in rows:
        print(f"| {what} | {result} | [→](docs/benchmarks/{link}) |")


if __name__ == "__main__":
    main()
