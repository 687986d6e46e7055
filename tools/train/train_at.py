#!/usr/bin/env python3
"""Adversarially train the shipped robust models and measure their white-box robustness.

Used only at development time (Debian's python3-torch); advbo itself never needs Python.

Two recipes (--recipe; the default is pgd for MNIST, fgsm-rs for CIFAR-10):
  pgd      PGD adversarial training (Madry et al., ICLR 2018, Sec. 3 and eq. 2.1): per batch,
           delta ~ U(-eps, eps), then K signed-gradient ascent steps of size alpha on the
           cross-entropy, each projected onto the L-inf eps-ball and [0, 1]; then a descent
           step on the cross-entropy at x + delta. K = --pgd-train-steps (default 10),
           alpha = 2.5 eps / K (Madry et al.'s rule: the walk can cross the ball).
  fgsm-rs  "fast" adversarial training, FGSM with a random start (Wong, Rice & Kolter,
           ICLR 2020, Alg. 3): delta ~ U(-eps, eps), one signed-gradient step of size
           alpha = 1.25 eps. At eps = 0.3 on MNIST it overfits catastrophically (see
           models/mnist_fgsm_overfit.md); it is kept for CIFAR-10 and for that stress case.
Both keep the guard against catastrophic overfitting: after every epoch a PGD attack
(--val-steps steps on the margin loss, one restart) runs on a validation split held out of
the *training* set (never the test set), and the epoch with the best validation PGD accuracy
is exported. MNIST ramps eps up linearly over the first epochs (a warm-up; training at
eps = 0.3 from the first step is unstable).

Evaluation (the card's reference numbers, what a black-box evaluation should approach):
untargeted PGD on the C&W margin loss max_{j != y} z_j - z_y (Carlini & Wagner 2017), 50
steps, 5 random restarts, step eps/4 halved at 50 % and 75 % of the steps (a fixed schedule,
as in Croce & Hein 2020's APGD motivation). An image counts as broken when any iterate of
any restart is misclassified. Two columns: float iterates, and 8-bit iterates (each iterate
projected to the 8-bit grid inside the eps-ball, i.e. the images advbo queries by default).

Usage:
  /usr/bin/python3 tools/train/train_at.py mnist   --data DATA/mnist   --out models
  /usr/bin/python3 tools/train/train_at.py cifar10 --data DATA/cifar10 --out models
  /usr/bin/python3 tools/train/train_at.py mnist --eval-only models/mnist_at.pt --data ...  # re-measure
Writes models/<dataset>_at.pt, models/<dataset>_at.md (the card) and
tools/results/at_pgd/<dataset>_at_pgd.jsonl (one line per evaluated test image: index,
label, clean correct, robust float, robust 8-bit) so that black-box evaluations can be
compared with white-box PGD image by image.
"""
import argparse
import copy
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchscript_util import save_portable  # noqa: E402
from train_models import (CWNet, augment, accuracy, load_cifar, load_mnist, one_cycle,  # noqa: E402
                          sha256)


def margin(logits, y):
    """C&W margin max_{j != y} z_j - z_y, [N]; > 0 means misclassified."""
    true = logits.gather(1, y[:, None])[:, 0]
    other = logits.clone()
    other.scatter_(1, y[:, None], float("-inf"))
    return other.max(1).values - true


def project_8bit(x_clean, x_adv, eps):
    """Nearest 8-bit image to x_adv inside the eps-ball of the (8-bit) clean image and [0, 1]."""
    lo = torch.ceil((x_clean - eps).clamp(0, 1) * 255 - 1e-6)
    hi = torch.floor((x_clean + eps).clamp(0, 1) * 255 + 1e-6)
    return torch.max(torch.min(torch.round(x_adv * 255), hi), lo) / 255


