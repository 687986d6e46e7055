#!/usr/bin/env python3
"""Converts the R2-B2 thesis' MNIST VAE (Dai 2021, App. E.6.2.1a: the Keras MLP VAE, latent
z in R^2, 512 hidden units) from its published Keras HDF5 weights to advbo's TorchScript VAE
(the `encode` / `decode` module of tools/train/train_vae.py), so the adversarial-ML game can be
played with the thesis' own latent space (where does our game differ?).

Source of the weights: the R2-B2 authors' repository (daizhongxiang/R2-B2), file
`r2_b2_adv_ml/vae_mlp_mnist_D_2.h5` (trained by its generate_VAE_MNIST.py: Bernoulli
reconstruction x 784 + KL, 50 epochs on the 60,000 MNIST training images). Extract it from a
snapshot:

    git --git-dir <snapshot> show HEAD:r2_b2_adv_ml/vae_mlp_mnist_D_2.h5 > vae.h5
    /usr/bin/python3 tools/train/convert_r2b2_vae.py --weights vae.h5 --out models \\
        --data DATA/mnist

The weights are only re-laid out (Keras dense kernels [in, out] -> torch [out, in]); nothing
is trained. Needs python3-h5py. Writes <out>/mnist_vae_r2b2.pt and its card
<out>/mnist_vae_r2b2.md with the test reconstruction error.
"""
import argparse
import hashlib
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_models import load_mnist  # noqa: E402
from train_vae import MnistVae, reconstruction_error, save  # noqa: E402

# torch layer -> Keras HDF5 group of its weights
LAYERS = {"enc": "encoder/dense_1", "mu": "encoder/z_mean", "logvar": "encoder/z_log_var",
          "dec1": "decoder/dense_2", "dec2": "decoder/dense_3"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", required=True, help="vae_mlp_mnist_D_2.h5")
    ap.add_argument("--out", default="models")
    ap.add_argument("--data", required=True, help="MNIST folder (for the card's test error)")
    a = ap.parse_args()
    try:
        import h5py
    except ImportError:
        sys.exit("needs h5py: apt-get install python3-h5py")
    if not os.path.isfile(a.weights):
        sys.exit(f"{a.weights}: not found")
    model = MnistVae(z=2, hidden=512)
    with h5py.File(a.weights, "r") as f:
        for name, group in LAYERS.items():
            try:
                kernel = np.asarray(f[group + "/kernel:0"])
                bias = np.asarray(f[group + "/bias:0"])
            except KeyError as e:
                sys.exit(f"{a.weights}: no weights for {group} ({e}); not the R2-B2 MNIST VAE?")
            layer = getattr(model, name)
            if tuple(layer.weight.shape) != kernel.T.shape:
                sys.exit(f"{a.weights}: {group} has shape {kernel.shape}, expected "
                         f"{tuple(layer.weight.shape[::-1])}")
            layer.weight.data = torch.from_numpy(kernel.T.copy())
            layer.bias.data = torch.from_numpy(bias.copy())
    _, (x_test, _) = load_mnist(a.data)
    mse, mae = reconstruction_error(model.eval(), x_test)
    digest = hashlib.sha256(open(a.weights, "rb").read()).hexdigest()
    card = f"""# mnist_vae_r2b2.pt — the R2-B2 thesis' own MNIST VAE

- Source: Dai 2021 thesis App. E.6.2.1a; weights published by the R2-B2 authors
  (daizhongxiang/R2-B2, `r2_b2_adv_ml/vae_mlp_mnist_D_2.h5`, sha256 {digest[:16]}...),
  trained by their generate_VAE_MNIST.py (Keras MLP VAE, Bernoulli reconstruction x 784 + KL,
  50 epochs on the 60,000 training images).
- Architecture: MLP encoder 784-512-(mean, log-variance) in R^2; decoder 2-512-784, sigmoid
  (the same module as models/mnist_vae.pt).
- TorchScript methods: encode(x [N,1,28,28] in [0,1]) -> latent mean [N,2]; decode(z [N,2])
  -> images in [0,1]; forward = decode(encode(x)).
- Converted (weights re-laid out, nothing trained) by:
  /usr/bin/python3 tools/train/convert_r2b2_vae.py --weights vae_mlp_mnist_D_2.h5 --out models
  --data DATA/mnist
- Test reconstruction error (10,000 test images, pixels in [0,1]): MSE {mse:.5f}, MAE {mae:.4f}.
"""
    os.makedirs(a.out, exist_ok=True)
    save(model, os.path.join(a.out, "mnist_vae_r2b2.pt"), card, a)
    print(card)


if __name__ == "__main__":
    main()
