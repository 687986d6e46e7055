#!/usr/bin/env python3
"""Whether a change kept every record: the same commands run with two builds, outputs
compared field by field with the timing fields left out.

    same_records.py run --binary OLD_ADVBO --out DIR_OLD      # before the change
    same_records.py run --binary build/advbo --out DIR_NEW    # after it
    same_records.py compare DIR_OLD DIR_NEW [--report tools/results/same_records]

The cases cover every attack family of the registry (score-based L_inf, score-based L2,
hard-label, the BO attacks), the threat models (8-bit and float queries, rescale compat, the
min-distance goal), the defenses with their adaptive wrappers, `advbo attack`, `advbo evaluate`
(its records, white-box reference, verdicts and summary) and the game attacker, each small
enough that the whole set runs in a few minutes at one thread. `run` writes DIR/<case>/ (the
command's output folder) and DIR/commands.json; `compare` prints one line per case and, with
--report, writes README.md and cases.jsonl there.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

COMMON = ["--seed", "0", "--threads", "1", "--lockstep", "1", "--workers", "1", "-q"]
GAME_COMMON = ["--seed", "0", "--threads", "1", "-q"]

# case: (subcommand and its arguments); each writes its outputs to -o DIR/<case>.
CASES = {
    "score_linf_mnist": "bench --dataset mnist --untargeted -n 2 --budget 150 --attacks "
                        "square,parsimonious,random,signhunter,nes,bandits,zoo,autozoom,genattack",
    "bo_mnist": "bench --dataset mnist --indices 0 --target 3 --budget 120 --attacks "
                "bos2,bos2-nostop,bayesopt,bayesopt-learnd",
    "bos2_float_cifar10": "bench --dataset cifar10 --untargeted --indices 3 --budget 120 "
                          "--pixels float --attacks bos2,square",
    "rescale_compat_mnist": "bench --dataset mnist --indices 0 --target 2 --budget 80 "
                            "--pixels float --rescale-compat --attacks bayesopt,square",
    "rescale_compat_8bit_mnist": "bench --dataset mnist --indices 0 --target 2 --budget 80 "
                                 "--rescale-compat --attacks square",
    "score_l2_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 150 --norm l2 "
                        "--attacks simba-dct,square-l2",
    "label_linf_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 200 --feedback "
                          "label --eps 8/255 --attacks rays,hsja,sign-opt,geoda,bo-hl",
    "label_l2_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 200 --feedback "
                        "label --norm l2 --attacks ta,gta,cgba,cgba-h",
    "label_targeted_mnist": "bench --dataset mnist --indices 0 --target 3 --budget 200 "
                            "--feedback label --norm l2 --attacks hsja,sign-opt,cgba",
    "min_distance_l2_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 300 "
                               "--norm l2 --feedback label --goal min-distance --attacks hsja,geoda",
    "noise_eot_mnist": "bench --dataset mnist -n 1 --untargeted --budget 200 --eps 0.1 "
                       "--defense noise:sigma=0.05 --attacks eot:k=4/square,confirm:n=2/square",
    "aaa_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 150 --defense "
                   "aaa:interval=4,reverse=1 --attacks aaa-adaptive:interval=4,reverse=1/square",
    "blacklight_cifar10": "bench --dataset cifar10 --untargeted -n 2 --budget 150 --defense "
                          "noise:sigma=0.02+blacklight --attacks eot:k=3/oars:quantization=50/square",
    "r2b2_defender_mnist": "bench --dataset mnist --indices 1 --untargeted --budget 100 --eps 0.1 "
                           "--defense r2b2:jpeg+noise --attacks eot:k=3/square",
    "attack_bos2_mnist": "attack --dataset mnist --indices 0 --target 5 --budget 150 --attack bos2",
    "attack_square_l2_float": "attack --dataset cifar10 --untargeted --indices 1 --budget 150 "
                              "--norm l2 --pixels float --attack square-l2",
    "evaluate_cifar10": "evaluate --dataset cifar10 -n 3 --budget 300 --reference-steps 20 "
                        "--reference-targets 2",
    "evaluate_noise_mnist": "evaluate --dataset mnist -n 2 --budget 200 --eps 0.2 --defense "
                            "noise:sigma=0.05 --reference none --verify-draws 3",
    "evaluate_label_mnist": "evaluate --dataset mnist -n 2 --budget 300 --feedback label "
                            "--reference none",
    "game_square_mnist": "game --game mnist --attacker square --defender random:jpeg+noise "
                         "--rounds 40 --games 1",
    "game_r2b2_mnist": "game --game mnist --rounds 12 --games 1",
    "game_synthetic": "game --game synthetic --type general --rounds 20 --games 2",
}

# Fields that measure time (or follow from it), not results.
TIMING = {"seconds", "model_fraction", "wait_fraction", "bo_over_model", "seconds_per_instance",
          "wall_seconds", "started", "finished", "date", "elapsed", "seconds_all_images",
          "seconds_by_attack"}


def is_timing(key):
    return key in TIMING or key.endswith("_seconds") or key.endswith("_time")


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not is_timing(k)}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def read_outputs(folder):
    """{file: parsed content} of the JSON / JSONL files of one case's folder."""
    out = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            continue
        opener = gzip.open if name.endswith(".gz") else open
        base = name[:-3] if name.endswith(".gz") else name
        if base.endswith(".jsonl"):
            with opener(path, "rt") as f:
                out[base] = [strip(json.loads(line)) for line in f if line.strip()]
        elif base.endswith(".json"):
            with opener(path, "rt") as f:
                out[base] = strip(json.load(f))
    return out


