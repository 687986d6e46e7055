"""The advbo Python module (src/python/advbo_module.cc) with Debian's python3 and pytest.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH pointing at the built module and
ADVBO_BINARY / ADVBO_SOURCE set."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import advbo

ROOT = os.environ.get("ADVBO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("ADVBO_BINARY", os.path.join(ROOT, "build", "advbo"))
TIMING = {"seconds", "model_seconds", "bo_seconds", "bo_phase_seconds"}


def shipped_mnist(n):
    """The first n shipped MNIST test images [n, 1, 28, 28] in [0, 1] and labels [n]."""
    with gzip.open(os.path.join(ROOT, "data", "mnist", "t10k-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(os.path.join(ROOT, "data", "mnist", "t10k-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return (x[: n * 784].reshape(n, 1, 28, 28) / np.float32(255)).astype(np.float32), y[:n].astype(np.int64)


class Brightness:
    """A numpy classifier: class 1 iff the mean pixel exceeds 0.5 (logits +-20 (mean - 0.5)).
    Keeps every batch it is asked to score."""

    def __init__(self):
        self.batches = []

    def __call__(self, x):
        assert x.dtype == np.float32 and x.ndim == 4
        self.batches.append(x.copy())
        m = x.reshape(len(x), -1).mean(axis=1)
        return np.stack([20 * (0.5 - m), 20 * (m - 0.5)], axis=1)


def grey_images(values, shape=(1, 8, 8)):
    rng = np.random.default_rng(0)
    x = np.stack([np.clip(v + 0.02 * rng.standard_normal(shape), 0, 1) for v in values])
    return x.astype(np.float32)


def test_a_numpy_callable_is_attacked_within_the_threat_model_and_budget():
    model = Brightness()
    clean = grey_images([0.40, 0.35, 0.62])  # classes 0, 0, 1
    labels = np.array([0, 0, 1])
    eps, budget = 0.2, 300
    records, adv = advbo.attack(model, clean, labels, attack="square", eps=eps, budget=budget,
                                targeted=False, seed=3)
    assert len(records) == 3 and adv.shape == (3, 1, 8, 8) and adv.dtype == np.float32
    for r, a in zip(records, adv):
        assert r["success"] and 1 <= r["queries"] <= budget and r["queries_used"] <= budget
        i = r["image_index"]
        assert np.abs(a - clean[i]).max() <= eps + 1e-6
        assert r["linf"] <= eps + 1e-6
        assert r["model"].startswith("python:") and r["dataset"] == "python"
        pred = model(a[None])[0].argmax()
        assert pred != labels[i]
    # Every image the callable scored: the probe (2), the selection (3), every attack query
    # and one quantised check per record; each attack query inside its image's eps-ball.
    seen = np.concatenate(model.batches[:-3])  # the last 3 calls were this test's checks
    used = sum(r["queries_used"] for r in records) + sum(r["quantized_queries"] for r in records)
    assert len(seen) == 2 + 3 + used
    assert seen.min() >= 0 and seen.max() <= 1


def test_every_query_of_bos2_stays_in_the_eps_ball():
    model = Brightness()
    clean = grey_images([0.3])
    records, _ = advbo.attack(model, clean, np.array([0]), attack="bos2", eps=0.3, budget=40,
                              targeted=False, seed=1)
    assert len(records) == 1 and records[0]["queries_used"] <= 40
    queries = np.concatenate(model.batches[2 + 1:])  # after the probe and the selection
    assert np.abs(queries - clean[0]).max() <= 0.3 + 1e-6


def test_the_callables_exception_comes_back_unchanged_and_nothing_leaks():
    calls = {"n": 0}

    def flaky(x):
        calls["n"] += 1
        if calls["n"] == 6:
            raise ZeroDivisionError("model exploded on call 6")
        return Brightness()(x)

    before = sys.getrefcount(flaky)
    with pytest.raises(ZeroDivisionError, match="model exploded on call 6") as info:
        advbo.attack(flaky, grey_images([0.4]), np.array([0]), attack="square", eps=0.2,
                     budget=50, targeted=False)
    assert any(tb.name == "flaky" for tb in info.traceback)
    del info
    assert sys.getrefcount(flaky) == before
    # The module is usable afterwards.
    records, _ = advbo.attack(Brightness(), grey_images([0.4]), np.array([0]), attack="square",
                              eps=0.2, budget=50, targeted=False)
    assert len(records) == 1


def test_bad_callable_outputs_and_arguments_are_clear_errors():
    clean, labels = grey_images([0.4]), np.array([0])
    with pytest.raises(advbo.ModelError, match="scores"):
        advbo.attack(lambda x: np.zeros(len(x)), clean, labels, targeted=False)
    with pytest.raises(advbo.ModelError, match="non-finite"):
        advbo.attack(lambda x: np.full((len(x), 2), np.nan), clean, labels, targeted=False)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        advbo.attack(Brightness(), clean * 255, labels, targeted=False)
    with pytest.raises(ValueError, match="labels"):
        advbo.attack(Brightness(), clean, np.array([0, 1]), targeted=False)
    with pytest.raises(TypeError, match="unknown option"):
        advbo.attack(Brightness(), clean, labels, targeted=False, budjet=5)
    with pytest.raises(TypeError, match="callable"):
        advbo.attack(42, clean, labels)
    with pytest.raises(advbo.ModelError, match="model file not found"):
        advbo.attack("/nonexistent/model.pt", clean, labels)
    with pytest.raises(ValueError, match="eps"):
        advbo.attack(Brightness(), clean, labels, eps=-0.1, targeted=False)


def test_mistyped_options_name_the_option_and_the_value():
    """Issue #27: target="a" gave pybind11's "Unable to cast Python instance ..."."""
    clean, labels = grey_images([0.4]), np.array([0])
    cases = [({"target": "a"}, r"target must be a class index \(int\), got str 'a'"),
             ({"target": True}, r"target must be a class index \(int\), got bool True"),
             ({"indices": "0,1"}, r"indices must be a list of image indices"),
             ({"http_timeout": "slow"}, r"http_timeout must be a number of seconds, got str"),
             ({"pixels": 8}, r"pixels must be '8bit' or 'float', got int 8"),
             ({"dataset": 3}, r"dataset must be 'mnist', 'cifar10' or None, got int 3")]
    for kwargs, message in cases:
        with pytest.raises(TypeError, match=message):
            advbo.attack(Brightness(), clean, labels, **kwargs)


