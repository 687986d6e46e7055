#!/usr/bin/python3
"""Markdown table of BOS^2 and Square ASR against each defense with the defended model's
clean accuracy, from tools/bench/bench_defenses.sh runs. Stdlib only.

Usage: /usr/bin/python3 tools/bench/defense_table.py results/defenses [--out FILE.md]
Reads ROOT/<dataset>/<defense>/summary.json (the merged bench's summary: ASR and median queries
as advbo computes them, experiment::SummarizeRecords) and the first line of its records.jsonl
(the clean accuracies and the defense spec the records carry).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, open_text, records_path  # noqa: E402


def rows(root):
    out = []
    for ds in sorted(os.listdir(root)):
        dsdir = os.path.join(root, ds)
        if not os.path.isdir(dsdir):
            continue
        for d in sorted(os.listdir(dsdir)):
            f = records_path(os.path.join(dsdir, d, "records.jsonl"))
            if not os.path.isfile(f):
                continue
            with open_text(f) as fh:
                first = fh.readline()
            with open(os.path.join(dsdir, d, "summary.json")) as fh:
                by_attack = {s["attack"]: s for s in json.load(fh)}
            if first.strip():
                out.append((ds, [json.loads(first)], by_attack))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--out")
    a = ap.parse_args()
    table = rows(a.root)
    if not table:
        sys.exit(f"{a.root}: no merged records.jsonl found")
    lines = ["| dataset | defense | clean accuracy % (defended / undefended) | instances | "
             "BOS² ASR % | BOS² median queries | Square ASR % | Square median queries |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    # The undefended clean accuracy (recorded with every defended run) for the "none" rows.
    undefended = {ds: r[0]["clean_accuracy"] for ds, r, _ in table if "clean_accuracy" in r[0]}
    order = lambda item: (item[0], item[1][0].get("defense", "none") != "none")
    for ds, recs, by_attack in sorted(table, key=order):
        spec = recs[0].get("defense", "none")
        acc = f"— / {100 * undefended[ds]:.1f}" if ds in undefended else "—"
        if "defended_clean_accuracy" in recs[0]:
            acc = (f"{100 * recs[0]['defended_clean_accuracy']:.1f} / "
                   f"{100 * recs[0]['clean_accuracy']:.1f}")
        cells = []
        n = None
        for atk in ("bos2", "square"):
            s = by_attack.get(atk)
            n = s["instances"] if s else n
            cells.append(f"{s['asr']:.1f}" if s else "—")
            cells.append(f"{s['median_queries']:g}" if s and s["median_queries"] is not None
                         else "—")
        lines.append(f"| {ds} | `{spec}` | {acc} | {n} | " + " | ".join(cells) + " |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()
