#!/usr/bin/env python3
"""Train an *unseen* CIFAR-10 target for checking BOS²'s defaults off the models they were tuned
on: a VGG-style network (the VGG-11 pattern of 3x3 convolutions and max pools,
narrowed for two CPU cores) whose TorchScript module returns **logits** [N, 10] from float32
[N, 3, 32, 32] pixels in [0, 1] (per-channel normalisation inside the module).

    conv32-conv32-pool-conv64-conv64-pool-conv128-conv128-pool-fc256-fc10
    (3x3 'same' convolutions, batch norm, ReLU; dropout 0.3 before the FC layers)

Nothing of it is shipped or used to choose a setting; it exists to be attacked once, beside
Square, after the defaults are fixed:

    /usr/bin/python3 tools/train/train_unseen_vgg.py --data DATA/cifar10 --out /tmp/vgg.pt
    SPECS="bos2 square" DATASET=cifar10 EXTRA="--model /tmp/vgg.pt" \\
      bash tools/bench/bench_bos2_batch.sh 20 OUT

SGD with Nesterov momentum 0.9 (one-cycle schedule, peak lr 0.05, weight decay 5e-4), batch 128, random
horizontal flips and 4-pixel translations, --epochs epochs (default 8), --threads CPU threads,
one explicit --seed. Prints the test accuracy after each epoch. Exits non-zero naming the file
when the data cannot be read; writes --out atomically.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_models import load_cifar  # noqa: E402
from torchscript_util import save_portable  # noqa: E402

CIFAR_MEAN = [0.4914, 0.4822, 0.4465]
CIFAR_STD = [0.2470, 0.2435, 0.2616]


class SmallVgg(nn.Module):
    """VGG-style CNN; forward maps [N, 3, 32, 32] pixels in [0, 1] to logits [N, 10]."""

    def __init__(self):
        super().__init__()
        self.register_buffer('mean', torch.tensor(CIFAR_MEAN).view(1, 3, 1, 1))
        self.register_buffer('std', torch.tensor(CIFAR_STD).view(1, 3, 1, 1))
        layers, c = [], 3
        for width in (32, 32, 'pool', 64, 64, 'pool', 128, 128, 'pool'):
            if width == 'pool':
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(c, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                           nn.ReLU(inplace=True)]
                c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(128 * 4 * 4, 256),
                                  nn.ReLU(inplace=True), nn.Dropout(0.3), nn.Linear(256, 10))

    def forward(self, x):
        return self.head(self.features((x - self.mean) / self.std))


def augment(x, gen):
    """Random horizontal flips and translations by up to 4 pixels (zero padding); [B,3,32,32]."""
    flip = torch.rand(x.shape[0], generator=gen) < 0.5
    x = torch.where(flip.view(-1, 1, 1, 1), x.flip(3), x)
    padded = F.pad(x, (4, 4, 4, 4))
    dx, dy = torch.randint(0, 9, (2,), generator=gen).tolist()
    return padded[:, :, dy:dy + 32, dx:dx + 32]


def accuracy(model, x, y):
    """Top-1 accuracy of ``model`` on [N,3,32,32] images ``x`` with labels ``y``."""
    model.eval()
    with torch.no_grad():
        hits = sum((model(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item()
                   for i in range(0, len(x), 1000))
    return hits / len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True, help='folder with the CIFAR-10 binary batches')
    ap.add_argument('--out', required=True, help='TorchScript file to write')
    ap.add_argument('--epochs', type=int, default=8)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    if a.epochs < 1 or a.threads < 1:
        sys.exit('train_unseen_vgg.py: --epochs and --threads must be >= 1')
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    gen = torch.Generator().manual_seed(a.seed)
    try:
        (xtr, ytr), (xte, yte) = load_cifar(a.data)
    except (OSError, ValueError) as e:
        sys.exit(f'train_unseen_vgg.py: cannot read CIFAR-10 from {a.data}: {e}')
    model = SmallVgg()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    steps = a.epochs * ((len(xtr) + 127) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=steps,
                                                pct_start=0.15, anneal_strategy='cos')
    for epoch in range(a.epochs):
        model.train()
        t0 = time.time()
        perm = torch.randperm(len(xtr), generator=gen)
        for i in range(0, len(xtr), 128):
            idx = perm[i:i + 128]
            opt.zero_grad()
            F.cross_entropy(model(augment(xtr[idx], gen)), ytr[idx]).backward()
            opt.step()
            sched.step()
        print(f'epoch {epoch + 1}: test accuracy {accuracy(model, xte, yte):.4f} '
              f'({time.time() - t0:.0f} s)', flush=True)
    model.eval()
    save_portable(torch.jit.script(model), a.out)
    print(f'wrote {a.out}')


if __name__ == '__main__':
    main()
