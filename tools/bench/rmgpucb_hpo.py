#!/usr/bin/env python3
"""RM-GP-UCB on a real meta-HPO study (Dai 2021 thesis Sec. 7.6 in spirit): tune an
RBF LS-SVM (C, lengthscale) on a 2,000-image MNIST subset with three meta-tasks given as
earlier `advbo bo` traces on the same search box:

  similar     the same model on a disjoint MNIST subset,
  inverted    the same images inverted with heavy pixel noise (--task-transform invert-noise),
  fashion     the same model on Fashion-MNIST,

each observed at the same 20 Sobol points (so the target GP's uncertainty weighs all three
alike). The MNIST pool (--pool images) is cut into S = pool // 2000 slots of 2,000; run k
(0..RUNS-1) uses target slot k mod S, the similar task slot (k + S // 2) mod S, Fashion-MNIST
slot k, design seed 100 + k and target seed k; `advbo bo --algo rm-gp-ucb --meta`
and plain GP-UCB (`--acq ucb`, same budget and seed) tune the target. Reports the similar
task's final weight (goal: > 0.5 in >= 7 of 10 runs), all final weights, and the best validation
error of both tuners (paired). Runs are resumable: finished ones are kept in RUNS.jsonl.

Usage: rmgpucb_hpo.py --advbo build/advbo --mnist DIR --pool N --out-dir tools/results/rmgpucb
                      [--runs 10] [--budget 30] [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, open_text, paired, records_path  # noqa: E402

META = ["similar", "inverted", "fashion"]


def advbo(binary, args):
    r = subprocess.run([binary, "bo", "-q"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"advbo bo {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")


def load(path):
    return [json.loads(line) for line in open_text(path)]


def one_run(a, k, tmp):
    slots = a.pool // 2000
    target_offset, similar_offset = 2000 * (k % slots), 2000 * ((k + slots // 2) % slots)
    common = ["--task-examples", "2000"]
    mnist = ["--task-data", a.mnist]
    design = ["--budget", "20", "--init", "20", "--seed", str(100 + k)]
    traces = {m: os.path.join(tmp, f"run{k}_{m}.jsonl") for m in META}
    advbo(a.advbo, ["--task", "mnist-lssvm", "--task-offset", str(similar_offset)] + mnist +
          common + design + ["-o", traces["similar"]])
    advbo(a.advbo, ["--task", "mnist-lssvm", "--task-transform", "invert-noise", "--task-offset",
                    str(target_offset)] + mnist + common + design + ["-o", traces["inverted"]])
    advbo(a.advbo, ["--task", "fashion-lssvm", "--task-offset", str(2000 * k)] + common + design +
          ["-o", traces["fashion"]])
    target = ["--task", "mnist-lssvm", "--task-offset", str(target_offset)] + mnist + common + [
        "--acq", "ucb", "--budget", str(a.budget), "--seed", str(k)]
    rm_out, ucb_out = os.path.join(tmp, f"run{k}_rm.jsonl"), os.path.join(tmp, f"run{k}_ucb.jsonl")
    advbo(a.advbo, target + ["--algo", "rm-gp-ucb", "--meta", ",".join(traces[m] for m in META),
                             "-o", rm_out])
    advbo(a.advbo, target + ["-o", ucb_out])
    rm, ucb = load(rm_out), load(ucb_out)
    weights = [e["extra"]["weights"] for e in rm if e.get("type") == "evaluation" and
               "weights" in e.get("extra", {})]
    meta_best = {m: min(e["y"] for e in load(traces[m]) if e.get("type") == "evaluation")
                 for m in META}
    return {"run": k, "budget": a.budget, "final_weights": rm[-1]["final_weights"],
            "final_nu": rm[-1]["final_nu"], "weights": weights,
            "rm_best": rm[-1]["best_y"], "ucb_best": ucb[-1]["best_y"],
            "rm_curve": [e["best_y"] for e in rm if e.get("type") == "evaluation"],
            "ucb_curve": [e["best_y"] for e in ucb if e.get("type") == "evaluation"],
            "meta_best": meta_best}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--advbo", default="build/advbo")
    p.add_argument("--mnist", help="MNIST IDX folder (t10k + train files); needed unless --table-only")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--pool", type=int, default=24262,
                   help="images in the MNIST folder (24,262 with the training file, 10,000 without)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--budget", type=int, default=30)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--table-only", action="store_true",
                   help="print the table of OUT_DIR's runs (hpo_runs.jsonl or .jsonl.gz) and exit")
    a = p.parse_args()
    if not a.table_only:
        if not a.mnist:
            p.error("--mnist is required to run the study")
        os.makedirs(a.out_dir, exist_ok=True)
    path = os.path.join(a.out_dir, "hpo_runs.jsonl")
    done = {}
    if os.path.exists(records_path(path)):
        for r in load(path):
            if r["budget"] == a.budget:
                done[r["run"]] = r
    todo = [] if a.table_only else [k for k in range(a.runs) if k not in done]
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for r in pool.map(lambda k: one_run(a, k, tmp), todo):
            done[r["run"]] = r
            with open(path + ".partial", "w") as f:
                for k in sorted(done):
                    f.write(json.dumps(done[k]) + "\n")
            os.replace(path + ".partial", path)
            print(f"run {r['run']}: final weights {[round(w, 3) for w in r['final_weights']]}",
                  file=sys.stderr)
    runs = [done[k] for k in sorted(done) if k < a.runs]
    n = len(runs)
    sim = [r["final_weights"][0] for r in runs]
    over = sum(w > 0.5 for w in sim)
    L = [f"# RM-GP-UCB meta-HPO study: RBF LS-SVM on MNIST subsets, {n} runs, "
         f"{a.budget} evaluations", "",
         "Meta-tasks (20 points each, the same Sobol design): similar = LS-SVM on a disjoint "
         "MNIST subset, inverted = the target images inverted with N(0, 0.3²) pixel noise, "
         "fashion = LS-SVM on Fashion-MNIST. Weights are RM-GP-UCB's ω after the last "
         "iteration (eq. 7.4, η N^1.5 = 1).", "",
         "| run | ω similar | ω inverted | ω fashion | ν final | best error RM-GP-UCB | "
         "best error GP-UCB | best error of the meta-tasks (sim / inv / fashion) |",
         "|---|---|---|---|---|---|---|---|"]
    for r in runs:
        w = r["final_weights"]
        mb = r["meta_best"]
        L.append(f"| {r['run']} | {w[0]:.3f} | {w[1]:.3f} | {w[2]:.3f} | {r['final_nu']:.4f} | "
                 f"{r['rm_best']:.4f} | {r['ucb_best']:.4f} | {mb['similar']:.3f} / "
                 f"{mb['inverted']:.3f} / {mb['fashion']:.3f} |")
    means = [mean_se([r["final_weights"][i] for r in runs]) for i in range(3)]
    d, s = paired({r["run"]: r["rm_best"] for r in runs}, {r["run"]: r["ucb_best"] for r in runs})
    L += ["", "| | ω similar | ω inverted | ω fashion | RM-GP-UCB − GP-UCB best error |",
          "|---|---|---|---|---|",
          f"| mean ± SE | {means[0][0]:.3f} ± {means[0][1]:.3f} | {means[1][0]:.3f} ± "
          f"{means[1][1]:.3f} | {means[2][0]:.3f} ± {means[2][1]:.3f} | {d:+.4f} ± {s:.4f} |", "",
          "## Goal", "",
          f"- the similar task's final weight exceeds 0.5 in {over} of {n} runs (goal: ≥ 7 of 10) "
          f"→ {'met' if over >= 0.7 * n else 'MISSED'}; it is the largest weight in "
          f"{sum(r['final_weights'][0] == max(r['final_weights']) for r in runs)} of {n} runs.", ""]
    emit(L, None if a.table_only else os.path.join(a.out_dir, "hpo.md"))


if __name__ == "__main__":
    main()