def pgd_margin(model, x, y, eps, steps, restarts, gen):
    """White-box PGD on the margin loss. Returns (broken_float [N] bool, broken_8bit [N] bool).

    Images already misclassified clean count as broken in both columns. Each restart runs
    only on the images not yet broken (in the 8-bit column, the stricter of the two)."""
    model.eval()
    with torch.no_grad():
        clean_wrong = model(x).argmax(1) != y
    broken_f = clean_wrong.clone()
    broken_8 = clean_wrong.clone()
    for _ in range(restarts):
        todo = (~broken_8).nonzero()[:, 0]
        if len(todo) == 0:
            break
        xc, yc = x[todo], y[todo]
        delta = (torch.rand(xc.shape, generator=gen) * 2 - 1) * eps
        xa = (xc + delta).clamp(0, 1)
        bf = torch.zeros(len(todo), dtype=torch.bool)
        b8 = torch.zeros(len(todo), dtype=torch.bool)
        for t in range(steps):
            step = eps / 4 * (0.5 if t >= steps // 2 else 1.0) * (0.5 if t >= 3 * steps // 4 else 1.0)
            xa.requires_grad_(True)
            logits = model(xa)
            m = margin(logits, yc)
            bf |= (m > 0).detach()
            grad, = torch.autograd.grad(m.sum(), xa)
            with torch.no_grad():
                b8 |= model(project_8bit(xc, xa, eps)).argmax(1) != yc
                xa = xa.detach() + step * grad.sign()
                xa = torch.min(torch.max(xa, xc - eps), xc + eps).clamp(0, 1)
        with torch.no_grad():
            bf |= model(xa).argmax(1) != yc
            b8 |= model(project_8bit(xc, xa, eps)).argmax(1) != yc
        broken_f[todo] |= bf
        broken_8[todo] |= b8
    return broken_f, broken_8


def val_pgd_accuracy(model, x, y, eps, steps, gen, bs=500):
    """Validation PGD-`steps` accuracy (float iterates, 1 restart), in %."""
    broken = []
    for i in range(0, len(x), bs):
        bf, _ = pgd_margin(model, x[i:i + bs], y[i:i + bs], eps, steps, 1, gen)
        broken.append(bf)
    return 100.0 * (1 - torch.cat(broken).float().mean().item())


def fgsm_rs_delta(model, xb, yb, eps, alpha, gen):
    """Wong et al. 2020, Alg. 3, lines 3-6: the FGSM-RS perturbation for one batch."""
    delta = (torch.rand(xb.shape, generator=gen) * 2 - 1) * eps
    delta = ((xb + delta).clamp(0, 1) - xb).requires_grad_(True)
    loss = F.cross_entropy(model(xb + delta), yb)
    grad, = torch.autograd.grad(loss, delta)
    delta = (delta.detach() + alpha * grad.sign()).clamp(-eps, eps)
    return ((xb + delta).clamp(0, 1) - xb).detach()


def pgd_train_delta(model, xb, yb, eps, steps, gen):
    """Madry et al. 2018, eq. 2.1's inner maximisation: PGD-`steps` on the cross-entropy from a
    uniform start, step 2.5 eps / steps, projected onto the eps-ball and [0, 1]."""
    alpha = 2.5 * eps / steps
    delta = (torch.rand(xb.shape, generator=gen) * 2 - 1) * eps
    delta = (xb + delta).clamp(0, 1) - xb
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(xb + delta), yb)
        grad, = torch.autograd.grad(loss, delta)
        delta = (delta.detach() + alpha * grad.sign()).clamp(-eps, eps)
        delta = (xb + delta).clamp(0, 1) - xb
    return delta.detach()


