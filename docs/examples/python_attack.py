#!/usr/bin/env python3
"""Attack a PyTorch model from Python (README, "Examples"): Square, then BOS², untargeted, on
4 shipped CIFAR-10 test images, with the shipped model loaded as a torch module (any
torch.nn.Module or callable returning scores works the same way).

    PYTHONPATH=build/python /usr/bin/python3 docs/examples/python_attack.py [BUDGET]

(after `bash tools/install_python.sh`, plain `python docs/examples/python_attack.py` in its
venv). BUDGET queries per image (default 300).
"""
import sys

import advbo
import torch

budget = int(sys.argv[1]) if len(sys.argv) > 1 else 300
net = torch.jit.load(advbo.shipped_model("cifar10_cw")).eval()   # or your own nn.Module
x, y = advbo.load_images("cifar10", limit=4)                      # float32 [4, 3, 32, 32] in [0, 1]
x = torch.from_numpy(x)
for name in ("square", "bos2"):
    result = advbo.attack(net, x, y, attack=name, eps=8 / 255, budget=budget, seed=0)
    fooled = net(result.x_adv).argmax(1) != torch.as_tensor(y)     # x_adv: a tensor like x
    print(f"{name}: {int(result.success.sum())} of {int(result.attacked.sum())} attacked images "
          f"fooled, queries {result.queries.tolist()}; re-classified adversarial: "
          f"{int(fooled.sum())}")
