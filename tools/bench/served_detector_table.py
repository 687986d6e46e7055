#!/usr/bin/env python3
"""The table of tools/bench/bench_served_detector.sh: per run (served / local x Square / OARS
Square) the attack success rate, the successes whose saved 8-bit image the model (behind the
defense) re-classified as adversarial, the detector's detections (refused queries, in reject
mode) among the attack's queries, OARS's resampled queries, and whether the served and local records agree.

usage: served_detector_table.py DIR [--out table.md]
"""
import argparse
import json
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import open_text  # noqa: E402

# Fields that differ between a served and a local run by construction: timings, the model's
# name (path vs URL) and graph, the lanes and worker groups the local file was scored in (a
# served model answers one call at a time; records agree across lanes) and what only a local
# defense reports.
SKIP = {"seconds", "model_seconds", "wait_seconds", "bo_seconds", "bo_phase_seconds", "model", "model_graph",
        "lockstep", "workers", "defense", "clean_accuracy", "defended_clean_accuracy",
        "clean_images"}


def read(path):
    try:
        with open_text(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"served_detector_table: {path}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    rows = ["| run | attack | ASR | verified 8-bit | detections (refused) | resampled (OARS) | "
            "records equal to local |",
            "|---|---|---|---|---|---|---|"]
    for attack, label in (("square", "square"), ("oars", "oars:quantization=50/square")):
        local = read(a.dir / f"local_{attack}.jsonl")
        for where in ("served", "local"):
            recs = read(a.dir / f"{where}_{attack}.jsonl")
            n = len(recs)
            succ = sum(bool(r["success"]) for r in recs)
            verified = sum(bool(r.get("quantized_success")) for r in recs)
            det = sum(int(r.get("detections") or 0) for r in recs)
            used = sum(int(r.get("queries_used") or 0) for r in recs)
            resampled = sum(int(r.get("resampled_queries") or 0) for r in recs)
            same = "--"
            if where == "served":
                strip = [{k: v for k, v in r.items() if k not in SKIP} for r in recs]
                want = [{k: v for k, v in r.items() if k not in SKIP} for r in local]
                same = "yes" if strip == want else "NO"
            rows.append(f"| {where} | `{label}` | {succ}/{n} ({100 * succ / max(n, 1):.0f} %) | "
                        f"{verified}/{n} | {det} of {used} queries | {resampled} | {same} |")
    text = "\n".join(rows) + "\n"
    for attack in ("square", "oars"):
        h = a.dir / f"health_{attack}.json"
        if h.exists():
            j = json.loads(h.read_text())
            text += (f"\nserver of the {attack} run: {j['images']} images scored, "
                     f"{j['detections']} detected (`/health`)\n")
    if a.out:
        a.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
