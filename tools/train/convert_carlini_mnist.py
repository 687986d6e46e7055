#!/usr/bin/env python3
"""Converts Carlini's MNIST network (the model the BOS^2 thesis and the BayesOpt attack
attacked) from Keras HDF5 weights to a TorchScript classifier for advbo. The architecture and
training recipe are Carlini & Wagner's; their repository ships no weights -- these were published
in the BayesOpt attack's repository.

Source of the weights: the BayesOpt attack's reference repository (rubinxin/BayesOpt_Attack,
MIT licence), file `objective_func/tf_models/models/mnist`, which is the network of
Carlini & Wagner (2017) `setup_mnist.py` (BSD 2-clause). Extract it from a snapshot:

    git -C <snapshot>.git show HEAD:objective_func/tf_models/models/mnist > mnist.h5
    /usr/bin/python3 tools/train/convert_carlini_mnist.py --weights mnist.h5 --out models \\
        --data DATA/mnist

Architecture (Keras, channels-last): conv3x3(32)-relu-conv3x3(32)-relu-maxpool2
-conv3x3(64)-relu-conv3x3(64)-relu-maxpool2-flatten(H, W, C order)-fc200-relu-fc200-relu
-fc10 (logits). Carlini's data are x/255 - 0.5, so the module subtracts 0.5 itself: its
input is advbo's contract, float32 NCHW [N, 1, 28, 28] with pixels in [0, 1].

The weights are only re-laid out (conv kernels [kh, kw, in, out] -> [out, in, kh, kw], dense
kernels transposed, the flatten permuted to channels-last); nothing is trained. Writes
<out>/mnist_carlini.pt and its model card <out>/mnist_carlini.md with the accuracy measured
on the official t10k set.
"""
import argparse
import hashlib
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchscript_util import save_portable  # noqa: E402


class CarliniMnist(nn.Module):
    """Carlini & Wagner's MNIST CNN in NCHW; input [N, 1, 28, 28] in [0, 1], logits [N, 10]."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 32, 3)
        self.conv3 = nn.Conv2d(32, 64, 3)
        self.conv4 = nn.Conv2d(64, 64, 3)
        self.fc1 = nn.Linear(1024, 200)
        self.fc2 = nn.Linear(200, 200)
        self.fc3 = nn.Linear(200, 10)

    def forward(self, x):
        x = x - 0.5  # Carlini's data range [-0.5, 0.5]
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.conv3(x))
        x = F.max_pool2d(F.relu(self.conv4(x)), 2)
        x = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1)  # Keras flattens (H, W, C)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def load_keras_weights(path):
    """Reads the seven layers' (kernel, bias) pairs of the Keras 2 HDF5 file at `path`."""
    import h5py  # Debian python3-h5py

    names = ["conv2d_1", "conv2d_2", "conv2d_3", "conv2d_4", "dense_1", "dense_2", "dense_3"]
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"convert_carlini_mnist: {path}: not a readable HDF5 file ({e})")
    with f:
        g = f["model_weights"] if "model_weights" in f else f
        out = []
        for n in names:
            if n not in g:
                sys.exit(f"convert_carlini_mnist: {path}: layer {n} missing (not Carlini's MNIST model?)")
            layer = g[n][n]
            out.append((np.array(layer["kernel:0"]), np.array(layer["bias:0"])))
    return out


def build(weights):
    model = CarliniMnist()
    convs = [model.conv1, model.conv2, model.conv3, model.conv4]
    denses = [model.fc1, model.fc2, model.fc3]
    with torch.no_grad():
        for layer, (k, b) in zip(convs, weights[:4]):
            layer.weight.copy_(torch.from_numpy(k).permute(3, 2, 0, 1))
            layer.bias.copy_(torch.from_numpy(b))
        for layer, (k, b) in zip(denses, weights[4:]):
            layer.weight.copy_(torch.from_numpy(k).t())
            layer.bias.copy_(torch.from_numpy(b))
    return model.eval()


def read_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    magic = int.from_bytes(raw[:4], "big")
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(raw[4 + 4 * len(dims):], dtype=np.uint8).reshape(dims)


def find(folder, stem):
    for name in (stem, stem.replace("-idx", ".idx")):
        for ext in ("", ".gz"):
            p = os.path.join(folder, name + ext)
            if os.path.exists(p):
                return p
    sys.exit(f"convert_carlini_mnist: {folder}: no {stem} file")


