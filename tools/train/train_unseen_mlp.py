#!/usr/bin/env python3
"""Train an *unseen* MNIST target for checking BOS²'s defaults off the models they were tuned on
(to check BOS²'s defaults on a model they were not chosen on): a fully connected network 784-512-512-10 (ReLU) whose TorchScript module returns
**softmax probabilities** [N, 10] (not logits), from float32 [N, 1, 28, 28] pixels in [0, 1].

Nothing of it is shipped or used to choose a setting; it exists to be attacked once, beside
Square, after the defaults are fixed:

    /usr/bin/python3 tools/train/train_unseen_mlp.py --data DATA/mnist --out /tmp/mlp.pt
    SPECS="bos2 square" EXTRA="--model /tmp/mlp.pt" bash tools/bench/bench_bos2_batch.sh 17 OUT

Adam (lr 1e-3), batch 128, --epochs epochs (default 3), one explicit --seed. Prints the test
accuracy. Exits non-zero naming the file when the data cannot be read.
"""
import argparse
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn


def read_idx(path, offset):
    """The bytes of an IDX file (.gz) after its header, as uint8; exits naming the file."""
    try:
        with gzip.open(path) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    except (OSError, ValueError) as e:
        sys.exit(f'train_unseen_mlp.py: cannot read {path}: {e}')


class SoftmaxMlp(nn.Module):
    """784-512-512-10 ReLU MLP; forward returns probabilities [N, 10] from [N, 1, 28, 28]."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                                 nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True, help='folder with the four MNIST .gz files')
    ap.add_argument('--out', required=True, help='TorchScript file to write')
    ap.add_argument('--epochs', type=int, default=3)
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    if a.epochs < 1:
        sys.exit('train_unseen_mlp.py: --epochs must be >= 1')
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    def images(name):
        return torch.tensor(read_idx(os.path.join(a.data, name), 16).reshape(-1, 1, 28, 28) / 255.0,
                            dtype=torch.float32)
    def labels(name):
        return torch.tensor(read_idx(os.path.join(a.data, name), 8).astype(np.int64))
    xtr, ytr = images('train-images-idx3-ubyte.gz'), labels('train-labels-idx1-ubyte.gz')
    xte, yte = images('t10k-images-idx3-ubyte.gz'), labels('t10k-labels-idx1-ubyte.gz')
    model = SoftmaxMlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(a.epochs):
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), 128):
            idx = perm[i:i + 128]
            opt.zero_grad()
            loss_fn(model.net(xtr[idx]), ytr[idx]).backward()
            opt.step()
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f'epoch {epoch + 1}: test accuracy {acc:.4f}')
    model.eval()
    tmp = a.out + '.tmp'
    torch.jit.script(model).save(tmp)
    os.replace(tmp, a.out)
    print(f'wrote {a.out}')


if __name__ == '__main__':
    main()
