#!/usr/bin/env python3
"""Markdown tables of `advbo evaluate` beside AutoAttack's own code, from the folders
tools/bench/bench_autoattack_peer.sh writes (DIR/autoattack/autoattack.json, DIR/advbo/ and
DIR/wall.json): robust accuracy after each of AutoAttack's stages and advbo's black-box,
white-box reference and combined numbers on the same images, each tool's wall time and their
ratio, and the paired image counts (images one tool broke and the other left robust).
DIR=EIGHT_BIT_DIR adds the black-box and combined numbers of a default (8-bit) `advbo
evaluate` folder on the same images (it may hold more; only the peer run's images are read).

    /usr/bin/python3 tools/bench/autoattack_peer_table.py DIR[=EIGHT_BIT_DIR] [...]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import read_records  # noqa: E402

TOOL = "autoattack_peer_table"


def load_json(path):
    """The JSON object in `path`; exits 2 naming the file when it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{TOOL}: {path}: {e}")


def pct(x):
    return f"{100 * x:.1f} %"


def points(x):
    """A difference of two accuracies in points, signed, never "-0.0"."""
    v = round(100 * x, 1)
    return f"{v + 0.0:+.1f}"


def table(caption, header, align, rows, first=False):
    """Prints a caption and a markdown table (align: one l or r per column)."""
    print(("" if first else "\n") + caption + "\n")
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |")
    print("\n".join(rows))


def image_flags(path):
    """{image_index: (black-box robust, reference robust, combined robust)} of an evaluate
    folder's images.jsonl (a missing reference counts as the black-box flag)."""
    flags = {}
    for r in read_records(os.path.join(path, "images.jsonl"), TOOL):
        ref = r.get("reference_robust")
        ref = r["robust"] if ref is None else ref
        flags[r["image_index"]] = (r["robust"], ref, r["robust"] and ref)
    return flags


def load(d):
    """One side-by-side folder: AutoAttack's result, advbo's summary, advbo's per-image flags
    {image_index: (black-box robust, reference robust, combined robust)}, advbo's reference
    seconds by attack, and the wall times."""
    aa = load_json(os.path.join(d, "autoattack", "autoattack.json"))
    s = load_json(os.path.join(d, "advbo", "summary.json"))
    wall = load_json(os.path.join(d, "wall.json"))["wall_seconds"]
    flags = image_flags(os.path.join(d, "advbo"))
    ref_seconds = {}
    for r in read_records(os.path.join(d, "advbo", "reference.jsonl"), TOOL):
        ref_seconds = r.get("seconds_by_attack") or {}
        break
    aa_robust = {r["image_index"]: r["robust"] for r in aa["images"]}
    if set(aa_robust) != set(flags):
        sys.exit(f"{TOOL}: {d}: AutoAttack and advbo attacked different images")
    return aa, s, flags, aa_robust, ref_seconds, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    rows, pairs, times, eight = [], [], [], []
    for arg in a.dirs:
        d, _, eight_dir = arg.partition("=")
        aa, s, flags, aa_robust, ref_seconds, wall = load(d)
        stages = " → ".join(pct(st["robust_accuracy"]) for st in aa["stages"])
        names = " → ".join(st["attack"] for st in aa["stages"])
        n = len(flags)
        bb = sum(f[0] for f in flags.values()) / n
        ref = sum(f[1] for f in flags.values()) / n
        comb = sum(f[2] for f in flags.values()) / n
        ratio = wall["advbo"] / wall["autoattack"]
        model = os.path.basename(s["model"])
        warn = "; ".join(aa["warnings"]) or "none"
        rows.append(f"| {model} | {n} | {pct(aa['clean_accuracy'])} / {pct(s['clean_accuracy'])} | "
                    f"{stages} | **{pct(aa['robust_accuracy'])}** | {pct(bb)} / {pct(ref)} / "
                    f"**{pct(comb)}** | {points(comb - aa['robust_accuracy'])} | "
                    f"{points(bb - aa['robust_accuracy'])} | {warn} |")
        aa_only = sum(1 for i, f in flags.items() if f[2] and not aa_robust[i])
        advbo_only = sum(1 for i, f in flags.items() if not f[2] and aa_robust[i])
        bb_missed = sum(1 for i, f in flags.items() if f[0] and not aa_robust[i])
        pairs.append(f"| {model} | {n} | {aa_only} | {advbo_only} | {bb_missed} |")
        if eight_dir:
            e = image_flags(eight_dir)
            if not set(flags) <= set(e):
                sys.exit(f"{TOOL}: {eight_dir}: does not hold every image of {d}")
            e = {i: e[i] for i in flags}
            eb = sum(f[0] for f in e.values()) / n
            ec = sum(f[2] for f in e.values()) / n
            e_missed = sum(1 for i, f in e.items() if f[0] and not aa_robust[i])
            eight.append(f"| {model} | {n} | {pct(eb)} | {pct(ec)} | "
                         f"{points(eb - aa['robust_accuracy'])} | {e_missed} | {eight_dir} |")
        ref_text = ", ".join(f"{k} {v:.0f}" for k, v in ref_seconds.items()) or "—"
        aa_text = ", ".join(f"{st['attack']} {st['seconds']:.0f}" for st in aa["stages"])
        ref_ratio = sum(ref_seconds.values()) / wall["autoattack"]
        times.append(f"| {model} | {n} | {wall['autoattack']:.0f} (cumulative: {aa_text}) | "
                     f"{wall['advbo']:.0f} (reference: {ref_text}) | **{ratio:.2f}×** | "
                     f"{ref_ratio:.2f}× |")
    table("Robust accuracy (AutoAttack's stages in its order: " + names + "; advbo: black-box "
          "ensemble / white-box reference / combined; differences in points, advbo minus "
          "AutoAttack standard):",
          ["model", "images", "clean (AutoAttack / advbo)", "AutoAttack after each stage",
           "AutoAttack standard", "advbo black-box / reference / combined", "combined − AA",
           "black-box − AA", "AutoAttack's warnings"], "lrrlrrrrl", rows, first=True)
    table("Paired, image by image:",
          ["model", "images", "robust in advbo's combined, broken by AutoAttack",
           "broken by advbo, robust under AutoAttack",
           "robust under advbo's black-box, broken by AutoAttack"], "lrrrr", pairs)
    if eight:
        table("The default 8-bit queries (`advbo evaluate` without --pixels; ε rounded down onto "
              "the grid), the same images, from the folder named:",
              ["model", "images", "black-box", "combined", "black-box − AA",
               "robust under the black-box, broken by AutoAttack", "folder"], "lrrrrrl", eight)
    table("Wall time in seconds, each tool's whole command (one thread each, side by side):",
          ["model", "images", "AutoAttack", "advbo evaluate", "advbo / AutoAttack",
           "advbo's white-box reference alone / AutoAttack"], "lrrrrr", times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
