#!/usr/bin/env python3
"""Checks that two `advbo bench` record files hold the same results apart from timings: every
(attack, image, target) record in A has an equal twin in B once the wall-time fields (seconds, bo_seconds,
model_seconds, bo_phase_seconds) and the shard bookkeeping are dropped. Exit status 0 = identical.

Usage: compare_records.py A.jsonl B.jsonl
"""
import json
import sys

TIMING = ("seconds", "bo_seconds", "model_seconds", "wait_seconds", "bo_phase_seconds", "shard")


def load(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        key = (r["attack"], r["image_index"], r.get("target"))
        if key in out:
            sys.exit(f"{path}: two records for {key}")
        out[key] = {k: v for k, v in r.items() if k not in TIMING}
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    diff = [k for k in a.keys() | b.keys() if a.get(k) != b.get(k)]
    print(f"{len(a)} vs {len(b)} records, {len(diff)} differ apart from timings")
    for k in diff[:5]:
        ra, rb = a.get(k, {}), b.get(k, {})
        print(k, {f: (ra.get(f), rb.get(f)) for f in ra.keys() | rb.keys() if ra.get(f) != rb.get(f)})
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
