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

Classifier-consistent fine-tuning (advbo's addition, not in the thesis):
with --classifier the VAE starts from --init and its loss gains a term that keeps the target
model's prediction on the game defender's neutral move -- the reconstruction of the mean code
clipped to the eps-ball around the input, x_n = clip(decode(encode(x)); x +- eps, [0, 1]) --
equal to its prediction on x:
  loss = -ELBO + lambda * KL(p_f(x) || p_f(x_n))     (f frozen, per image, lambda = --consistency)
After every epoch the card reports the test-set accuracy of f on x and on x_n.

Usage:
  /usr/bin/python3 tools/train/train_vae.py mnist   --data DATA/mnist   --out models
  /usr/bin/python3 tools/train/train_vae.py cifar10 --data DATA/cifar10 --out models
  /usr/bin/python3 tools/train/train_vae.py cifar10 --data DATA/cifar10 --out models \
      --init models/cifar10_vae.pt --classifier models/cifar10_cw.pt --clip-eps 0.05 \
      --consistency 1000 --epochs 3 --name cifar10_vae_cc
Writes models/<name>.pt (default name <dataset>_vae) and models/<name>.md (model card with
the test reconstruction error) atomically, after every epoch, so an interrupted run leaves a
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


def neutral_move(vae, x, eps):
    """The game defender's neutral move (latent action 0): decode(encode(x)) clipped to the
    L_inf eps-ball around x and to [0, 1]. x [N, C, H, W] in [0, 1]."""
    return torch.max(torch.min(vae(x), x + eps), x - eps).clamp(0, 1)


def consistency_loss(vae, clf, x, eps):
    """-ELBO plus the per-image KL(p_f(x) || p_f(neutral move)), both means over the batch."""
    with torch.no_grad():
        p_clean = F.softmax(clf(x), dim=1)
    log_q = F.log_softmax(clf(neutral_move(vae, x, eps)), dim=1)
    kl = (p_clean * (torch.log(p_clean.clamp_min(1e-12)) - log_q)).sum(1).mean()
    return elbo_loss(vae, x), kl


@torch.no_grad()
def neutral_accuracy(vae, clf, x, y, eps, bs=500):
    """Test accuracy of the classifier on x and on the neutral moves of x (fractions)."""
    clean = moved = 0
    for i in range(0, len(x), bs):
        xb, yb = x[i:i + bs], y[i:i + bs]
        clean += int((clf(xb).argmax(1) == yb).sum())
        moved += int((clf(neutral_move(vae, xb, eps)).argmax(1) == yb).sum())
    return clean / len(x), moved / len(x)


def save(model, path_pt, card, args):
    save_portable(torch.jit.script(model.eval()), path_pt)
    tmp = path_pt[:-3] + ".md.partial"
    with open(tmp, "w") as f:
        f.write(card)
    os.replace(tmp, path_pt[:-3] + ".md")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["mnist", "cifar10"])
    ap.add_argument("--data", required=True, help="dataset folder (DATA/<name>: the dataset files, e.g. MNIST IDX or CIFAR-10 batches)")
    ap.add_argument("--out", default="models")
    ap.add_argument("--epochs", type=int, default=None, help="default 20 MNIST, 30 CIFAR-10")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--train-images", type=int, default=None,
                    help="train on this many training images (a seeded random subset; default all)")
    ap.add_argument("--name", default=None, help="output file stem (default <dataset>_vae)")
    ap.add_argument("--init", default=None, help="start from this TorchScript VAE's weights")
    ap.add_argument("--classifier", default=None,
                    help="TorchScript target model: fine-tune for classifier consistency (above)")
    ap.add_argument("--consistency", type=float, default=1000.0, help="lambda of the KL term")
    ap.add_argument("--clip-eps", type=float, default=None,
                    help="L_inf clip of the neutral move (default 0.2 MNIST, 0.05 CIFAR-10)")
    args = ap.parse_args()
    if args.epochs is not None and args.epochs < 1:
        ap.error("--epochs must be >= 1")
    if not 0 <= args.consistency < float("inf"):
        ap.error("--consistency must be a finite number >= 0")
    if not 0 < args.lr < float("inf") or args.batch < 1:
        ap.error("--lr must be a finite number > 0 and --batch >= 1")
    if args.clip_eps is not None and not 0 < args.clip_eps <= 1:
        ap.error("--clip-eps must be in (0, 1]")
    for f in (args.init, args.classifier):
        if f is not None and not os.path.isfile(f):
            ap.error(f"{f}: file not found")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if args.dataset == "mnist":
        (xtr, ytr), (xte, yte) = load_mnist(args.data)
        model, z, epochs = MnistVae(), 2, args.epochs or 20
        arch = "MLP encoder 784-512-(mean, log-variance) in R^2; decoder 2-512-784, sigmoid"
    else:
        (xtr, ytr), (xte, yte) = load_cifar(args.data)
        model, z, epochs = CifarVae(), 8, args.epochs or 30
        arch = ("encoder conv32-conv64-conv128 (4x4, stride 2) + fc256 -> (mean, log-variance) in R^8; "
                "decoder fc256-fc2048 + 3 transposed convs (4x4, stride 2), sigmoid")
    if args.train_images is not None:
        if not 1 <= args.train_images <= len(xtr):
            ap.error(f"--train-images must be in 1..{len(xtr)}")
        keep = torch.randperm(len(xtr), generator=torch.Generator().manual_seed(args.seed))
        xtr, ytr = xtr[keep[:args.train_images]], ytr[keep[:args.train_images]]
    eps = args.clip_eps or (0.2 if args.dataset == "mnist" else 0.05)
    clf = None
    if args.init:
        model.load_state_dict(torch.jit.load(args.init).state_dict())
    if args.classifier:
        clf = torch.jit.load(args.classifier).eval()
        for prm in clf.parameters():
            prm.requires_grad_(False)
    os.makedirs(args.out, exist_ok=True)
    name = args.name or f"{args.dataset}_vae"
    path = os.path.join(args.out, f"{name}.pt")
    if clf is not None:
        acc0 = neutral_accuracy(model, clf, xte, yte, eps)
        print(f"before: test accuracy {acc0[0]:.4f} clean, {acc0[1]:.4f} on neutral moves "
              f"(eps {eps})", flush=True)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(1, epochs + 1):
        t0 = time.time()
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        total = 0.0
        for i in range(0, len(xtr), args.batch):
            xb = xtr[perm[i:i + args.batch]]
            if clf is None:
                loss = elbo_loss(model, xb)
            else:
                elbo, kl = consistency_loss(model, clf, xb, eps)
                loss = elbo + args.consistency * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(xb)
        model.eval()
        mse, mae = reconstruction_error(model, xte)
        print(f"epoch {epoch}/{epochs}: train loss {total / len(xtr):.2f}, test reconstruction "
              f"MSE {mse:.5f} MAE {mae:.4f} ({time.time() - t0:.0f} s)", flush=True)
        consistency = ""
        if clf is not None:
            acc = neutral_accuracy(model, clf, xte, yte, eps)
            print(f"  test accuracy {acc[0]:.4f} clean, {acc[1]:.4f} on neutral moves "
                  f"(before fine-tuning {acc0[1]:.4f})", flush=True)
            consistency = (
                f"- Classifier-consistent fine-tuning from {args.init or 'scratch'}: loss = -ELBO + "
                f"{args.consistency:g} * KL(p_f(x) || p_f(x_n)), f = {args.classifier} (frozen), "
                f"x_n = decode(encode(x)) clipped to x +- {eps:g} (the game defender's neutral move).\n"
                f"- Neutral-move accuracy of f on the 10,000 test images: {100 * acc[1]:.2f} % "
                f"(clean {100 * acc[0]:.2f} %: a cost of {100 * (acc[0] - acc[1]):.2f} points; "
                f"{100 * (acc[0] - acc0[1]):.2f} before fine-tuning). No model selection: the "
                f"final epoch is exported.\n")
        card = (f"# {name}.pt — VAE for the R2-B2 adversarial-ML game\n\n"
                f"- Source: Dai 2021 thesis Sec. 8.4.2, App. E.6.2.1a (Kingma & Welling 2014).\n"
                f"- Architecture: {arch}.\n"
                f"- TorchScript methods: encode(x [N,C,H,W] in [0,1]) -> latent mean [N,{z}]; "
                f"decode(z [N,{z}]) -> images in [0,1]; forward = decode(encode(x)).\n"
                f"- {'Fine-tuning' if clf is not None else 'Training'}: {len(xtr)} training "
                f"images of the {args.dataset} folder passed as --data, Adam lr {args.lr}, batch "
                f"{args.batch}, {epoch} epochs, seed {args.seed}, loss = Bernoulli reconstruction "
                f"+ KL (negative ELBO){' + the consistency term below' if clf is not None else ''}.\n"
                f"- Test reconstruction error (10,000 test images, pixels in [0,1]): "
                f"MSE {mse:.5f}, MAE {mae:.4f}.\n"
                f"{consistency}"
                f"- Produced by: /usr/bin/python3 {' '.join(['tools/train/train_vae.py'] + sys.argv[1:])}\n")
        save(model, path, card, args)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
