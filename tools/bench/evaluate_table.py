#!/usr/bin/env python3
"""Markdown rows from `advbo evaluate` output folders (summary.json), for docs/results.

    /usr/bin/python3 tools/bench/evaluate_table.py DIR [DIR ...] [--pgd tools/results/at_pgd/X_pgd.jsonl]

One row per folder: model, defense, images, clean accuracy, robust accuracy under the plain
ensemble and with the defense's adaptive attack (95 % Wilson interval), which attack broke
how many images first, mean / median model queries per attacked image. With --pgd (the
per-image white-box PGD results of tools/train/train_at.py) the PGD robust accuracy on the same
images is added to each row (float and 8-bit iterates).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import open_text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--pgd", help="per-image PGD jsonl of the same model")
    ap.add_argument("--reference", action="store_true",
                    help="add the white-box reference's robust accuracy, the combined worst case "
                         "and the images each side alone broke (runs made with a reference)")
    a = ap.parse_args()
    pgd = {}
    if a.pgd:
        for line in open_text(a.pgd):
            r = json.loads(line)
            pgd[r["index"]] = r
    print("| model | defense | images | clean | robust, plain ensemble | robust, with adaptive "
          "(95 % CI) | broken first by | queries mean / median |" + (" white-box PGD float / 8-bit |" if pgd else "")
          + (" white-box reference | combined | broken only by the reference / only black-box |"
             if a.reference else ""))
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |" + (" ---: |" if pgd else "")
          + (" ---: | ---: | ---: |" if a.reference else ""))
    for d in a.dirs:
        path = os.path.join(d, "summary.json")
        if not os.path.exists(path):
            print(f"{d}: no summary.json yet (a run in progress?): skipped", file=sys.stderr)
            continue
        try:
            s = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: {e}")
        st = s["settings"]
        lo, hi = s["robust_accuracy_ci95"]
        broken = ", ".join(f"{k} {v}" for k, v in s["broken_by"].items())
        row = (f"| {st['model']} | {st['defense']} | {s['images']} | {100 * s['clean_accuracy']:.1f} % | "
               f"{100 * s['robust_accuracy_plain_ensemble']:.1f} % | {100 * s['robust_accuracy']:.1f} % "
               f"({100 * lo:.1f}–{100 * hi:.1f}) | {broken} | {s['queries_mean']:.0f} / {s['queries_median']:.0f} |")
        if pgd:
            idx = [json.loads(l)["image_index"] for l in open_text(os.path.join(d, "images.jsonl"))]
            rows = [pgd[i] for i in idx if i in pgd]
            if len(rows) != len(idx):
                sys.exit(f"{a.pgd}: lacks some of the {len(idx)} images of {d}")
            f = 100 * sum(r["robust_float"] for r in rows) / len(rows)
            b = 100 * sum(r["robust_8bit"] for r in rows) / len(rows)
            row += f" {f:.1f} % / {b:.1f} % |"
        if a.reference:
            if s.get("reference_robust_accuracy") is None:
                row += " – | – | – |"
            else:
                row += (f" {100 * s['reference_robust_accuracy']:.1f} % | "
                        f"{100 * s['combined_robust_accuracy']:.1f} % | "
                        f"{s['robust_blackbox_only']} / {s['robust_reference_only']} |")
        print(row)


if __name__ == "__main__":
    main()