def evaluate(model, xte, yte, eps, steps, restarts, seed, n, bs):
    gen = torch.Generator().manual_seed(seed)
    x, y = xte[:n], yte[:n]
    with torch.no_grad():
        model.eval()
        clean = torch.cat([model(x[i:i + bs]).argmax(1) == y[i:i + bs] for i in range(0, n, bs)])
    bfs, b8s = [], []
    t0 = time.time()
    for i in range(0, n, bs):
        bf, b8 = pgd_margin(model, x[i:i + bs], y[i:i + bs], eps, steps, restarts, gen)
        bfs.append(bf)
        b8s.append(b8)
        print(f"  PGD {min(i + bs, n)}/{n} images ({time.time() - t0:.0f}s)", flush=True)
    return clean, torch.cat(bfs), torch.cat(b8s), time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["mnist", "cifar10"])
    ap.add_argument("--data", required=True, help="folder of the full dataset (DATA/<name>: the dataset files, e.g. MNIST IDX or CIFAR-10 batches)")
    ap.add_argument("--out", default="models")
    ap.add_argument("--results", default="tools/results/at_pgd")
    ap.add_argument("--eps", type=float, default=None, help="L-inf radius (default 0.3 MNIST, 8/255 CIFAR-10)")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-n", type=int, default=None, help="test images for the PGD evaluation "
                    "(default 1000 MNIST, 500 CIFAR-10; the first ones of the official test set)")
    ap.add_argument("--pgd-steps", type=int, default=50)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--recipe", choices=["pgd", "fgsm-rs"], default=None,
                    help="training attack (default pgd for mnist, fgsm-rs for cifar10)")
    ap.add_argument("--pgd-train-steps", type=int, default=10, help="PGD steps per batch (recipe pgd)")
    ap.add_argument("--val-steps", type=int, default=20, help="PGD steps of the per-epoch validation")
    ap.add_argument("--shift", type=int, default=None, help="random-shift augmentation in pixels "
                    "(default 2 for mnist with recipe pgd, 0 for mnist fgsm-rs, 4 for cifar10)")
    ap.add_argument("--name", default=None, help="output name (default <dataset>_at)")
    ap.add_argument("--eval-only", help="skip training; evaluate this TorchScript model")
    ap.add_argument("--limit-train", type=int, default=None, help="smoke test: train on this many images")
    args = ap.parse_args()
    if args.eps is not None and not 0 < args.eps <= 1:
        ap.error(f"--eps must be in (0, 1], got {args.eps}")
    if args.pgd_train_steps < 1 or args.val_steps < 1:
        ap.error("--pgd-train-steps and --val-steps must be at least 1")
    if args.shift is not None and not 0 <= args.shift <= 8:
        ap.error(f"--shift must be in 0..8 pixels, got {args.shift}")
    if args.epochs is not None and args.epochs < 1:
        ap.error(f"--epochs must be at least 1, got {args.epochs}")
    recipe = args.recipe or ("pgd" if args.dataset == "mnist" else "fgsm-rs")

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)

    if args.dataset == "mnist":
        (xtr, ytr), (xte, yte) = load_mnist(args.data)
        eps = args.eps if args.eps is not None else 0.3
        model = CWNet(1, 32, 64, 200, 64 * 4 * 4, [0.1307], [0.3081], dropout=0.0)
        shift = args.shift if args.shift is not None else (2 if recipe == "pgd" else 0)
        epochs, lr, flip, bs, warmup = args.epochs or 20, 2e-3, False, 128, 5
        example = torch.rand(1, 1, 28, 28)
        eval_n = args.eval_n or 1000
        arch = "conv32-conv32-pool-conv64-conv64-pool-fc200-fc200-fc10"
    else:
        (xtr, ytr), (xte, yte) = load_cifar(args.data)
        eps = args.eps if args.eps is not None else 8 / 255
        mean, std = [0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616]
        model = CWNet(3, 64, 128, 256, 128 * 5 * 5, mean, std, dropout=0.0)
        shift = args.shift if args.shift is not None else 4
        epochs, lr, flip, bs, warmup = args.epochs or 10, 2e-3, True, 128, 0
        example = torch.rand(1, 3, 32, 32)
        eval_n = args.eval_n or 500
        arch = "conv64-conv64-pool-conv128-conv128-pool-fc256-fc256-fc10"
    name = args.name or f"{args.dataset}_at"
    alpha_ratio = 1.25
    # Validation split: the last 1000 training images (model selection never sees the test set).
    xval, yval = xtr[-1000:], ytr[-1000:]
    xtr, ytr = xtr[:-1000], ytr[:-1000]
    if args.limit_train:
        xtr, ytr = xtr[:args.limit_train], ytr[:args.limit_train]
    os.makedirs(args.out, exist_ok=True)
    pt_path = os.path.join(args.out, name + ".pt")
    history = []
    wall = 0.0
    if args.eval_only:
        model = torch.jit.load(args.eval_only).eval()
        pt_path = args.eval_only
    else:
        opt, sched = one_cycle(model, lr, epochs * (len(xtr) // bs), pct_start=0.3)
        best, best_state = -1.0, None
        t0 = time.time()
        step = 0
        for ep in range(epochs):
            perm = torch.randperm(len(xtr), generator=gen)
            tot, nb = 0.0, 0
            for i in range(0, len(xtr) - bs + 1, bs):
                idx = perm[i:i + bs]
                xb = augment(xtr[idx].clone(), shift, flip, gen)
                e = eps * min(1.0, (step + 1) / (warmup * (len(xtr) // bs))) if warmup else eps
                model.train()
                if recipe == "pgd":
                    delta = pgd_train_delta(model, xb, ytr[idx], e, args.pgd_train_steps, gen)
                else:
                    delta = fgsm_rs_delta(model, xb, ytr[idx], e, alpha_ratio * e, gen)
                loss = F.cross_entropy(model(xb + delta), ytr[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                step += 1
                tot += loss.item()
                nb += 1
            model.eval()
            val_clean = accuracy(model, xval, yval)
            val_pgd = val_pgd_accuracy(model, xval, yval, eps, args.val_steps, gen)
            history.append((ep + 1, tot / nb, val_clean, val_pgd))
            print(f"[{name}] epoch {ep + 1}/{epochs} loss {tot / nb:.4f} val clean {val_clean:.2f}% "
                  f"val PGD-{args.val_steps} {val_pgd:.2f}% ({time.time() - t0:.0f}s)", flush=True)
            if val_pgd >= best:
                best, best_state = val_pgd, copy.deepcopy(model.state_dict())
                best_epoch = ep + 1
                model.eval()
                save_portable(torch.jit.trace(model, example), pt_path)
        wall = time.time() - t0
        model.load_state_dict(best_state)
        model.eval()
        model = torch.jit.load(pt_path).eval()

    test_acc = accuracy(model, xte, yte)
    clean, bf, b8, pgd_wall = evaluate(model, xte, yte, eps, args.pgd_steps, args.restarts,
                                       args.seed, eval_n, 250)
    n = len(clean)
    rob_f = 100.0 * (1 - bf.float().mean().item())
    rob_8 = 100.0 * (1 - b8.float().mean().item())
    clean_n = 100.0 * clean.float().mean().item()
    os.makedirs(args.results, exist_ok=True)
    rows_path = os.path.join(args.results, f"{name}_pgd.jsonl")
    with open(rows_path + ".tmp", "w") as f:
        for i in range(n):
            f.write(json.dumps({"index": i, "label": int(yte[i]), "clean_correct": bool(clean[i]),
                                "robust_float": not bool(bf[i]), "robust_8bit": not bool(b8[i])}) + "\n")
    os.replace(rows_path + ".tmp", rows_path)
    summary = {"model": pt_path, "sha256": sha256(pt_path), "eps": eps, "n": n,
               "clean_accuracy_full_test": test_acc, "clean_accuracy_n": clean_n,
               "pgd_robust_accuracy_float": rob_f, "pgd_robust_accuracy_8bit": rob_8,
               "pgd_steps": args.pgd_steps, "restarts": args.restarts, "seed": args.seed,
               "pgd_wall_s": pgd_wall, "torch": torch.__version__}
    with open(os.path.join(args.results, f"{name}_pgd_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))
    if args.eval_only:
        return 0

    if recipe == "pgd":
        recipe_txt = (f"PGD adversarial training (Madry et al., ICLR 2018, eq. 2.1): ε = {eps:.4f}, "
                      f"{args.pgd_train_steps} steps of α = 2.5 ε / {args.pgd_train_steps} on the "
                      "cross-entropy from δ₀ ~ U(−ε, ε)")
    else:
        recipe_txt = (f"FGSM with random start (Wong, Rice & Kolter, ICLR 2020, Alg. 3): ε = {eps:.4f}, "
                      "step α = 1.25 ε, δ₀ ~ U(−ε, ε)")
    eps_txt = "0.3" if args.dataset == "mnist" else "8/255"
    hist = "\n".join(f"| {e} | {l:.4f} | {c:.2f} % | {p:.2f} % |" for e, l, c, p in history)
    shape = "[N, 1, 28, 28]" if args.dataset == "mnist" else "[N, 3, 32, 32]"
    aug = "none" if not shift else f"random shifts up to {shift} px" + (", horizontal flips" if flip else "")
    card = f"""# {name}.pt — adversarially trained {args.dataset.upper()} CNN (L∞ ε = {eps_txt})

The robust target for defense evaluations (`advbo evaluate`): its white-box PGD number below is
the reference a black-box evaluation should approach from above.

| field | value |
| --- | --- |
| architecture | {arch}; 3x3 valid convs, each followed by batch norm and ReLU; 2x2 max-pool; no dropout (the C&W architecture of the shipped `{args.dataset}_cw.pt`) |
| training data | the {args.dataset} folder passed as `--data` ({len(xtr)} training images; the last 1,000 held out for model selection) |
| recipe | {recipe_txt}{f'; ε ramped linearly over the first {warmup} epochs' if warmup else ''} |
| augmentation | {aug} |
| optimiser | AdamW lr {lr} (one-cycle, 30 % warm-up), weight decay 5e-4, batch {bs} |
| epochs | {epochs}; exported: epoch {best_epoch} (best PGD-{args.val_steps} accuracy on the held-out training images — the paper's early stop against catastrophic overfitting) |
| seed | {args.seed} |
| training wall time | {wall:.0f} s on {args.threads} CPU threads (shared with other development jobs) |
| clean accuracy, full official test set (10,000 images) | **{test_acc:.2f} %** |
| clean accuracy, first {n} test images | {clean_n:.2f} % |
| **white-box robust accuracy**, first {n} test images: PGD on the C&W margin loss, {args.pgd_steps} steps, {args.restarts} restarts, step ε/4 halved at 50 % and 75 % | **{rob_f:.2f} %** (float iterates); **{rob_8:.2f} %** (8-bit iterates, as advbo queries) |
| per-image PGD results | `tools/results/at_pgd/{name}_pgd.jsonl` |
| input contract | float32 NCHW {shape}, pixels in [0, 1]; normalisation is inside the module |
| output | logits [N, 10] (use `--output auto` or `logits`) |
| sha256 | `{sha256(pt_path)}` |
| produced by | `/usr/bin/python3 tools/train/train_at.py {args.dataset} --data DATA/{args.dataset} --out {args.out} --seed {args.seed} --threads {args.threads}{f' --epochs {args.epochs}' if args.epochs else ''}{f' --recipe {args.recipe}' if args.recipe else ''}{f' --name {args.name}' if args.name else ''}` (Debian python3-torch {torch.__version__}) |

Per epoch (validation = the 1,000 held-out training images; PGD-{args.val_steps}, one restart, float):

| epoch | training loss (adversarial) | validation clean | validation PGD-{args.val_steps} |
| ---: | ---: | ---: | ---: |
{hist}

Exported with `torch.jit.trace` in eval mode; loads with `torch::jit::load` (LibTorch) and
Python's `torch.jit.load`.
"""
    with open(os.path.join(args.out, name + ".md"), "w") as f:
        f.write(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