def test_ctrl_c_stops_an_attack_on_a_model_file_promptly():
    """Issue #27: Ctrl-C during an attack on a model file waited for the whole attack (the
    attack runs without the GIL); now KeyboardInterrupt arrives within a fraction of a
    second, and the module works afterwards."""
    import signal
    import threading
    import time

    x, y = shipped_mnist(20)
    model = os.path.join(ROOT, "models", "mnist_cw.pt")
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # 20 images x 9 targets of bos2 at T = 900: minutes if not interrupted
        advbo.attack(model, x, y, attack="bos2", budget=900, seed=0)
    elapsed = time.monotonic() - t0
    timer.join()
    assert elapsed < 4.0, elapsed
    records, _ = advbo.attack(model, x[:1], y[:1], attack="square", budget=20, targeted=False)
    assert len(records) == 1


def test_load_images_reads_the_shipped_sample_as_numpy():
    x, y = advbo.load_images("mnist", limit=3)
    ref_x, ref_y = shipped_mnist(3)
    assert x.shape == (3, 1, 28, 28) and x.dtype == np.float32
    assert np.array_equal(y, ref_y)
    assert np.abs(x - ref_x).max() < 1e-6
    with pytest.raises(advbo.DataError, match="nope.bin"):
        advbo.load_images(data="/nonexistent/nope.bin")


def test_same_records_as_the_cli_for_the_same_seed(tmp_path):
    out = tmp_path / "cli.jsonl"
    subprocess.run([BINARY, "attack", "--indices", "0,1", "--target", "3", "--budget", "60",
                    "--seed", "4", "-q", "-o", str(out)], check=True, capture_output=True)
    cli = [json.loads(l) for l in out.read_text().splitlines()]
    images, labels = shipped_mnist(2)
    model = os.path.join(ROOT, "models", "mnist_cw.pt")
    records, adv = advbo.attack(model, images, labels, attack="bos2", budget=60, target=3, seed=4,
                                dataset="mnist")
    assert len(records) == len(cli) == 2
    for a, b in zip(cli, records):
        for k in TIMING | {"model"}:
            a.pop(k, None)
            b.pop(k, None)
        assert a == b
    assert adv.shape == (2, 1, 28, 28)


def test_8bit_queries_by_default_on_grid_images_float_fallback_with_a_warning():
    model = Brightness()
    clean = (np.round(grey_images([0.40, 0.35]) * 255) / np.float32(255)).astype(np.float32)
    records, adv = advbo.attack(model, clean, np.array([0, 0]), attack="square", eps=0.2,
                                budget=60, targeted=False, seed=2)
    assert all(r["pixels"] == "8bit" for r in records)
    scored = np.concatenate(model.batches[2 + 1:])  # after the probe and the selection
    assert np.abs(scored * 255 - np.round(scored * 255)).max() < 1e-3  # on the 1/255 grid
    assert np.abs(adv * 255 - np.round(adv * 255)).max() < 1e-3
    for r in records:
        assert r["quantized_success"] == r["success"]
    # Off-grid (float) images: float queries, and the user is told.
    with pytest.warns(UserWarning, match="off the 1/255 grid"):
        records, _ = advbo.attack(Brightness(), grey_images([0.4]), np.array([0]),
                                  attack="square", eps=0.2, budget=20, targeted=False)
    assert records[0]["pixels"] == "float"
    records, _ = advbo.attack(Brightness(), clean[:1], np.array([0]), attack="square", eps=0.2,
                              budget=20, targeted=False, pixels="float")
    assert records[0]["pixels"] == "float"
    with pytest.raises(ValueError, match="--pixels must be 8bit or float"):
        advbo.attack(Brightness(), clean[:1], np.array([0]), pixels="uint8", targeted=False)
