#!/usr/bin/python3
"""Peer run for IBM ART's HopSkipJump (L2 and L_inf), Sign-OPT (L2), SimBA-DCT and
Square (L2) on the same shipped CIFAR-10 model, test images, threat model and query budget as
`advbo bench` (advbo's hsja, sign-opt, simba-dct and square-l2; tools/bench/bench_art_peer.sh),
so the median distance of the closest adversarial query (hard-label), the ASR and queries at the
L2 radius (score-based) and the wall time per image can be compared side by side.

ART is run from a checkout of its public code given with --art (not part of this project):
e.g. `git clone https://github.com/Trusted-AI/adversarial-robustness-toolbox` (this machine:
`git archive` of the snapshot fetched into a temp dir). Needs python3-torch, -numpy, -scipy,
-sklearn, -tqdm, -six from Debian.

Every image the model scores goes through one counting wrapper: a batch that would pass the
budget raises and ends the attack (ART has no query budget of its own for HopSkipJump), and each
adversarial query's distance to the clean image (float queries, as ART sends them) updates the
closest-adversarial trace, the same definition as advbo's oracle (distance_trace in records).
For the score-based attacks (simba_l2, square_l2) the wrapper also ends the attack at its first
adversarial query inside the L2 ball of radius --eps, the success advbo's oracle counts (ART's
SimBA has no ball of its own: a query outside it is counted but is not a success).
Output: JSONL records (one per image and attack: attack, image_index, queries_used, distance,
distance_trace, seconds, model_seconds), readable by tools/bench/threat_model_table.py when
written as ROOT/<group>/records.jsonl.

Usage: /usr/bin/python3 tools/bench/art_peer.py --art ART_DIR --out ROOT [--n 50] [--offset 100]
       [--budget 1000] [--attacks hsja_l2,hsja_linf,signopt_l2,simba_l2,square_l2,square_linf]
       [--eps 1.0] [--eps-linf 0.0314] [--threads 1]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Budget(Exception):
    """The next batch would pass the query budget."""


class Success(Exception):
    """A query was adversarial and inside the ball (score-based runs): the attack is done."""


class CountingModel:
    """The TorchScript model behind ART's BlackBoxClassifier: counts every image, enforces the
    budget and records the closest adversarial query (L2 or L_inf)."""

    def __init__(self, model, clean, label, budget, norm, eps=None):
        self.model, self.clean, self.label, self.budget, self.norm = model, clean, label, budget, norm
        self.eps, self.success = eps, False
        self.queries, self.model_seconds, self.best, self.trace = 0, 0.0, float("inf"), []

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float32).reshape(-1, 3, 32, 32)
        if self.queries + len(x) > self.budget:
            raise Budget()
        t0 = time.perf_counter()
        with torch.no_grad():
            logits = self.model(torch.from_numpy(np.ascontiguousarray(x)))
        probs = torch.softmax(logits, 1).numpy().astype(np.float32)
        self.model_seconds += time.perf_counter() - t0
        for img, p in zip(x, probs):
            self.queries += 1
            if int(np.argmax(p)) != self.label:
                d = img.astype(np.float64) - self.clean
                dist = float(np.sqrt((d * d).sum()) if self.norm == 2 else np.abs(d).max())
                if dist < self.best:
                    self.best = dist
                    self.trace.append([self.queries, dist])
                if self.eps is not None and dist <= self.eps + 1e-6:
                    self.success = True
                    raise Success()
        return probs


def load_cifar(path, count):
    raw = np.fromfile(path, dtype=np.uint8).reshape(-1, 3073)[:count]
    return raw[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / 255.0, raw[:, 0].astype(int)


def make_attack(name, classifier, budget, eps):
    """ART's attack `name` with the papers' settings advbo uses too; returns (attack, norm)."""
    from art.attacks.evasion import HopSkipJump, SignOPTAttack, SimBA, SquareAttack
    if name.startswith("hsja"):
        norm = 2 if name.endswith("l2") else np.inf
        # The paper's defaults (ART's): init_eval 100, max_eval 10000; iterations until the
        # budget wrapper stops it.
        return HopSkipJump(classifier, targeted=False, norm=norm, max_iter=10000, max_eval=10000,
                           init_eval=100, init_size=100, verbose=False), norm
    if name == "signopt_l2":
        return SignOPTAttack(classifier, targeted=False, k=200, alpha=0.2, beta=0.001,
                             num_trial=100, max_iter=10000, query_limit=budget, verbose=False), 2
    if name == "simba_l2":
        # advbo's simba-dct defaults: step 0.2 (the paper's), low-frequency block 4 = side / 8,
        # stride 4; ART tries both signs every step (2 queries), the paper the second only if
        # the first fails.
        return SimBA(classifier, attack="dct", max_iter=budget, order="random", epsilon=0.2,
                     freq_dim=4, stride=4, targeted=False), 2
    if name == "square_l2":
        # p_init 0.1 is the paper's (and advbo's square-l2 default) for L2.
        return SquareAttack(classifier, norm=2, max_iter=budget, eps=eps, p_init=0.1,
                            nb_restarts=1, batch_size=1, verbose=False), 2
    if name == "square_linf":
        # p_init 0.05: the paper's L_inf setting for CIFAR-10 (and advbo's square default).
        return SquareAttack(classifier, norm=np.inf, max_iter=budget, eps=eps, p_init=0.05,
                            nb_restarts=1, batch_size=1, verbose=False), np.inf
    raise SystemExit(f"art_peer: unknown attack {name} "
                     "(hsja_l2, hsja_linf, signopt_l2, simba_l2, square_l2, square_linf)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--art", required=True, help="a checkout of ART's public code")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--offset", type=int, default=100)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--attacks", default="hsja_l2,hsja_linf,signopt_l2,simba_l2,square_l2")
    ap.add_argument("--eps", type=float, default=1.0,
                    help="L2 radius of the score-based attacks' success (pixels in [0, 1])")
    ap.add_argument("--eps-linf", type=float, default=8 / 255,
                    help="L_inf radius of square_linf's success (pixels in [0, 1])")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if not a.eps > 0 or not np.isfinite(a.eps):
        sys.exit(f"art_peer: --eps {a.eps}: must be a finite radius > 0")
    if not os.path.isdir(os.path.join(a.art, "art")):
        sys.exit(f"art_peer: {a.art}: no art/ package there (give a checkout of ART's code)")
    sys.path.insert(0, a.art)
    import art
    from art.estimators.classification import BlackBoxClassifier, BlackBoxClassifierNeuralNetwork
    torch.set_num_threads(a.threads)
    model = torch.jit.load(os.path.join(ROOT, "models", "cifar10_cw.pt")).eval()
    xs, ys = load_cifar(os.path.join(ROOT, "data", "cifar10", "test_batch_first2000.bin"),
                        a.offset + a.n)
    started = set()  # groups whose records file this run has begun (attacks append to it)
    for name in a.attacks.split(","):
        score = name in ("simba_l2", "square_l2", "square_linf")
        eps = a.eps_linf if name == "square_linf" else a.eps
        group = ("score_linf" if name == "square_linf" else "score_l2" if score
                 else "label_l2" if name.endswith("l2") else "label_linf")
        os.makedirs(os.path.join(a.out, group), exist_ok=True)
        path = os.path.join(a.out, group, "records.jsonl")
        if group in started:
            os.replace(path, path + ".partial")
        started.add(group)
        with open(path + ".partial", "a" if os.path.exists(path + ".partial") else "w") as out:
            for idx in range(a.offset, a.offset + a.n):
                x, y = xs[idx], int(ys[idx])
                with torch.no_grad():
                    if int(model(torch.from_numpy(x[None])).argmax()) != y:
                        continue  # advbo attacks only correctly classified images
                np.random.seed(a.seed + idx)
                counter = CountingModel(model, x.astype(np.float64), y, a.budget, None,
                                        eps if score else None)
                # SimBA and Square ask for ART's neural-network estimator type (the same
                # black-box predict function underneath).
                wrap = BlackBoxClassifierNeuralNetwork if score else BlackBoxClassifier
                clf = wrap(counter, (3, 32, 32), 10, clip_values=(0.0, 1.0))
                attack, counter.norm = make_attack(name, clf, a.budget, eps)
                t0 = time.perf_counter()
                try:
                    attack.generate(x[None], y=np.eye(10, dtype=np.float32)[[y]])
                except (Budget, Success):
                    pass
                rec = {"attack": f"art:{name}", "image_index": idx, "queries_used": counter.queries,
                       "distance": None if counter.best == float("inf") else counter.best,
                       "distance_trace": counter.trace, "seconds": time.perf_counter() - t0,
                       "model_seconds": counter.model_seconds, "budget": a.budget,
                       "norm": "l2" if counter.norm == 2 else "linf",
                       "feedback": "scores" if score else "label",
                       "art_version": art.__version__, "seed": a.seed, "dataset": "cifar10",
                       "pixels": "float", "epsilon": eps if score else None,
                       "success": counter.success, "queries": counter.queries}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(f"art_peer: {name} image {idx}: {counter.queries} queries, distance "
                      f"{rec['distance']}, {rec['seconds']:.1f} s", file=sys.stderr)
        os.replace(path + ".partial", path)


if __name__ == "__main__":
    main()
