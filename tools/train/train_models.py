#!/usr/bin/env python3
"""Train the shipped Carlini & Wagner (2017) target CNNs and export them as TorchScript.

Used only at development time (Debian's python3-torch 1.13); advbo itself never needs
Python. The exported modules take float32 NCHW images with pixels in [0, 1] and return
logits [N, 10]; per-channel normalisation lives inside the module.

Architectures (Carlini & Wagner 2017, Table 1; the BOS^2 attack's targets, Kharkovskii
2020 thesis Sec. 5.3):
  MNIST   conv32-conv32-pool-conv64-conv64-pool-fc200-fc200-fc10 (3x3 valid convs, ReLU)
  CIFAR10 conv64-conv64-pool-conv128-conv128-pool-fc256-fc256-fc10
Batch norm after each conv and dropout before the FC layers are added (allowed by the
model spec) to reach the accuracy goals in few epochs on two CPU cores.

Usage:
  python3 tools/train/train_models.py mnist   --data DATA/mnist   --out models
  python3 tools/train/train_models.py cifar10 --data DATA/cifar10 --out models
Writes models/<name>.pt and models/<name>.md (model card) atomically; a checkpoint of
the latest epoch is exported after every epoch so an interrupted run leaves a
usable model.
"""
import argparse
import gzip
import hashlib
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchscript_util import save_portable  # noqa: E402


