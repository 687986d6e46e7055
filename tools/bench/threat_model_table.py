#!/usr/bin/python3
"""Tables of tools/bench/bench_threat_models.sh: per threat-model group (score_linf,
label_linf, score_l2, label_l2 under ROOT) and attack, the success rate within the budget and
the queries to success -- mean over successes (BlackboxBench's "mean queries"), median, and mean
with failures counted at the budget -- and, for the hard-label groups, the median distance of the
closest adversarial query after 100, 500 and 1,000 queries and its mean at the end (RayS' average
decision-boundary distance, ADBD, over the instances with an adversarial query), and the share of
bad queries (those a Blacklight detector beside the model flags; "—" for records
from before the detector). With --curves, the
median-distance-vs-queries curves of the hard-label groups as CSV. Stdlib only.
The success and query columns are read from each group's summary.json (advbo's one record
summary, experiment::SummarizeRecords); the distances from its records.jsonl.

Usage: /usr/bin/python3 tools/bench/threat_model_table.py ROOT [--out FILE.md] [--curves FILE.csv]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from report_util import emit, read_records, records_path  # noqa: E402

GROUPS = ["score_linf", "label_linf", "score_l2", "label_l2"]
CHECKPOINTS = [100, 500, 1000]  # and the budget when it is larger


def checkpoints(budget):
    return CHECKPOINTS + ([budget] if budget > CHECKPOINTS[-1] else [])


def distance_at(trace, q):
    """Distance of the closest adversarial query among the first q (inf before one)."""
    best = float("inf")
    for index, dist in trace:
        if index > q:
            break
        best = dist
    return best


def median_or_inf(xs):
    return statistics.median(xs) if xs else float("inf")


def fmt(x, digits=3):
    return "—" if x == float("inf") else f"{x:.{digits}g}"


def group_lines(name, records, summaries):
    """The group's table; `summaries`: its summary.json entries by attack."""
    by = {}
    for r in records:
        by.setdefault(r["attack"], []).append(r)
    r0 = records[0]
    label = r0.get("feedback") == "label"
    lines = [f"**{name}**: {r0['dataset']}, {r0.get('norm', 'linf')} eps {r0['epsilon']}, "
             f"{r0.get('feedback', 'scores')} feedback, {r0['pixels']} queries, budget {r0['budget']}, "
             f"seed {r0['seed']}, untargeted", ""]
    head = ("| attack | instances | ASR % | mean queries (successes) | median | mean (failures = T) "
            "| s / instance | bad queries |")
    rule = "| --- | --- | --- | --- | --- | --- | --- | --- |"
    if label:
        head += (" median distance @ " + " / ".join(str(c) for c in checkpoints(r0["budget"])) +
                 " | ADBD |")
        rule += " --- | --- |"
    lines += [head, rule]
    for attack, rs in sorted(by.items(), key=lambda kv: -summaries[kv[0]]["successes"]):
        s = summaries[attack]
        t = rs[0]["budget"]
        row = (f"| `{attack}` | {s['instances']} | {s['asr']:.1f} | "
               f"{s['mean_queries']:.1f} | {s['median_queries']:.0f} | " if s["successes"] else
               f"| `{attack}` | {s['instances']} | 0.0 | — | — | ")
        share = s.get("bad_query_share")
        row += (f"{s['mean_queries_fail_at_budget']:.1f} | "
                f"{s['seconds_per_instance']:.2f} | "
                f"{'—' if share is None else f'{100 * share:.1f} %'} |")
        if label:
            meds = [median_or_inf([distance_at(r.get("distance_trace", []), c) for r in rs])
                    for c in checkpoints(t)]
            final = [r["distance"] for r in rs if r.get("distance") is not None]
            row += (" " + " / ".join(fmt(m) for m in meds) +
                    f" | {fmt(statistics.mean(final)) if final else '—'} |")
        lines.append(row)
    return lines + [""]


def write_curves(groups, path):
    """CSV of the hard-label groups' median-distance-vs-queries curves: group, attack, queries,
    median distance of the closest adversarial query so far (empty before one)."""
    rows = ["group,attack,queries,median_distance"]
    for g, rs in groups:
        if rs[0].get("feedback") != "label":
            continue
        t = rs[0]["budget"]
        for attack in sorted({r["attack"] for r in rs}):
            mine = [r for r in rs if r["attack"] == attack]
            for q in range(10, t + 1, max(1, t // 100)):
                m = median_or_inf([distance_at(r.get("distance_trace", []), q) for r in mine])
                rows.append(f"{g},{attack},{q},{'' if m == float('inf') else f'{m:.6g}'}")
    with open(path + ".partial", "w") as f:
        f.write("\n".join(rows) + "\n")
    os.replace(path + ".partial", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--out")
    ap.add_argument("--curves", help="CSV of the hard-label median-distance-vs-queries curves")
    a = ap.parse_args()
    groups = []
    for g in GROUPS:
        f = records_path(os.path.join(a.root, g, "records.jsonl"))
        if os.path.isfile(f):
            rs = list(read_records(f, "threat_model_table"))
            with open(os.path.join(a.root, g, "summary.json")) as fh:
                summaries = {e["attack"]: e for e in json.load(fh)}
            if rs:
                groups.append((g, rs, summaries))
    if not groups:
        sys.exit(f"threat_model_table: no records under {a.root} (run tools/bench/bench_threat_models.sh)")
    lines = []
    for g, rs, summaries in groups:
        lines += group_lines(g, rs, summaries)
    emit(lines, a.out)
    if a.curves:
        write_curves([(g, rs) for g, rs, _ in groups], a.curves)


if __name__ == "__main__":
    main()