def accuracy(model, data_dir):
    import gzip
    paths = [find(data_dir, "t10k-images-idx3-ubyte"), find(data_dir, "t10k-labels-idx1-ubyte")]
    arrays = []
    for p in paths:
        if p.endswith(".gz"):
            with gzip.open(p) as g, tempfile.NamedTemporaryFile(delete=False) as t:
                t.write(g.read())
            arrays.append(read_idx(t.name))
            os.unlink(t.name)
        else:
            arrays.append(read_idx(p))
    x = torch.from_numpy(arrays[0].astype(np.float32) / 255.0).unsqueeze(1)
    y = torch.from_numpy(arrays[1].astype(np.int64))
    with torch.no_grad():
        pred = torch.cat([model(x[i:i + 1000]).argmax(1) for i in range(0, len(x), 1000)])
    return (pred == y).float().mean().item(), len(x)


CARD = """# mnist_carlini.pt — Carlini & Wagner's MNIST network, weights from rubinxin/BayesOpt_Attack

The network the BOS^2 thesis (Kharkovskii 2020, Sec. 5.3) and the BayesOpt attack (Ru et al.
2020) attacked. Not trained here: the published Keras weights are re-laid out for PyTorch.

| field | value |
| --- | --- |
| architecture | conv32-conv32-pool-conv64-conv64-pool-fc200-fc200-fc10; 3x3 valid convs, ReLU, 2x2 max-pool, no batch norm (Carlini & Wagner 2017, `setup_mnist.py`) |
| weights | Keras 2.0.8 HDF5 `objective_func/tf_models/models/mnist` of github.com/rubinxin/BayesOpt_Attack (sha256 of the HDF5: `{h5sha}`) |
| accuracy, full official test set ({n} images) | **{acc:.2f} %** (measured by the conversion script) |
| accuracy, shipped sample data/mnist (the full official t10k set) | {acc:.2f} % ({n} images) |
| input contract | float32 NCHW [N, 1, 28, 28], pixels in [0, 1]; the module subtracts 0.5 (Carlini's data are x/255 - 0.5) |
| output | logits [N, 10] (use `--output auto` or `logits`) |
| sha256 | `{sha}` |
| produced by | `/usr/bin/python3 tools/train/convert_carlini_mnist.py --weights mnist.h5 --out models --data DATA/mnist` (Debian python3-torch {torch}) |

Exported with `torch.jit.trace` in eval mode.

## Licence

The weights file is distributed in rubinxin/BayesOpt_Attack under the MIT licence:

> MIT License
>
> Copyright (c) 2020 Binxin Ru
>
> Permission is hereby granted, free of charge, to any person obtaining a copy of this
> software and associated documentation files (the "Software"), to deal in the Software
> without restriction, including without limitation the rights to use, copy, modify, merge,
> publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
> to whom the Software is furnished to do so, subject to the following conditions:
>
> The above copyright notice and this permission notice shall be included in all copies or
> substantial portions of the Software.
>
> THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
> INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
> PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
> FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
> OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
> DEALINGS IN THE SOFTWARE.

The network definition it belongs to is Nicholas Carlini's `setup_mnist.py` (Copyright (C)
2016, Nicholas Carlini, BSD 2-clause licence of github.com/carlini/nn_robust_attacks), which
the reference repository carries with that notice.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="Keras HDF5 weights (the reference repo's models/mnist)")
    ap.add_argument("--out", default="models", help="output folder (default models)")
    ap.add_argument("--data", required=True, help="folder with the MNIST t10k IDX files (accuracy)")
    a = ap.parse_args()
    model = build(load_keras_weights(a.weights))
    acc, n = accuracy(model, a.data)
    os.makedirs(a.out, exist_ok=True)
    pt = os.path.join(a.out, "mnist_carlini.pt")
    traced = torch.jit.trace(model, torch.zeros(1, 1, 28, 28))
    save_portable(traced, pt)
    sha = hashlib.sha256(open(pt, "rb").read()).hexdigest()
    h5sha = hashlib.sha256(open(a.weights, "rb").read()).hexdigest()
    with open(os.path.join(a.out, "mnist_carlini.md"), "w") as f:
        f.write(CARD.format(h5sha=h5sha, acc=100 * acc, n=n, sha=sha, torch=torch.__version__))
    print(f"{pt}: accuracy {100 * acc:.2f} % on {n} t10k images, sha256 {sha}")


if __name__ == "__main__":
    main()