def read_idx(path):
    """Read an IDX file (optionally .gz) into a uint8 numpy array; raises on bad magic."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    magic = struct.unpack(">I", raw[:4])[0]
    if magic >> 8 != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: expected {np.prod(dims)} bytes of data, got {data.size}")
    return data.reshape(dims)


def load_mnist(root):
    def pair(prefix):
        x = read_idx(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"))
        y = read_idx(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"))
        return (torch.from_numpy(x.copy()).float().div_(255).unsqueeze(1),
                torch.from_numpy(y.astype(np.int64)))
    return pair("train"), pair("t10k")


def read_cifar_bin(path, limit=None):
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size % 3073:
        raise ValueError(f"{path}: size {raw.size} is not a multiple of 3073")
    raw = raw.reshape(-1, 3073)
    if limit:
        raw = raw[:limit]
    y = torch.from_numpy(raw[:, 0].astype(np.int64))
    x = torch.from_numpy(raw[:, 1:].copy()).float().div_(255).view(-1, 3, 32, 32)
    return x, y


def load_cifar(root):
    xs, ys = zip(*[read_cifar_bin(os.path.join(root, f"data_batch_{i}.bin")) for i in range(1, 6)])
    return (torch.cat(xs), torch.cat(ys)), read_cifar_bin(os.path.join(root, "test_batch.bin"))


class CWNet(nn.Module):
    """C&W CNN with BN; input [N,C,H,W] in [0,1], output logits [N,10]."""

    def __init__(self, in_ch, c1, c2, fc, flat, mean, std, bn=True, dropout=0.3):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, -1, 1, 1))

        def block(i, o):
            return [nn.Conv2d(i, o, 3)] + ([nn.BatchNorm2d(o)] if bn else []) + [nn.ReLU(inplace=True)]

        self.features = nn.Sequential(*block(in_ch, c1), *block(c1, c1), nn.MaxPool2d(2),
                                      *block(c1, c2), *block(c2, c2), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(flat, fc),
                                        nn.ReLU(inplace=True), nn.Dropout(dropout),
                                        nn.Linear(fc, fc), nn.ReLU(inplace=True),
                                        nn.Linear(fc, 10))

    def forward(self, x):
        return self.classifier(self.features((x - self.mean) / self.std))


def augment(x, shift, flip, gen):
    """Random translation by up to `shift` pixels (zero/edge padding) and optional h-flip."""
    n = x.shape[0]
    if shift:
        padded = F.pad(x, (shift,) * 4, mode="replicate" if flip else "constant")
        out = torch.empty_like(x)
        ox = torch.randint(0, 2 * shift + 1, (n,), generator=gen)
        oy = torch.randint(0, 2 * shift + 1, (n,), generator=gen)
        h, w = x.shape[2:]
        for i in range(n):
            out[i] = padded[i, :, oy[i]:oy[i] + h, ox[i]:ox[i] + w]
        x = out
    if flip:
        m = torch.rand(n, generator=gen) < 0.5
        x[m] = x[m].flip(3)
    return x


@torch.no_grad()
def accuracy(model, x, y, bs=1000):
    model.eval()
    correct = 0
    for i in range(0, len(x), bs):
        correct += (model(x[i:i + bs]).argmax(1) == y[i:i + bs]).sum().item()
    return 100.0 * correct / len(x)


def one_cycle(model, lr, steps, pct_start):
    """AdamW (weight decay 5e-4) with a one-cycle learning rate peaking at `lr` after
    `pct_start` of `steps` optimiser steps: the optimiser of every shipped model."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=pct_start)
    return opt, sched


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def export(model, example, path):
    model.eval()
    save_portable(torch.jit.trace(model, example), path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["mnist", "cifar10"])
    ap.add_argument("--data", required=True, help="folder of the full dataset (DATA/<name>: the dataset files, e.g. MNIST IDX or CIFAR-10 batches)")
    ap.add_argument("--out", default="models")
    ap.add_argument("--sample", help="shipped sample used for the card's sample accuracy")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--plain", action="store_true",
                    help="C&W-recipe model (<dataset>_cw_plain.pt): the C&W architecture with "
                         "plain training -- no batch norm, no label smoothing, no augmentation, "
                         "dropout 0.5, AdamW one-cycle (Carlini & Wagner 2017 Sec. 4; the models the "
                         "BOS^2 thesis attacks, Sec. 5.3)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)

    if args.dataset == "mnist":
        (xtr, ytr), (xte, yte) = load_mnist(args.data)
        if args.plain:
            model = CWNet(1, 32, 64, 200, 64 * 4 * 4, [0.1307], [0.3081], bn=False, dropout=0.5)
            epochs, lr, shift, flip, bs = args.epochs or 12, 1e-3, 0, False, 128
        else:
            model = CWNet(1, 32, 64, 200, 64 * 4 * 4, [0.1307], [0.3081])
            epochs, lr, shift, flip, bs = args.epochs or 12, 2e-3, 2, False, 128
        name, example = "mnist_cw" + ("_plain" if args.plain else ""), torch.rand(1, 1, 28, 28)
        sample_desc = "data/mnist (the full official t10k set)"
        xs, ys = xte, yte
    else:
        (xtr, ytr), (xte, yte) = load_cifar(args.data)
        mean, std = [0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616]
        if args.plain:
            model = CWNet(3, 64, 128, 256, 128 * 5 * 5, mean, std, bn=False, dropout=0.5)
            epochs, lr, shift, flip, bs = args.epochs or 15, 1e-3, 0, False, 128
        else:
            model = CWNet(3, 64, 128, 256, 128 * 5 * 5, mean, std)
            epochs, lr, shift, flip, bs = args.epochs or 14, 2e-3, 4, True, 128
        name = "cifar10_cw" + ("_plain" if args.plain else "")
        example = torch.rand(1, 3, 32, 32)
        sample = args.sample or "data/cifar10/test_batch_first2000.bin"
        xs, ys = read_cifar_bin(sample)
        sample_desc = f"{sample} (first 2,000 official test images)"

    opt, sched = one_cycle(model, lr, epochs * (len(xtr) // bs), pct_start=0.25)
    os.makedirs(args.out, exist_ok=True)
    pt_path = os.path.join(args.out, name + ".pt")
    t0 = time.time()
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        tot, nb = 0.0, 0
        for i in range(0, len(xtr) - bs + 1, bs):
            idx = perm[i:i + bs]
            xb = augment(xtr[idx].clone(), shift, flip, gen)
            loss = F.cross_entropy(model(xb), ytr[idx], label_smoothing=0.0 if args.plain else 0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item()
            nb += 1
        acc = accuracy(model, xte, yte)
        print(f"[{name}] epoch {ep + 1}/{epochs} loss {tot / nb:.4f} test acc {acc:.2f}% "
              f"({time.time() - t0:.0f}s)", flush=True)
        export(model, example, pt_path)  # every epoch, so an interrupted run leaves a model
    wall = time.time() - t0

    loaded = torch.jit.load(pt_path)
    test_acc = accuracy(loaded, xte, yte)
    sample_acc = accuracy(loaded, xs, ys)
    arch = ("conv32-conv32-pool-conv64-conv64-pool-fc200-fc200-fc10" if args.dataset == "mnist"
            else "conv64-conv64-pool-conv128-conv128-pool-fc256-fc256-fc10")
    shape = "[N, 1, 28, 28]" if args.dataset == "mnist" else "[N, 3, 32, 32]"
    plain = args.plain
    layers = ("3x3 valid convs with ReLU (no batch norm); 2x2 max-pool; dropout 0.5 before fc layers"
              if plain else "3x3 valid convs, each followed by batch norm and ReLU; 2x2 max-pool; "
              "dropout 0.3 before fc layers")
    aug = "none" if not shift else f"random shifts up to {shift} px" + (", horizontal flips" if flip else "")
    smoothing = 0.0 if plain else 0.05
    card = f"""# {name}.pt — Carlini & Wagner (2017) {args.dataset.upper()} CNN

| field | value |
| --- | --- |
| architecture | {arch}; {layers} |
| training data | the {args.dataset} folder passed as `--data` ({len(xtr)} training images) |
| augmentation | {aug} |
| optimiser | AdamW lr {lr} (one-cycle), weight decay 5e-4, batch {bs}, label smoothing {smoothing} |
| epochs | {epochs} (the final epoch is exported; no model selection on the test set) |
| seed | {args.seed} |
| training wall time | {wall:.0f} s on {args.threads} CPU threads |
| accuracy, full official test set (10,000 images) | **{test_acc:.2f} %** |
| accuracy, shipped sample {sample_desc} | {sample_acc:.2f} % ({len(xs)} images) |
| input contract | float32 NCHW {shape}, pixels in [0, 1]; normalisation is inside the module |
| output | logits [N, 10] (use `--output auto` or `logits`) |
| sha256 | `{sha256(pt_path)}` |
| produced by | `python3 tools/train/train_models.py {args.dataset} --data DATA/{args.dataset} --out {args.out} --seed {args.seed} --threads {args.threads}{' --plain' if plain else ''}{f' --epochs {args.epochs}' if args.epochs else ''}` (Debian python3-torch {torch.__version__}) |

Exported with `torch.jit.trace` in eval mode; loads with `torch::jit::load` (LibTorch)
and Python's `torch.jit.load`.
"""
    with open(os.path.join(args.out, name + ".md"), "w") as f:
        f.write(card)
    print(card)


if __name__ == "__main__":
    sys.exit(main())
