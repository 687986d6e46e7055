"""advbo's Python API with torch: nn.Modules run in Python on their own device and dtype,
tensors in and out (shape, dtype and device of x), the shipped TorchScript model both as a
file and as a loaded module. Needs python3-torch (tools/setup.sh installs it)."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import advbo  # noqa: E402  (after torch: the order users write)

ROOT = os.environ.get("ADVBO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))


class BrightnessNet(torch.nn.Module):
    """Class 1 iff the mean pixel exceeds 0.5 (logits +-20 (mean - 0.5)), as a module with a
    float64 parameter and dropout (random in training mode). Records each forward's grad mode
    and input dtype."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([-20.0, 20.0], dtype=torch.float64))
        self.drop = torch.nn.Dropout(0.5)
        self.calls = []

    def forward(self, x):
        self.calls.append((torch.is_grad_enabled(), x.dtype, self.training))
        m = self.drop(x.flatten(1).mean(1, keepdim=True)) - 0.5
        return m * self.scale


def grey(values, shape=(1, 8, 8)):
    g = torch.Generator().manual_seed(0)
    x = torch.stack([(v + 0.02 * torch.randn(shape, generator=g)).clamp(0, 1) for v in values])
    return (x * 255).round() / 255


def test_an_nn_module_is_attacked_in_python_and_tensors_come_back_like_x():
    net = BrightnessNet().train()  # left in training mode by the user
    x = grey([0.40, 0.62, 0.35]).to(torch.float64)
    y = torch.tensor([0, 1, 0])
    res = advbo.attack(net, x, y, attack="square", eps=0.2, budget=300, targeted=False, seed=3)
    assert isinstance(res.x_adv, torch.Tensor) and res.x_adv.dtype == torch.float64
    assert res.x_adv.shape == x.shape and res.x_adv.device == x.device
    assert res.success.dtype == torch.bool and bool(res.success.all())
    assert (res.x_adv - x).abs().max() <= 0.2 + 1e-6
    assert res.queries.tolist() == [r["queries"] for r in res.records]
    # eval mode and no autograd during the attack, the module's own dtype; mode restored.
    assert all(grad is False and dtype == torch.float64 and not training
               for grad, dtype, training in net.calls)
    assert net.training
    net.eval()
    with torch.no_grad():
        assert (net(res.x_adv).argmax(1) != y).all()
    assert res.records[0]["model"] == "python:BrightnessNet"


def test_a_plain_callable_with_tensor_input_receives_tensors():
    seen = []

    def f(x):
        seen.append(type(x))
        m = x.flatten(1).mean(1)
        return torch.stack([20 * (0.5 - m), 20 * (m - 0.5)], 1)

    res = advbo.attack(f, grey([0.42]), [0], attack="square", eps=0.2, budget=300, targeted=False)
    assert set(seen) == {torch.Tensor} and bool(res.success[0])


def test_the_shipped_torchscript_model_as_a_loaded_module_and_as_a_file():
    """The README's example: a torch module (here the shipped model, loaded) on tensors. The
    same module given as a file path runs in LibTorch (C++): same instances, both succeed."""
    x, y = advbo.load_images("mnist", limit=2)
    net = torch.jit.load(advbo.shipped_model("mnist_cw")).eval()
    kw = {"eps": 0.3, "budget": 300, "targeted": False, "seed": 0}
    in_python = advbo.attack(net, torch.from_numpy(x), torch.from_numpy(y), **kw)
    in_cpp = advbo.attack(advbo.shipped_model("mnist_cw"), x, y, **kw)
    assert isinstance(in_python.x_adv, torch.Tensor) and isinstance(in_cpp.x_adv, np.ndarray)
    assert in_python.success.tolist() == in_cpp.success.tolist() == [True, True]
    with torch.no_grad():
        pred = net(in_python.x_adv).argmax(1)
    assert (pred != torch.from_numpy(y)).all()
    # 8-bit: the returned images survive saving.
    q = in_python.x_adv * 255
    assert (q - q.round()).abs().max() < 1e-3


def test_torch_input_errors():
    net = BrightnessNet()
    x = grey([0.4, 0.3], shape=(3, 8, 8))
    with pytest.raises(ValueError, match=r"channels-last.*x.permute\(0, 3, 1, 2\)"):
        advbo.attack(net, x.permute(0, 2, 3, 1), [0, 0], eps=0.1, targeted=False)
    with pytest.raises(TypeError, match=r"uint8: 0-255 pixels\? pass x.float\(\) / 255"):
        advbo.attack(net, (x * 255).to(torch.uint8), [0, 0], eps=0.1, targeted=False)
    with pytest.raises(TypeError, match="y must be integer class indices, got dtype float32"):
        advbo.attack(net, x, torch.tensor([0.0, 1.0]), eps=0.1, targeted=False)

    class TupleNet(torch.nn.Module):
        def forward(self, x):
            return (x.flatten(1)[:, :2],)
    with pytest.raises(TypeError, match="the model returned tuple"):
        advbo.attack(TupleNet(), x, [0, 0], eps=0.1, targeted=False)


def test_a_model_on_the_meta_device_is_a_clear_error():
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 2, device="meta"))
    with pytest.raises(ValueError, match="meta device: its weights were never materialised"):
        advbo.attack(net, grey([0.4]), [0], eps=0.1)
