#!/usr/bin/env python3
"""The R2-B2 synthetic games (tools/bench/bench_games.sh): per matchup of reasoning levels
(agent 1 vs agent 2) and game type, agent 1's mean regret over the runs with its standard
error, from each game type's summary.json (`advbo game --game synthetic`). Stdlib only.

    /usr/bin/python3 tools/bench/games_table.py ROOT   # ROOT/{common,general,constant}/summary.json
"""
import argparse
import json
import pathlib
import sys

TYPES = ("common", "general", "constant")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=pathlib.Path)
    a = ap.parse_args()
    by_type, first = {}, None
    for t in TYPES:
        path = a.root / t / "summary.json"
        try:
            s = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"games_table: {path}: {e}")
        first = first or s
        by_type[t] = {r["matchup"]: r for r in s["results"]}
    matchups = list(by_type[TYPES[0]])
    print(f"{first['rounds']} rounds; {first['games']} games x {first['inits']} initialisations "
          f"per type; level 0 = {first['level0']}; seed {first['seed']}.\n")
    print("| levels (agent 1 vs agent 2) | " + " | ".join(f"{t}-payoff game" for t in TYPES) + " |")
    print("| --- |" + " ---: |" * len(TYPES))
    for m in matchups:
        cells = []
        for t in TYPES:
            r = by_type[t].get(m)
            cells.append("–" if r is None else f"{r['mean_regret'][0]:.3f} ± {r['stderr'][0]:.3f}")
        print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
