"""Report of tools/bench/bench_http.sh: HTTP overhead per query (served vs in-process model) and
the end-to-end `advbo bench` comparison (records identical apart from timings?).

Usage: http_table.py RESULTS_DIR [--out report.md]"""
import argparse
import json
import os

import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text  # noqa: E402

TIMING = {"seconds", "model_seconds", "wait_seconds", "bo_seconds", "bo_phase_seconds", "model"}


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("--out")
    a = p.parse_args()
    lines = ["# Served model (HTTP, loopback) vs in-process model", "",
             "Same batches scored both ways, interleaved; 1 LibTorch thread each side.", "",
             "| model | batch | in-process ms/image | served ms/image | overhead ms/image (± SE) | scores identical |",
             "|---|---:|---:|---:|---:|---|"]
    for r in load(os.path.join(a.dir, "overhead.jsonl")):
        lines.append(f"| {os.path.basename(r['model'])} | {r['batch']} | {r['local_ms_per_image']:.3f} | "
                     f"{r['remote_ms_per_image']:.3f} | {r['overhead_ms_per_image']:.3f} ± "
                     f"{r['overhead_se_ms']:.3f} | {'yes' if r['scores_identical'] else 'NO'} |")
    loc = load(os.path.join(a.dir, "bench_local", "records.jsonl"))
    srv = load(os.path.join(a.dir, "bench_served", "records.jsonl"))
    key = lambda r: (r["attack"], r["image_index"], r["target"])
    bl, bs = {key(r): r for r in loc}, {key(r): r for r in srv}
    same = sum({k: v for k, v in bl[k].items() if k not in TIMING} ==
               {k: v for k, v in bs[k].items() if k not in TIMING} for k in bl if k in bs)
    lines += ["", "## `advbo bench` against the file and against the URL (same seed)", "",
              f"{len(bl)} records each; identical apart from timings and the model field: "
              f"{same} / {len(bl)}.", "",
              "| attack | records | ASR | model time per query, in-process | served | wall s per instance, in-process | served |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for atk in sorted({r["attack"] for r in loc}):
        rl = [r for r in loc if r["attack"] == atk]
        rs = [r for r in srv if r["attack"] == atk]
        q = lambda rs_: sum(r["model_seconds"] for r in rs_) / sum(r["queries_used"] for r in rs_)
        w = lambda rs_: mean_se([r["seconds"] for r in rs_])[0]
        asr = sum(r["success"] for r in rl) / len(rl)
        lines.append(f"| {atk} | {len(rl)} | {100 * asr:.1f} % | {1e3 * q(rl):.3f} ms | {1e3 * q(rs):.3f} ms | "
                     f"{w(rl):.2f} | {w(rs):.2f} |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()
