#!/usr/bin/env python3
"""Where does advbo's adversarial-ML game differ from the R2-B2 thesis'?

The thesis' random-search 0v0 game (Dai 2021, Table 8.1 and App. E.6.2.1b) wins 2.6 of 150
rounds on its MNIST image and 20.4 on average over 30 images; advbo's wins 30-150 on every
one of the first 40 test images. A 0v0 round is a uniformly random joint action, so its
expected success count is 150 x P(success of a random joint action) -- this tool estimates
that probability directly, without playing games, for every combination of target model,
VAE and image given, so each ingredient's effect is seen on its own:

  attacker image  x1 = clip(Dec(Enc(x) + a1), x +- eps)          a1 ~ U[-2, 2]^z
  defended image  x2 = clip(Dec(Enc(x1) + a2), x1 +- eps)        a2 ~ U[-2, 2]^z
  success         max wrong-class probability > true-class probability (App. E.6.2.1a)

reported as P(success) with no defender stage (x1 scored) and with a random defender (x2
scored), each over --samples draws per image, plus the clean accuracy of Dec(Enc(x)) clipped
(the defender's neutral move). Images: --indices (e.g. the thesis' MNIST image 6590 =
img_inds_mnist.pkl[3] of the authors' repository) and/or the first --first correctly
classified test images.

Usage: /usr/bin/python3 tools/bench/r2b2_setting_probe.py --model models/mnist_cw.pt \\
          --vae models/mnist_vae.pt --vae models/mnist_vae_r2b2.pt --indices 6590 --first 40
       /usr/bin/python3 tools/bench/r2b2_setting_probe.py --dataset cifar10 \\
          --data DATA/cifar10 --model models/cifar10_cw.pt \\
          --vae models/cifar10_vae.pt --indices 9139 --first 40
Writes a markdown table to stdout and, with --out FILE, the numbers as JSON.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from train_models import read_cifar_bin, read_idx  # noqa: E402


def test_set(dataset, folder):
    """A test set: images [N, C, H, W] in [0, 1] and labels [N]. MNIST: the IDX files of
    `folder` (default the shipped data/mnist); CIFAR-10: every *.bin test batch of `folder`
    (default the shipped data/cifar10, the first 2,000 test images)."""
    if dataset == "mnist":
        folder = Path(folder or ROOT / "data/mnist")
        x = read_idx(str(folder / "t10k-images-idx3-ubyte.gz"))[:, None] / 255.0
        y = read_idx(str(folder / "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)
    folder = Path(folder or ROOT / "data/cifar10")
    files = sorted(folder.glob("test_batch*.bin"))
    if not files:
        sys.exit(f"{folder}: no test_batch*.bin")
    xs, ys = zip(*[read_cifar_bin(str(f)) for f in files])
    return torch.cat(xs), torch.cat(ys)


def probabilities(model, x):
    """Class probabilities of model(x) (softmax unless the rows already sum to 1)."""
    with torch.no_grad():
        out = model(x)
    if bool((out >= 0).all()) and bool(((out.sum(1) - 1).abs() < 1e-3).all()):
        return out
    return torch.softmax(out, 1)


def success(p, label):
    """Whether the max wrong-class probability beats the true class', per row."""
    wrong = p.clone()
    wrong[:, label] = -1
    return wrong.max(1).values > p[:, label]


def probe(model, vae, x, label, eps, samples, bound, gen):
    """P(success) of random joint actions without and with a random defender stage, and
    whether the clipped reconstruction (the neutral move) is still classified correctly."""
    with torch.no_grad():
        z = vae.encode(x[None])
        zdim = z.shape[1]
        a1 = (torch.rand(samples, zdim, generator=gen) * 2 - 1) * bound
        x1 = torch.max(torch.min(vae.decode(z + a1), x + eps), x - eps)
        a2 = (torch.rand(samples, zdim, generator=gen) * 2 - 1) * bound
        x2 = torch.max(torch.min(vae.decode(vae.encode(x1) + a2), x1 + eps), x1 - eps)
        neutral = torch.max(torch.min(vae.decode(z), x + eps), x - eps)
    p1, p2, p0 = probabilities(model, x1), probabilities(model, x2), probabilities(model, neutral)
    return (float(success(p1, label).float().mean()), float(success(p2, label).float().mean()),
            bool(p0.argmax(1)[0] == label))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="TorchScript classifier")
    ap.add_argument("--vae", action="append", required=True, help="TorchScript VAE")
    ap.add_argument("--indices", type=int, nargs="*", default=[], help="test images")
    ap.add_argument("--first", type=int, default=0,
                    help="also the first N test images each model classifies correctly")
    ap.add_argument("--dataset", choices=["mnist", "cifar10"], default="mnist")
    ap.add_argument("--data", help="test-set folder (default: the shipped sample)")
    ap.add_argument("--eps", type=float, default=None,
                    help="L_inf clip (default the thesis': 0.2 MNIST, 0.05 CIFAR-10)")
    ap.add_argument("--bound", type=float, default=2.0, help="actions in [-bound, bound]^z")
    ap.add_argument("--samples", type=int, default=2000, help="random joint actions per image")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="JSON file of the numbers")
    a = ap.parse_args()
    if a.eps is None:
        a.eps = 0.2 if a.dataset == "mnist" else 0.05
    if not 0 < a.eps <= 1 or a.samples < 1 or a.first < 0 or not a.bound > 0:
        sys.exit("need 0 < eps <= 1, samples >= 1, first >= 0, bound > 0")
    torch.set_num_threads(1)
    x, y = test_set(a.dataset, a.data)
    bad = [i for i in a.indices if not 0 <= i < len(x)]
    if bad:
        sys.exit(f"--indices {bad}: the test set has {len(x)} images")
    rows = []
    print("| model | VAE | images | clean acc. of neutral move | P(success) no defender | "
          "P(success) random defender | = 0v0 rounds of 150 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for mpath in a.model:
        model = torch.jit.load(mpath).eval()
        with torch.no_grad():
            pred = torch.cat([probabilities(model, x[i:i + 1000]).argmax(1)
                              for i in range(0, len(x), 1000)])
        correct = [int(i) for i in torch.nonzero(pred == y).flatten()[:a.first]]
        sets = [(f"test image {i}", [i]) for i in a.indices]
        if a.first:
            sets.append((f"first {a.first} correct", correct))
        for vpath in a.vae:
            vae = torch.jit.load(vpath).eval()
            for name, idx in sets:
                gen = torch.Generator().manual_seed(a.seed)
                res = [probe(model, vae, x[i], int(y[i]), a.eps, a.samples, a.bound, gen)
                       for i in idx]
                p1 = float(np.mean([r[0] for r in res]))
                p2 = float(np.mean([r[1] for r in res]))
                neutral = float(np.mean([r[2] for r in res]))
                rows.append({"model": mpath, "vae": vpath,
                             "images": idx, "p_success_no_defender": p1,
                             "p_success_random_defender": p2, "neutral_correct": neutral,
                             "per_image_random_defender": [r[1] for r in res],
                             "eps": a.eps, "samples": a.samples, "seed": a.seed})
                print(f"| {Path(mpath).name} | {Path(vpath).name} | {name} | "
                      f"{100 * neutral:.0f} % | {p1:.3f} | {p2:.3f} | {150 * p2:.1f} |")
                sys.stdout.flush()
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
