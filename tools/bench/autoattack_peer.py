#!/usr/bin/env python3
"""AutoAttack's own code (Croce & Hein, ICML 2020; public, MIT) on a shipped TorchScript model,
for the side-by-side with `advbo evaluate` (tools/bench/bench_autoattack_peer.sh).

Runs AutoAttack(version='standard') -- APGD-CE, APGD-T, FAB-T, Square at 5,000 queries -- in
float at L-inf eps on the first N test images of the shipped samples (data/), one thread, seed 0,
and writes OUT/autoattack.json: per-stage robust accuracy (parsed from AutoAttack's own log),
per-image robust flags (the model's prediction on AutoAttack's returned image, and the clean
prediction), AutoAttack's warnings, and the wall time. AutoAttack is imported from AA_DIR (a
checkout of github.com/fra31/auto-attack); nothing of it is copied here.

  /usr/bin/python3 tools/bench/autoattack_peer.py --aa AA_DIR --model models/mnist_at.pt \
      --dataset mnist --eps 0.3 --n 200 --out DIR
"""
import argparse
import gzip
import json
import os
import re
import sys
import time

import numpy as np
import torch


def load_images(dataset, n):
    """The first n images [n, C, H, W] in [0, 1] and labels of the shipped test sample."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")
    if dataset == "mnist":
        with gzip.open(os.path.join(root, "mnist", "t10k-images-idx3-ubyte.gz")) as f:
            x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
        with gzip.open(os.path.join(root, "mnist", "t10k-labels-idx1-ubyte.gz")) as f:
            y = np.frombuffer(f.read(), np.uint8, offset=8)
    else:
        raw = np.fromfile(os.path.join(root, "cifar10", "test_batch_first2000.bin"), np.uint8)
        raw = raw.reshape(-1, 3073)
        y, x = raw[:, 0], raw[:, 1:].reshape(-1, 3, 32, 32)
    if n > len(y):
        sys.exit(f"--n {n}: the shipped {dataset} sample holds {len(y)} images")
    return (torch.from_numpy(x[:n].astype(np.float32) / 255.0),
            torch.from_numpy(y[:n].astype(np.int64)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aa", required=True, help="checkout of AutoAttack (the folder holding autoattack/)")
    ap.add_argument("--model", required=True, help="TorchScript classifier (pixels in [0, 1], logits)")
    ap.add_argument("--dataset", choices=["mnist", "cifar10"], required=True)
    ap.add_argument("--eps", type=float, required=True, help="L-inf radius in pixel units (0, 1]")
    ap.add_argument("--n", type=int, default=100, help="the first N test images")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not 0 < args.eps <= 1 or args.n < 1:
        ap.error("--eps must be in (0, 1] and --n >= 1")
    if not os.path.isdir(os.path.join(args.aa, "autoattack")):
        sys.exit(f"--aa {args.aa}: no autoattack/ folder (a checkout of fra31/auto-attack)")
    sys.path.insert(0, args.aa)
    from autoattack import AutoAttack  # noqa: E402

    torch.set_num_threads(args.threads)
    model = torch.jit.load(args.model).eval()
    x, y = load_images(args.dataset, args.n)
    with torch.no_grad():
        clean = model(x).argmax(1) == y
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "autoattack.log")
    if os.path.exists(log):
        os.remove(log)
    aa = AutoAttack(model, norm="Linf", eps=args.eps, version="standard", seed=0, log_path=log,
                    device="cpu")
    t0 = time.time()
    x_adv = aa.run_standard_evaluation(x, y, bs=250)
    wall = time.time() - t0
    with torch.no_grad():
        adv_pred = model(x_adv).argmax(1)
    linf = (x_adv - x).abs().flatten(1).amax(1)
    robust = clean & (adv_pred == y)
    text = open(log).read()
    stages = [{"attack": a, "robust_accuracy": float(p) / 100, "seconds": float(s)}
              for a, p, s in re.findall(r"robust accuracy after (\S+): ([0-9.]+)% \(total time ([0-9.]+) s\)", text)]
    out = {"tool": "AutoAttack (github.com/fra31/auto-attack), version='standard'",
           "model": args.model, "dataset": args.dataset, "eps": args.eps, "n": args.n,
           "threads": args.threads, "seed": 0, "pixels": "float",
           "clean_accuracy": clean.float().mean().item(),
           "robust_accuracy": robust.float().mean().item(),
           "stages": stages, "wall_seconds": wall,
           "max_linf": linf.max().item(),
           "warnings": [line.strip() for line in text.splitlines() if "warning" in line.lower()],
           "images": [{"image_index": i, "clean_correct": bool(clean[i]), "robust": bool(robust[i])}
                      for i in range(args.n)],
           "torch": torch.__version__}
    tmp = os.path.join(args.out, "autoattack.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, os.path.join(args.out, "autoattack.json"))
    print(json.dumps({k: v for k, v in out.items() if k != "images"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
