#!/usr/bin/python3
"""Train the variational autoencoders of the R2-B2 adversarial-ML game and export them as
TorchScript with `encode` and `decode` methods (Dai 2021 thesis, Sec. 8.4.2 and
App. E.6.2.1a; Kingma & Welling 2014).

Used only at development time (Debian's python3-torch 1.13); advbo itself never needs
Python. Architectures follow App. E.6.2.1a:
  MNIST    MLP 784-512-z (encoder) and z-512-784 (decoder), latent z in R^2
  CIFAR10  encoder 3 conv layers + 1 fully connected layer, decoder 2 fully connected
           layers + 3 transposed-conv layers, latent z in R^8
The exported module maps float32 NCHW images in [0, 1]:
  encode(x [N,C,H,W]) -> mean of q(z|x) [N, z]         (the game uses the mean, E.6.2.1a)
  decode(z [N, z])    -> images [N,C,H,W] in [0, 1]    (sigmoid outputs)
  forward(x)          -> decode(encode(x))              (reconstruction)
Loss: Bernoulli (binary cross-entropy) reconstruction + KL to N(0, I), summed per image.

Usage:
  /usr/bin/python3 tools/train_vae.py mnist   --data ../shared/datasets/mnist   --out models
  /usr/bin/python3 tools/train_vae.py cifar10 --data ../shared/datasets/cifar10 --out models
Writes models/<dataset>_vae.pt and models/<dataset>_vae.md (model card with the test
reconstruction error) atomically, after every epoch, so an interrupted run leaves a
usable model.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_models import load_mnist, load_cifar  # noqa: E402  (the same dataset readers)
from torchscript_util import save_portable  # noqa: E402


class MnistVae(nn.Module):
    def __init__(self, z: int = 2, hidden: int = 512):
        super().__init__()
        self.enc = nn.Linear(784, hidden)
        self.mu = nn.Linear(hidden, z)
        self.logvar = nn.Linear(hidden, z)
        self.dec1 = nn.Linear(z, hidden)
        self.dec2 = nn.Linear(hidden, 784)

    def encode_dist(self, x):
        h = F.relu(self.enc(torch.flatten(x, 1)))
        return self.mu(h), self.logvar(h)

    @torch.jit.export
    def encode(self, x):
        return self.encode_dist(x)[0]

    @torch.jit.export
    def decode(self, z):
        return torch.sigmoid(self.dec2(F.relu(self.dec1(z)))).view(-1, 1, 28, 28)

    def forward(self, x):
        return self.decode(self.encode(x))


class CifarVae(nn.Module):
    def __init__(self, z: int = 8):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 4, 2, 1)    # 16x16
        self.c2 = nn.Conv2d(32, 64, 4, 2, 1)   # 8x8
        self.c3 = nn.Conv2d(64, 128, 4, 2, 1)  # 4x4
        self.fc = nn.Linear(128 * 16, 256)
        self.mu = nn.Linear(256, z)
        self.logvar = nn.Linear(256, z)
        self.d1 = nn.Linear(z, 256)
        self.d2 = nn.Linear(256, 128 * 16)
        self.t1 = nn.ConvTranspose2d(128, 64, 4, 2, 1)  # 8x8
        self.t2 = nn.ConvTranspose2d(64, 32, 4, 2, 1)   # 16x16
        self.t3 = nn.ConvTranspose2d(32, 3, 4, 2, 1)    # 32x32

    def encode_dist(self, x):
        h = F.relu(self.c1(x))
        h = F.relu(self.c2(h))
        h = F.relu(self.c3(h))
        h = F.relu(self.fc(torch.flatten(h, 1)))
        return self.mu(h), self.logvar(h)

    @torch.jit.export
    def encode(self, x):
        return self.encode_dist(x)[0]

    @torch.jit.export
    def decode(self, z):
        h = F.relu(self.d1(z))
        h = F.relu(self.d2(h)).view(-1, 128, 4, 4)
        h = F.relu(self.t1(h))
        h = F.relu(self.t2(h))
        return torch.sigmoid(self.t3(h))

    def forward(self, x):
        return self.decode(self.encode(x))


def elbo_loss(model, x):
    mu, logvar = model.encode_dist(x)
    z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    rec = model.decode(z)
    bce = F.binary_cross_entropy(rec, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kl) / x.shape[0]


@torch.no_grad()
def reconstruction_error(model, x, bs=1000):
    """Mean squared and mean absolute pixel error of decode(encode(x)) on x in [0, 1]."""
    se = ae = 0.0
    for i in range(0, len(x), bs):
        xb = x[i:i + bs]
        r = model(xb)
        se += float(((r - xb) ** 2).sum())
        ae += float((r - xb).abs().sum())
    n = x.numel()
    return se / n, ae / n


def save(model, path_pt, card, args):
    save_portable(torch.jit.script(model.eval()), path_pt)
    tmp = path_pt[:-3] + ".md.partial"
    with open(tmp, "w") as f:
        f.write(card)
    os.replace(tmp, path_pt[:-3] + ".md")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["mnist", "cifar10"])
    ap.add_argument("--data", required=True, help="dataset folder (../shared/datasets/<name>)")
    ap.add_argument("--out", default="models")
    ap.add_argument("--epochs", type=int, default=None, help="default 20 MNIST, 30 CIFAR-10")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if args.dataset == "mnist":
        (xtr, _), (xte, _) = load_mnist(args.data)
        model, z, epochs = MnistVae(), 2, args.epochs or 20
        arch = "MLP encoder 784-512-(mean, log-variance) in R^2; decoder 2-512-784, sigmoid"
    else:
        (xtr, _), (xte, _) = load_cifar(args.data)
        model, z, epochs = CifarVae(), 8, args.epochs or 30
        arch = ("encoder conv32-conv64-conv128 (4x4, stride 2) + fc256 -> (mean, log-variance) in R^8; "
                "decoder fc256-fc2048 + 3 transposed convs (4x4, stride 2), sigmoid")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.dataset}_vae.pt")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(1, epochs + 1):
        t0 = time.time()
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        total = 0.0
        for i in range(0, len(xtr), args.batch):
            xb = xtr[perm[i:i + args.batch]]
            loss = elbo_loss(model, xb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(xb)
        model.eval()
        mse, mae = reconstruction_error(model, xte)
        print(f"epoch {epoch}/{epochs}: train -ELBO {total / len(xtr):.2f}, test reconstruction "
              f"MSE {mse:.5f} MAE {mae:.4f} ({time.time() - t0:.0f} s)", flush=True)
        card = (f"# {args.dataset}_vae.pt — VAE for the R2-B2 adversarial-ML game\n\n"
                f"- Source: Dai 2021 thesis Sec. 8.4.2, App. E.6.2.1a (Kingma & Welling 2014).\n"
                f"- Architecture: {arch}.\n"
                f"- TorchScript methods: encode(x [N,C,H,W] in [0,1]) -> latent mean [N,{z}]; "
                f"decode(z [N,{z}]) -> images in [0,1]; forward = decode(encode(x)).\n"
                f"- Training: {len(xtr)} training images of ../shared/datasets/{args.dataset}, "
                f"Adam lr {args.lr}, batch {args.batch}, {epoch} epochs, seed {args.seed}, "
                f"loss = Bernoulli reconstruction + KL (negative ELBO).\n"
                f"- Test reconstruction error (10,000 test images, pixels in [0,1]): "
                f"MSE {mse:.5f}, MAE {mae:.4f}.\n"
                f"- Produced by: python3 tools/train_vae.py {args.dataset} --data {args.data} "
                f"--out {args.out}\n")
        save(model, path, card, args)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
