#!/usr/bin/env python3
"""Hit rates of random query distributions: how many targeted instances would k
independent random queries from one distribution solve, in expectation?

Question it answers: does Square's early lead on MNIST (120 of 450 instances solved within 30
queries against BOS²'s 75) come from the distribution of its first queries (vertex stripes,
large windows) or from its greedy acceptance? For the first N correctly classified test
images x every other class (targeted), every distribution below draws DRAWS perturbations per
image; p = the share of draws the model classifies as the target, and the expected number of
instances solved by k independent draws is sum over instances of 1 - (1 - p)^k.

Distributions (pixels in [0, 1], L_inf radius eps; every image clipped into the ball and
[0, 1] and rounded onto the 1/255 grid inside the ball, as the oracle's 8-bit mode sends it):
  latent-unif s, gain g   BOS²'s initial design: u ~ U[-1, 1]^(s*s*c), image = clip(x0 +
                          g * eps * bilinear(u)) (Kharkovskii 2020 eq. 5.3, saturation g)
  latent-sign s           u ~ uniform on {-1, 1}^(s*s*c), gain 3 (s = image side: pixel signs)
  stripes / hstripes      Square's initialisation (one sign per column) / per row

    /usr/bin/python3 tools/bench/random_draw_hits.py --model models/mnist_cw.pt --images 17

Prints one line per distribution: expected hits at k = 1, 10, 30 and the number of instances
with p > 0. Deterministic for one --seed.
"""
import argparse
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_mnist(n):
    """First n test images [n, 1, 28, 28] in [0, 1] and labels [n] from data/mnist."""
    d = os.path.join(ROOT, 'data', 'mnist')
    try:
        with gzip.open(os.path.join(d, 't10k-images-idx3-ubyte.gz')) as f:
            x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:n] / 255.0
        with gzip.open(os.path.join(d, 't10k-labels-idx1-ubyte.gz')) as f:
            y = np.frombuffer(f.read(), np.uint8, offset=8)[:n]
    except (OSError, ValueError) as e:
        sys.exit(f'random_draw_hits.py: cannot read MNIST from {d}: {e}')
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y.astype(np.int64))


def on_grid(x0, x, eps):
    """x projected into the eps-ball around x0 and [0, 1], rounded onto the 1/255 grid inside
    the ball (shapes [K, C, H, W] and [1, C, H, W])."""
    lo = torch.ceil((x0 - eps).clamp(0, 1) * 255 - 1e-4)
    hi = torch.floor((x0 + eps).clamp(0, 1) * 255 + 1e-4)
    return torch.minimum(torch.maximum(torch.round(x.clamp(0, 1) * 255), lo), hi) / 255


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--model', default='models/mnist_cw.pt', help='TorchScript MNIST classifier')
    ap.add_argument('--images', type=int, default=17, help='correctly classified test images')
    ap.add_argument('--eps', type=float, default=0.3, help='L_inf radius, pixels in [0, 1]')
    ap.add_argument('--draws', type=int, default=300, help='draws per distribution and image')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    if a.images < 1 or a.draws < 1 or not 0 < a.eps <= 1:
        sys.exit('random_draw_hits.py: need --images >= 1, --draws >= 1, 0 < --eps <= 1')
    path = a.model if os.path.isabs(a.model) else os.path.join(ROOT, a.model)
    try:
        model = torch.jit.load(path).eval()
    except Exception as e:  # noqa: BLE001 (torch raises several types)
        sys.exit(f'random_draw_hits.py: cannot load model {path}: {e}')
    torch.set_num_threads(1)
    x, y = read_mnist(2000)
    with torch.no_grad():
        pred = model(x).argmax(1)
    idx = [i for i in range(len(y)) if pred[i] == y[i]][:a.images]
    g = torch.Generator().manual_seed(a.seed)
    k, eps = a.draws, a.eps

    def latent(side, gain, sign):
        u = (torch.randint(0, 2, (k, 1, side, side), generator=g).float() * 2 - 1 if sign else
             torch.rand(k, 1, side, side, generator=g) * 2 - 1)
        if side < 28:
            u = F.interpolate(u, size=(28, 28), mode='bilinear', align_corners=False)
        return (gain * eps * u).clamp(-eps, eps)

    def stripes(rows):
        shape = (k, 1, 28, 1) if rows else (k, 1, 1, 28)
        return (eps * (torch.randint(0, 2, shape, generator=g).float() * 2 - 1)).expand(
            k, 1, 28, 28)

    dists = {f'latent-unif s{s} gain 3': (lambda s=s: latent(s, 3, False)) for s in (6, 14, 18)}
    dists.update({'latent-unif s14 gain 1': lambda: latent(14, 1, False),
                  'latent-unif s14 gain 10': lambda: latent(14, 10, False)})
    dists.update({f'latent-sign s{s}': (lambda s=s: latent(s, 3, True))
                  for s in (2, 3, 4, 6, 14, 18, 28)})
    dists.update({'stripes (Square init)': lambda: stripes(False),
                  'hstripes': lambda: stripes(True)})
    hits = {name: [] for name in dists}
    for i in idx:
        x0 = x[i:i + 1]
        for name, draw in dists.items():
            with torch.no_grad():
                p = model(on_grid(x0, x0 + draw(), eps)).argmax(1)
            hits[name] += [(p == t).float().mean().item() for t in range(10) if t != y[i]]
    print(f'{len(idx)} images x 9 targets, eps {eps}, {k} draws each, model {a.model}')
    print('| distribution | instances | E[hits] k=1 | k=10 | k=30 | instances with p > 0 |')
    print('| --- | ---: | ---: | ---: | ---: | ---: |')
    for name, ps in hits.items():
        ps = np.array(ps)
        e = [(1 - (1 - ps) ** n).sum() for n in (1, 10, 30)]
        print(f'| {name} | {len(ps)} | {e[0]:.1f} | {e[1]:.1f} | {e[2]:.1f} | {int((ps > 0).sum())} |')


if __name__ == '__main__':
    main()