def differing(a, b, prefix=""):
    """Dotted paths at which a and b differ (list items by index)."""
    if isinstance(a, dict) and isinstance(b, dict):
        paths = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                paths.append(prefix + k + (" (only new)" if k not in a else " (only old)"))
            else:
                paths += differing(a[k], b[k], prefix + k + ".")
        return paths
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [prefix.rstrip(".") + f" (length {len(a)} -> {len(b)})"]
        paths = []
        for x, y in zip(a, b):
            paths += differing(x, y, prefix + "[].")
        return sorted(set(paths))
    return [] if a == b else [prefix.rstrip(".")]


def run(args):
    os.makedirs(args.out, exist_ok=True)
    cases = args.cases.split(",") if args.cases else list(CASES)
    for case in cases:
        folder = os.path.join(args.out, case)
        shutil.rmtree(folder, ignore_errors=True)
        common = GAME_COMMON if CASES[case].startswith("game") else COMMON
        target = folder
        if CASES[case].startswith("attack"):  # advbo attack writes a file, not a folder
            os.makedirs(folder)
            target = os.path.join(folder, "records.jsonl")
        cmd = [args.binary, *CASES[case].split(), *common, "-o", target]
        print(f"{case}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # evaluate exits 3 for 'not evaluated' images; anything else is a failure.
        if p.returncode not in (0, 3):
            sys.exit(f"{case} failed ({p.returncode}):\n{p.stderr}")
    with open(os.path.join(args.out, "commands.json"), "w") as f:
        json.dump({c: CASES[c] for c in cases}, f, indent=1)


def compare(args):
    rows = []
    for case in sorted(os.listdir(args.old)):
        old_dir, new_dir = os.path.join(args.old, case), os.path.join(args.new, case)
        if not os.path.isdir(old_dir):
            continue
        if not os.path.isdir(new_dir):
            rows.append({"case": case, "identical": False, "differs": ["(no new run)"]})
            continue
        a, b = read_outputs(old_dir), read_outputs(new_dir)
        diffs = [f"{f}: {p}" for f in sorted(set(a) | set(b))
                 for p in (differing(a.get(f), b.get(f)) if f in a and f in b
                           else ["(only " + ("new" if f in b else "old") + ")"])]
        records = len(a.get("records.jsonl", a.get("rounds.jsonl", [])))
        rows.append({"case": case, "command": CASES.get(case, "?"), "records": records,
                     "files": sorted(a), "identical": not diffs, "differs": diffs})
        print(f"{case}: {'identical' if not diffs else 'DIFFERS ' + '; '.join(diffs)}")
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "cases.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        write_readme(args.report, rows, args.title, args.expected, args.allow)
    return 0 if all(r["identical"] for r in rows) else 1


def write_readme(folder, rows, title, expected, allow):
    """README.md of a report: one row per case, the fields that differ, and what was expected
    (`allow`: regular expressions of the differing paths the change meant)."""
    same = sum(r["identical"] for r in rows)
    meant = [re.compile(a) for a in allow or []]
    only_meant = sum(not r["identical"] and all(any(m.search(d) for m in meant) for d in r["differs"])
                     for r in rows)
    lines = [f"# {title}", "",
             "`python3 tools/bench/same_records.py run --binary OLD --out A`, the same with the new",
             "build into B, then `same_records.py compare A B --report THIS_FOLDER`: every case's",
             "outputs (records, reference, verdicts, summary) compared field by field, timing fields",
             "left out.", "",
             f"{same} of {len(rows)} cases identical; {only_meant} more differ only in the fields the "
             f"change meant to alter; {len(rows) - same - only_meant} differ otherwise.", ""]
    if expected:
        lines += ["Expected differences: " + expected, ""]
    lines += ["| case | command | records | differing fields |", "| --- | --- | ---: | --- |"]
    for r in rows:
        diff = "; ".join(r["differs"]) if r["differs"] else "none"
        lines.append(f"| {r['case']} | `advbo {r.get('command', '?')}` | {r.get('records', 0)} | "
                     f"{diff} |")
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run", help="run every case with one build")
    r.add_argument("--binary", required=True, help="the advbo binary")
    r.add_argument("--out", required=True, help="folder for the cases' outputs")
    r.add_argument("--cases", help="comma list of cases (default all)")
    c = sub.add_parser("compare", help="compare two runs' outputs")
    c.add_argument("old")
    c.add_argument("new")
    c.add_argument("--report", help="folder for cases.jsonl and README.md")
    c.add_argument("--title", default="Records of two builds, side by side")
    c.add_argument("--expected", default="", help="what the change meant to alter (README)")
    c.add_argument("--allow", action="append",
                   help="regular expression of a differing path the change meant (repeatable)")
    args = ap.parse_args()
    if args.mode == "run":
        run(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
