"""Builds the TorchScript fixtures of tests/oracle (run with /usr/bin/python3; torch from apt).

raiser.pt: a 1x28x28 -> 10 "classifier" that raises ValueError with its own message when the
mean pixel exceeds 0.6, so a test can check that a model's own error reaches the user.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tools/train"))
from torchscript_util import save_portable  # noqa: E402


class Raiser(torch.nn.Module):
    def forward(self, x):
        if x.mean() > 0.6:
            raise ValueError("input too bright: the model's own message")
        return x.flatten(1)[:, :10]


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    save_portable(torch.jit.script(Raiser()), os.path.join(here, "raiser.pt"))
