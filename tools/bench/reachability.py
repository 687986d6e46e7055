#!/usr/bin/env python3
"""Reachability diagnostic of a bench's failures: is a failed instance out of reach of the
attack's own search space, or did the search miss an adversarial point that exists there?

For every failed record of `advbo bench` / `advbo attack` (RECORDS, JSONL), a white-box PGD
(signed-gradient ascent with random restarts; Madry et al. 2018) maximises the attack's own
objective -- the thesis' margin y = log p_target - log sum_{c != target} p_c (Kharkovskii 2020
eq. 5.3; untargeted: max_{c != true} log p_c - log p_true) -- over the same search space the
attack queried:
  bos2, bos2-nostop  latent u in [-1, 1]^(s*s*c) for every allowed side s in {6, 8, ..., 18},
                     image = clip(clean + g(kappa * r * u)) with kappa = the record's
                     saturation (bos2_settings) and g = bilinear upsampling with half-pixel
                     centres (OpenCV INTER_LINEAR = torch bilinear, align_corners=False);
  bayesopt*          the record's latent_side, kappa = 1;
  other attacks      the full pixel space (s = image side, no upsampling);
where r is the query radius (eps in float mode, floor(255 eps)/255 in 8-bit mode) and clip is
the oracle's projection (into the eps-ball and [0, 1]; the BayesOpt reference's rescaling
under threat_model rescale_compat). In 8-bit mode the final image is rounded onto the grid
inside the ball before it is judged, as the oracle would send it.

A failure is `search-limited` when PGD finds an image of the goal class in that space (the
best margin > 0), else `unreachable` (no point found: a lower bound on reachability, not a
proof). Writes reachability.jsonl (one line per failure: attack, image_index, target, label,
best_margin, best_side) and reachability.md (counts per attack) next to RECORDS, or into
--out-dir.

    /usr/bin/python3 tools/bench/reachability.py tools/results/bench_mnist_cw/records.jsonl
"""
import argparse
import gzip
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import open_text  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("reachability: needs Debian's PyTorch for /usr/bin/python3 "
             "(apt-get install python3-torch)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOS2_SIDES = [6, 8, 10, 12, 14, 16, 18]


def load_images(dataset):
    """The shipped sample of `dataset` as float32 [N, C, H, W] in [0, 1]."""
    if dataset == "mnist":
        path = os.path.join(ROOT, "data/mnist/t10k-images-idx3-ubyte.gz")
        raw = gzip.open(path).read()
        n, h, w = (int.from_bytes(raw[4 * i:4 * i + 4], "big") for i in (1, 2, 3))
        return (np.frombuffer(raw[16:], np.uint8).reshape(n, 1, h, w) / np.float32(255)).astype(np.float32)
    if dataset == "cifar10":
        path = os.path.join(ROOT, "data/cifar10/test_batch_first2000.bin")
        raw = np.fromfile(path, np.uint8).reshape(-1, 3073)
        return (raw[:, 1:].reshape(-1, 3, 32, 32) / np.float32(255)).astype(np.float32)
    sys.exit(f"reachability: dataset {dataset!r}: only the shipped mnist / cifar10 samples are supported")


def space_of(record, side_max):
    """(sides, saturation) of the attack's search space."""
    a = record["attack"]
    if a.startswith("bos2"):
        return BOS2_SIDES, float(record.get("bos2_settings", {}).get("saturation", 1.0))
    if a.startswith("bayesopt"):
        return [int(record.get("latent_side", 14))], 1.0
    return [side_max], 1.0


def margin(logp, true_class, target):
    """Eq. 5.3 objective [B] from log-probabilities [B, K]."""
    if target is None:
        other = logp.clone()
        other[:, true_class] = -math.inf
        return other.max(1).values - logp[:, true_class]
    other = logp.clone()
    other[:, target] = -math.inf
    return logp[:, target] - torch.logsumexp(other, 1)


def project(clean, x, eps, rescale, grid):
    """The oracle's projection of images x [B, C, H, W] around clean [1, C, H, W]."""
    if rescale:
        x = (clean + (x - clean).clamp(-eps, eps) + eps) / (1 + 2 * eps)
        x = x.clamp(0, 1)
        return torch.round(x * 255) / 255 if grid else x
    lo, hi = (clean - eps).clamp(min=0), (clean + eps).clamp(max=1)
    x = torch.max(torch.min(x, hi), lo)
    if grid:  # onto the grid inside the ball (lo/hi rounded inwards)
        lo_g, hi_g = torch.ceil(lo * 255 - 1e-4) / 255, torch.floor(hi * 255 + 1e-4) / 255
        x = torch.max(torch.min(torch.round(x * 255) / 255, hi_g), lo_g)
    return x


def pgd(model, clean, true_class, target, eps, radius, sides, kappa, rescale, grid, restarts,
        steps, gen):
    """Best (margin, side) over the sides; the margin of the final (rounded) image."""
    c, h, w = clean.shape[1:]
    best, best_side = -math.inf, None
    for s in sides:
        u = (torch.rand(restarts, c, s, s, generator=gen) * 2 - 1).requires_grad_(True)
        lr = 2.0 / steps * 4
        for t in range(steps):
            delta = kappa * radius * u
            up = delta if s == h else F.interpolate(delta, size=(h, w), mode="bilinear", align_corners=False)
            raw = clean + up
            # Straight-through projection: the forward pass sees the clipped image, the
            # gradient still reaches saturated pixels (a clip's zero gradient would freeze them).
            x = raw + (project(clean, raw, eps, rescale, False) - raw).detach()
            y = margin(F.log_softmax(model(x), 1), true_class, target)
            (g,) = torch.autograd.grad(y.sum(), u)
            with torch.no_grad():
                u += lr * (1 - t / steps) * g.sign()
                u.clamp_(-1, 1)
        with torch.no_grad():
            delta = kappa * radius * u
            up = delta if s == h else F.interpolate(delta, size=(h, w), mode="bilinear", align_corners=False)
            x = project(clean, clean + up, eps, rescale, grid)
            y = margin(F.log_softmax(model(x), 1), true_class, target)
            m = float(y.max())
            if m > best:
                best, best_side = m, s
    return best, best_side


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("records", help="records.jsonl of advbo bench / attack")
    ap.add_argument("--model", help="TorchScript model (default: the records' model)")
    ap.add_argument("--out-dir", help="output folder (default: the records' folder)")
    ap.add_argument("--attacks", help="comma list of attacks to diagnose (default all)")
    ap.add_argument("--restarts", type=int, default=8, help="random restarts per side (default 8)")
    ap.add_argument("--steps", type=int, default=100, help="PGD steps (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the restarts (default 0)")
    ap.add_argument("--limit", type=int, default=0, help="diagnose at most this many failures (0 = all)")
    a = ap.parse_args()
    for name, v in (("--restarts", a.restarts), ("--steps", a.steps)):
        if v < 1:
            sys.exit(f"reachability: {name} must be >= 1, got {v}")
    try:
        records = [json.loads(line) for line in open_text(a.records) if line.strip()]
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"reachability: {a.records}: {e}")
    wanted = set(a.attacks.split(",")) if a.attacks else None
    fails = [r for r in records if not r.get("success") and (wanted is None or r["attack"] in wanted)]
    if a.limit:
        fails = fails[:a.limit]
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(a.seed)
    models, images = {}, {}
    out_dir = a.out_dir or os.path.dirname(os.path.abspath(a.records))
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for k, r in enumerate(fails):
        path = a.model or os.path.join(ROOT, r["model"])
        if path not in models:
            try:
                models[path] = torch.jit.load(path).eval()
            except Exception as e:  # noqa: BLE001 -- any load failure is reported by file
                sys.exit(f"reachability: {path}: cannot load the model ({str(e).splitlines()[0]})")
        if r["dataset"] not in images:
            images[r["dataset"]] = load_images(r["dataset"])
        model = models[path]
        clean = torch.from_numpy(images[r["dataset"]][r["image_index"]][None])
        eps = float(r["epsilon"])
        grid = r.get("pixels", "float") == "8bit"
        radius = math.floor(eps * 255 + 1e-9) / 255 if grid else eps
        sides, kappa = space_of(r, clean.shape[-1])
        rescale = r.get("threat_model") == "rescale_compat"
        best, side = pgd(model, clean, r["true_class"], r.get("target"), eps, radius, sides, kappa,
                         rescale, grid, a.restarts, a.steps, gen)
        label = "search-limited" if best > 0 else "unreachable"
        rows.append({"attack": r["attack"], "image_index": r["image_index"], "target": r.get("target"),
                     "true_class": r["true_class"], "label": label, "best_margin": best,
                     "best_side": side, "attack_best_objective": r.get("final_objective"),
                     "pixels": r.get("pixels", "float"), "threat_model": r.get("threat_model")})
        print(f"[{k + 1}/{len(fails)}] {r['attack']} image {r['image_index']} -> {r.get('target')}: "
              f"{label} (margin {best:.3f}, side {side})", file=sys.stderr)
    tmp = os.path.join(out_dir, "reachability.jsonl.partial")
    with open(tmp, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    os.replace(tmp, os.path.join(out_dir, "reachability.jsonl"))
    by = {}
    for row in rows:
        by.setdefault(row["attack"], []).append(row)
    total = {}
    for r in records:
        total[r["attack"]] = total.get(r["attack"], 0) + 1
    lines = [f"# Reachability of the failures in {os.path.relpath(a.records, ROOT)}", "",
             f"White-box PGD over each attack's own search space ({a.restarts} restarts x {a.steps} "
             f"steps per latent side, seed {a.seed}; tools/bench/reachability.py).", "",
             "| attack | instances | failures | search-limited | unreachable | median best margin (unreachable) |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in sorted(by):
        rs = by[name]
        sl = sum(x["label"] == "search-limited" for x in rs)
        un = [x["best_margin"] for x in rs if x["label"] == "unreachable"]
        med = f"{float(np.median(un)):.2f}" if un else "-"
        lines.append(f"| {name} | {total[name]} | {len(rs)} | {sl} | {len(un)} | {med} |")
    text = "\n".join(lines) + "\n"
    tmp = os.path.join(out_dir, "reachability.md.partial")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out_dir, "reachability.md"))
    print(text)


if __name__ == "__main__":
    main()
