#!/usr/bin/env bash
# The oracle split by role: the same `advbo bench` runs with two builds --
# OLD (before the split: one QueryOracle with every defense and attacker-side hook) and NEW
# (the Referee, the defense chain and the attacker-side views) -- record for record, timing
# fields aside. Every attack family and every defense / adaptive wrapper combination the
# split touched: plain score-based, BOS^2, hard-label, an input defense with EOT, a
# randomised defense with confirm, AAA with aaa-adaptive, Blacklight with OARS, noise +
# Blacklight (whose adaptive spec changed order: oars/eot/... -> eot/oars/...), and a game
# defender behind EOT.
#
#   OLD=/path/to/old/advbo bash tools/bench/bench_oracle_split.sh [OUT]
#                                        (default tools/results/oracle_split)
# NEW=path overrides build/advbo. OUT/README.md is the table; OUT/runs.jsonl one line a case.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/oracle_split}"
: "${OLD:?set OLD to the advbo binary of the build before the split}"
NEW="${NEW:-build/advbo}"
mkdir -p "$out"
OLD="$OLD" NEW="$NEW" /usr/bin/python3 - "$out" <<'EOF'
import json, os, shutil, subprocess, sys, tempfile
out = sys.argv[1]
old, new = os.environ["OLD"], os.environ["NEW"]
common = "--seed 0 --threads 1 --lockstep 1 -q"
# case: (arguments, attack spec for OLD, attack spec for NEW)
cases = {
    "square_cifar10": ("--dataset cifar10 --untargeted -n 8 --budget 300 --eps 8/255", "square", "square"),
    "bos2_mnist": ("--dataset mnist --indices 0 --budget 300", "bos2", "bos2"),
    "hsja_label_l2_cifar10": ("--dataset cifar10 --untargeted -n 4 --budget 400 --norm l2 --eps 0.5 --feedback label", "hsja", "hsja"),
    "noise_eot_mnist": ("--dataset mnist -n 2 --budget 400 --eps 0.1 --defense noise:sigma=0.05", "eot:k=4/square", "eot:k=4/square"),
    "noise_confirm_mnist": ("--dataset mnist -n 2 --budget 400 --eps 0.1 --defense noise:sigma=0.05", "confirm:n=2/square", "confirm:n=2/square"),
    "aaa_adaptive_cifar10": ("--dataset cifar10 --untargeted -n 6 --budget 300 --eps 8/255 --defense aaa:interval=4,reverse=1", "aaa-adaptive:interval=4,reverse=1/square", "aaa-adaptive:interval=4,reverse=1/square"),
    "blacklight_oars_cifar10": ("--dataset cifar10 --untargeted -n 4 --budget 300 --eps 8/255 --defense blacklight", "oars:quantization=50/square", "oars:quantization=50/square"),
    "noise_blacklight_cifar10": ("--dataset cifar10 --untargeted -n 4 --budget 300 --eps 8/255 --defense noise:sigma=0.02+blacklight", "oars:quantization=50/eot:k=3/square", "eot:k=3/oars:quantization=50/square"),
    "r2b2_eot_mnist": ("--dataset mnist --indices 1 --budget 150 --eps 0.1 --defense r2b2:jpeg+noise", "eot:k=3/square", "eot:k=3/square"),
}
TIMING = {"seconds", "model_seconds", "bo_seconds", "attack", "setup_seconds"}

def run(binary, args, attack, folder):
    shutil.rmtree(folder, ignore_errors=True)
    cmd = [binary, "bench", *args.split(), "--attacks", attack, *common.split(), "-o", folder]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    recs = []
    for line in open(os.path.join(folder, "records.jsonl")):
        r = json.loads(line)
        recs.append({k: v for k, v in r.items() if k not in TIMING and not k.endswith("_seconds")})
    return recs

def summary(recs):
    n = len(recs)
    ok = sum(bool(r["success"]) for r in recs)
    return n, ok, sum(r["queries"] for r in recs)

rows = []
with open(f"{out}/runs.jsonl", "w") as log, tempfile.TemporaryDirectory() as tmp:
    for case, (args, a_old, a_new) in cases.items():
        ro = run(old, args, a_old, f"{tmp}/old_{case}")
        rn = run(new, args, a_new, f"{tmp}/new_{case}")
        same = sum(x == y for x, y in zip(ro, rn))
        diff_keys = sorted({k for x, y in zip(ro, rn) for k in set(x) | set(y) if x.get(k) != y.get(k)})
        so, sn = summary(ro), summary(rn)
        row = {"case": case, "args": args, "old_attack": a_old, "new_attack": a_new,
               "instances": len(ro), "identical": same, "differing_fields": diff_keys,
               "old_successes": so[1], "new_successes": sn[1],
               "old_queries": so[2], "new_queries": sn[2]}
        rows.append(row)
        log.write(json.dumps(row) + "\n")
        log.flush()
        print(f"{case}: {same}/{len(ro)} identical {diff_keys}", flush=True)

with open(f"{out}/README.md", "w") as f:
    f.write("# The oracle split, record for record\n\n")
    f.write("`OLD=<advbo before the split> bash tools/bench/bench_oracle_split.sh` -- `advbo bench "
            f"... {common}`, the same images and seeds with both builds; records compared with "
            "the timing fields and the attack's name left out.\n\n")
    f.write("| case | arguments | attack (old → new) | instances | identical records | successes old / new | queries old / new | fields that differ |\n")
    f.write("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n")
    for r in rows:
        names = r["old_attack"] if r["old_attack"] == r["new_attack"] else f'{r["old_attack"]} → {r["new_attack"]}'
        f.write(f'| {r["case"]} | `{r["args"]}` | `{names}` | {r["instances"]} | {r["identical"]} | '
                f'{r["old_successes"]} / {r["new_successes"]} | {r["old_queries"]} / {r["new_queries"]} | '
                f'{", ".join(r["differing_fields"]) or "none"} |\n')
print(open(f"{out}/README.md").read())
EOF
