"""The advbo Python package (src/python/advbo/ over src/python/core_module.cc) with numpy
callables and model files, with Debian's python3 and pytest. The torch forms (nn.Module,
tensors) are in test_torch_api.py, the pip install in test_pip_install.py.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH pointing at the built package and
ADVBO_BINARY / ADVBO_SOURCE set."""
import gzip
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import advbo

ROOT = os.environ.get("ADVBO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("ADVBO_BINARY", os.path.join(ROOT, "build", "advbo"))
TIMING = {"seconds", "model_seconds", "wait_seconds", "bo_seconds", "bo_phase_seconds"}


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
    res = advbo.attack(model, clean, labels, attack="square", eps=eps, budget=budget,
                       targeted=False, seed=3)
    records = res.records
    assert len(records) == 3 and res.x_adv.shape == (3, 1, 8, 8) and res.x_adv.dtype == np.float32
    assert res.success.tolist() == [r["success"] for r in records] == [True] * 3
    assert res.queries.tolist() == [r["queries"] for r in records]
    for r in records:
        a = res.x_adv[r["image_index"]]
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
    records = advbo.attack(model, clean, np.array([0]), attack="bos2", eps=0.3, budget=40,
                           targeted=False, seed=1).records
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
    records = advbo.attack(Brightness(), grey_images([0.4]), np.array([0]), attack="square",
                           eps=0.2, budget=50, targeted=False).records
    assert len(records) == 1


def test_bad_callable_outputs_and_arguments_are_clear_errors():
    clean, labels = grey_images([0.4]), np.array([0])
    kw = {"eps": 0.1, "targeted": False}
    with pytest.raises(advbo.ModelError, match="scores"):
        advbo.attack(lambda x: np.zeros(len(x)), clean, labels, **kw)
    with pytest.raises(advbo.ModelError, match="non-finite"):
        advbo.attack(lambda x: np.full((len(x), 2), np.nan), clean, labels, **kw)
    with pytest.raises(ValueError, match=r"\[0, 1\].*0-255 pixels: pass x / 255"):
        advbo.attack(Brightness(), clean * 255, labels, **kw)
    with pytest.raises(ValueError, match=r"y must have one class per image: shape \(1,\)"):
        advbo.attack(Brightness(), clean, np.array([0, 1]), **kw)
    with pytest.raises(TypeError, match="unknown option"):
        advbo.attack(Brightness(), clean, labels, budjet=5, **kw)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        advbo.attack(42, clean, labels, **kw)
    with pytest.raises(advbo.ModelError, match="model file not found"):
        advbo.attack("/nonexistent/model.pt", clean, labels, **kw)
    # The core checks eps per norm, as on the CLI, and names the keyword.
    with pytest.raises(ValueError, match=r"^eps must be an L_inf radius in \(0, 1\] \(pixel units\), got -0.1"):
        advbo.attack(Brightness(), clean, labels, eps=-0.1, targeted=False)
    with pytest.raises(ValueError, match=r"^eps must be an L2 radius in \(0, 886.81\]"):
        advbo.attack(Brightness(), clean, labels, eps=1000.0, norm="l2", attack="square-l2",
                     targeted=False)
    with pytest.raises(ValueError, match=r"^defender_eps must be an L_inf radius"):
        advbo.attack(Brightness(), clean, labels, defender_eps=2.0, **kw)


def test_the_l2_radius_of_the_cli_default_is_accepted():
    """eps=2.0 under norm="l2" (the CLI's MNIST L2 default) was refused by a Python
    range check of its own; the core takes it, and every query stays in the L2 ball."""
    clean, labels = grey_images([0.4]), np.array([0])
    res = advbo.attack(Brightness(), clean, labels, attack="square-l2", norm="l2", eps=2.0,
                       budget=20, targeted=False)
    r = res.records[0]
    assert r["norm"] == "l2" and r["epsilon"] == 2.0
    assert r["l2"] <= 2.0 + 1e-5


def test_mistyped_options_name_the_option_and_the_value():
    """target="a" gave pybind11's "Unable to cast Python instance ..."."""
    clean, labels = grey_images([0.4]), np.array([0])
    cases = [({"target": "a"}, r"target must be integer class indices, got dtype <U1"),
             ({"target": True}, r"target must be a class index or one per image, got True"),
             ({"budget": 9.5}, r"budget must be an integer, got float 9.5"),
             ({"eps": "0.1"}, r"eps must be a number, got str '0.1'"),
             ({"http_timeout": "slow"}, r"http_timeout must be a number of seconds, got str"),
             ({"pixels": 8}, r"pixels must be a string, got int 8"),
             ({"dataset": 3}, r"dataset must be a string, got int 3"),
             ({"indices": [0]}, r"unknown option 'indices' \(select images by indexing x\)")]
    for kwargs, message in cases:
        with pytest.raises(TypeError, match=message):
            advbo.attack(Brightness(), clean, labels, **{"eps": 0.1, **kwargs})


def interrupted_after_one_second(**kwargs):
    """Seconds until KeyboardInterrupt stops a bos2 run (20 MNIST images x 9 targets at T = 900:
    minutes if not interrupted) on the shipped model file, SIGINT sent after 1 s."""
    import signal
    import threading
    import time

    x, y = shipped_mnist(20)
    model = os.path.join(ROOT, "models", "mnist_cw.pt")
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        advbo.attack(model, x, y, attack="bos2", eps=0.3, budget=900, seed=0, targeted=True,
                     **kwargs)
    elapsed = time.monotonic() - t0
    timer.join()
    return elapsed


def test_ctrl_c_stops_an_attack_on_a_model_file_promptly():
    """Ctrl-C during an attack on a model file waited for the whole attack (the
    attack runs without the GIL); now KeyboardInterrupt arrives within a fraction of a
    second, and the module works afterwards."""
    elapsed = interrupted_after_one_second()
    assert elapsed < 4.0, elapsed
    x, y = shipped_mnist(1)
    model = os.path.join(ROOT, "models", "mnist_cw.pt")
    res = advbo.attack(model, x, y, attack="square", eps=0.3, budget=20, targeted=False)
    assert len(res.records) == 1


def test_ctrl_c_stops_an_attack_in_lockstep_lanes_promptly():
    """with lockstep the attacks run in lane threads, which Python never lets see a
    signal; the main thread watches for it and the lanes stop at their next batch."""
    elapsed = interrupted_after_one_second(lockstep=4)
    assert elapsed < 4.0, elapsed


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
    # On MNIST-size inputs both score one call at a time by default (auto lockstep 1), and the
    # Python API runs one worker group; the CLI is told so explicitly, as the records carry it.
    subprocess.run([BINARY, "attack", "--indices", "0,1", "--target", "3", "--budget", "60",
                    "--seed", "4", "--lockstep", "1", "--workers", "1", "-q", "-o", str(out)],
                   check=True,
                   capture_output=True)
    cli = [json.loads(l) for l in out.read_text().splitlines()]
    images, labels = shipped_mnist(2)
    model = os.path.join(ROOT, "models", "mnist_cw.pt")
    res = advbo.attack(model, images, labels, attack="bos2", budget=60, target=3, seed=4,
                       dataset="mnist")
    records = res.records
    assert len(records) == len(cli) == 2
    for a, b in zip(cli, records):
        for k in TIMING | {"model"}:
            a.pop(k, None)
            b.pop(k, None)
        assert a == b
    assert res.x_adv.shape == (2, 1, 28, 28)
    assert res.success.tolist() == [r["success"] for r in cli]


def test_8bit_queries_by_default_on_grid_images_float_fallback_with_a_warning():
    model = Brightness()
    clean = (np.round(grey_images([0.40, 0.35]) * 255) / np.float32(255)).astype(np.float32)
    res = advbo.attack(model, clean, np.array([0, 0]), attack="square", eps=0.2, budget=60,
                       targeted=False, seed=2)
    records, adv = res.records, res.x_adv
    assert all(r["pixels"] == "8bit" for r in records)
    scored = np.concatenate(model.batches[2 + 1:])  # after the probe and the selection
    assert np.abs(scored * 255 - np.round(scored * 255)).max() < 1e-3  # on the 1/255 grid
    assert np.abs(adv * 255 - np.round(adv * 255)).max() < 1e-3
    for r in records:
        assert r["quantized_success"] == r["success"]
    # Off-grid (float) images: float queries, and the user is told.
    with pytest.warns(UserWarning, match="off the 1/255 grid") as caught:
        records = advbo.attack(Brightness(), grey_images([0.4]), np.array([0]),
                               attack="square", eps=0.2, budget=20, targeted=False).records
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert records[0]["pixels"] == "float"
    records = advbo.attack(Brightness(), clean[:1], np.array([0]), attack="square", eps=0.2,
                           budget=20, targeted=False, pixels="float").records
    assert records[0]["pixels"] == "float"
    with pytest.raises(ValueError, match="pixels must be '8bit' or 'float', got 'uint8'"):
        advbo.attack(Brightness(), clean[:1], np.array([0]), eps=0.2, pixels="uint8",
                     targeted=False)


def test_goals_give_x_adv_shaped_like_x_or_with_a_class_axis():
    """Untargeted (the default) / target=K / one target per image: x_adv [N, C, H, W];
    targeted=True (every other class, the CLI's default): [N, K, C, H, W] with the clean image
    at the true class."""
    model = Brightness()
    clean = (np.round(grey_images([0.40, 0.62, 0.30]) * 255) / 255).astype(np.float32)
    y = np.array([0, 1, 0])
    kw = {"attack": "square", "eps": 0.25, "budget": 200, "seed": 5}
    default = advbo.attack(model, clean, y, **kw)  # untargeted, like torchattacks / ART
    assert default.x_adv.shape == clean.shape and default.success.shape == (3,)
    assert all(r["target"] is None for r in default.records)
    res = advbo.attack(model, clean, y, targeted=True, **kw)  # every other class (= the other one)
    assert res.x_adv.shape == (3, 2, 1, 8, 8) and res.success.shape == (3, 2)
    assert res.attacked.tolist() == [[False, True], [True, False], [False, True]]
    for i in range(3):
        assert np.array_equal(res.x_adv[i, y[i]], clean[i])  # the true class: not attacked
        k = 1 - y[i]
        assert res.success[i, k] and model(res.x_adv[i, k][None])[0].argmax() == k
        assert res.queries[i, k] == next(r["queries"] for r in res.records
                                         if r["image_index"] == i)
    # One target per image: grouped runs, x_adv shaped like x.
    per = advbo.attack(model, clean, y, target=[1, 0, 1], **kw)
    assert per.x_adv.shape == clean.shape and per.success.all()
    assert [model(a[None])[0].argmax() for a in per.x_adv] == [1, 0, 1]
    assert sorted(r["image_index"] for r in per.records) == [0, 1, 2]
    with pytest.raises(ValueError, match=r"target\[1\] = 1 is image 1's true class"):
        advbo.attack(model, clean, y, target=[1, 1, 1], **kw)
    with pytest.raises(ValueError, match="target= is a targeted goal; drop targeted=False"):
        advbo.attack(model, clean, y, target=1, targeted=False, eps=0.2)
    # target=K: images of class K are not attacked (as on the CLI).
    one = advbo.attack(model, clean, y, target=1, **kw)
    assert one.x_adv.shape == clean.shape and one.attacked.tolist() == [True, False, True]
    assert np.array_equal(one.x_adv[1], clean[1]) and one.queries[1] == 0


def test_misclassified_images_are_returned_clean_and_y_none_takes_the_prediction():
    model = Brightness()
    clean = grey_images([0.40, 0.62])  # classes 0, 1
    res = advbo.attack(model, clean, [0, 0], attack="square", eps=0.2, budget=60,
                       targeted=False)  # image 1 is misclassified as labelled
    assert res.attacked.tolist() == [True, False] and res.queries[1] == 0
    assert not res.success[1] and np.array_equal(res.x_adv[1], clean[1])
    pred = advbo.attack(model, clean, None, attack="square", eps=0.2, budget=60, targeted=False)
    assert pred.attacked.tolist() == [True, True]
    assert [r["true_class"] for r in pred.records] == [0, 1]


def test_float64_input_gives_float64_output_inside_the_ball():
    clean = grey_images([0.4]).astype(np.float64)
    res = advbo.attack(Brightness(), clean, [0], attack="square", eps=0.2, budget=100,
                       targeted=False, pixels="float")
    assert res.x_adv.dtype == np.float64 and res.x_adv.shape == clean.shape
    assert np.abs(res.x_adv - clean).max() <= 0.2 + 1e-6


def test_wrong_image_layouts_scales_and_types_say_what_to_pass():
    clean = grey_images([0.4, 0.3], shape=(3, 8, 8))
    kw = {"eps": 0.1, "targeted": False, "budget": 10}
    f = Brightness()
    cases = [
        (np.transpose(clean, (0, 2, 3, 1)), ValueError, r"looks channels-last.*transpose\(0, 3, 1, 2\)"),
        ((clean * 255).astype(np.uint8), TypeError, r"uint8: 0-255 pixels\? pass .*/ 255"),
        (clean * 255, ValueError, r"values up to 1\d\d.*0-255 pixels: pass x / 255"),
        ((clean - 0.5) / 0.25, ValueError, r"from -\d.*normalised input"),
        (list(clean), TypeError, r"got list \(stack them"),
        (clean[0], ValueError, r"\[N, C, H, W\], got shape \(3, 8, 8\) \(one image.*x\[None\]"),
        (np.where(np.arange(clean.size).reshape(clean.shape) == 7, np.nan, clean), ValueError,
         r"1 NaN/inf pixel\(s\), the first at \(0, 0, 0, 7\)"),
        (clean.astype(np.complex64), TypeError, r"float pixels"),
    ]
    for x, error, message in cases:
        with pytest.raises(error, match=message):
            advbo.attack(f, x, [0, 0], **kw)
    assert f.batches == []  # nothing was queried
    with pytest.raises(TypeError, match="y must be integer class indices, got dtype float64"):
        advbo.attack(f, clean, np.array([0.0, 1.0]), **kw)
    with pytest.raises(ValueError, match="y must be class indices >= 0, got -2"):
        advbo.attack(f, clean, [0, -2], **kw)
    with pytest.raises(ValueError, match="eps is required"):
        advbo.attack(f, clean, [0, 0], targeted=False)
    with pytest.raises(ValueError, match="one attack per Attack"):
        advbo.attack(f, clean, [0, 0], attack="bos2,square", **kw)


def test_verbose_prints_a_line_per_instance_and_a_callback_sees_each_record(capsys):
    seen = []
    clean = grey_images([0.42, 0.40])
    atk = advbo.Attack("square", eps=0.2, budget=200, targeted=False, seed=1, verbose=True,
                       callback=lambda done, total, r: seen.append((done, total, r["image_index"])))
    res = atk(Brightness(), clean, [0, 0])
    assert seen == [(1, 2, 0), (2, 2, 1)]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[1].startswith("advbo square [2/2] image 1 untargeted: success")
    assert "eps=0.2" in repr(atk) and len(res.records) == 2

    def stop(done, total, r):
        raise RuntimeError("stop after the first")
    with pytest.raises(RuntimeError, match="stop after the first"):
        advbo.attack(Brightness(), clean, [0, 0], attack="square", eps=0.2, budget=50,
                     targeted=False, callback=stop)


def test_an_attack_object_is_reusable_and_seeded():
    atk = advbo.Attack("square", eps=0.2, budget=200, targeted=False, seed=9)
    clean = grey_images([0.42, 0.40])
    a, b = atk(Brightness(), clean, [0, 0]), atk(Brightness(), clean, [0, 0])
    assert np.array_equal(a.x_adv, b.x_adv) and a.queries.tolist() == b.queries.tolist()
    x_adv, success, queries, attacked, records = a  # unpacks
    assert success.all() and attacked.all() and len(records) == 2


def test_shipped_model_and_data_paths():
    path = advbo.shipped_model("mnist_cw")
    assert path.endswith("mnist_cw.pt") and os.path.isfile(path)
    with pytest.raises(ValueError, match="no shipped model 'resnet'.*mnist_cw"):
        advbo.shipped_model("resnet")
    x, y = advbo.load_images("cifar10", limit=2)
    with open(os.path.join(ROOT, "data", "cifar10", "test_batch_first2000.bin"), "rb") as f:
        raw = f.read(2 * 3073)
    assert x.shape == (2, 3, 32, 32) and y.tolist() == [raw[0], raw[3073]]
    assert np.abs(x[1, 0, 0, 0] - raw[3073 + 1] / 255) < 1e-6
    with pytest.raises(ValueError, match="limit must be an integer >= 0"):
        advbo.load_images("mnist", limit=-1)


def test_newcomer_mistakes_get_messages_that_say_what_to_do():
    """what a new user of the Python API ran into, each now a clear message."""
    clean, labels = grey_images([0.4]), np.array([0])
    kw = {"eps": 0.1, "budget": 10}
    # Normalised input ((x - 0.1307) / 0.3081) is not "0-255 pixels".
    with_black = clean.copy()
    with_black[..., 0, 0] = 0
    with pytest.raises(ValueError, match=r"normalised input .*normalize='MEAN:STD'"):
        advbo.attack(Brightness(), (with_black - 0.1307) / 0.3081, labels, **kw)
    with pytest.raises(ValueError, match=r"up to 1.001.*normalised input"):
        advbo.attack(Brightness(), (clean - 0.1307) / 0.3081, labels, **kw)
    # progress= (tqdm's habit) names what to use; a typo gets a did-you-mean and the full list.
    with pytest.raises(TypeError, match=r"unknown option 'progress' \(verbose=True"):
        advbo.attack(Brightness(), clean, labels, progress=True, **kw)
    with pytest.raises(TypeError, match=r"'budjet' \(did you mean 'budget'\?\); accepted: eps, "
                                        r"budget, targeted, target, seed, pixels, dataset, "
                                        r"verbose, callback, output"):
        advbo.attack(Brightness(), clean, labels, budjet=5, eps=0.1)
    with pytest.raises(ValueError, match="output must be 'auto', 'logits' or 'probs'"):
        advbo.attack(Brightness(), clean, labels, output="softmax", **kw)
    # output="probs" on a model with negative scores: refused at the probe.
    with pytest.raises(advbo.ModelError, match="given as probabilities"):
        advbo.attack(lambda x: np.stack([-x.mean((1, 2, 3)), x.mean((1, 2, 3))], 1), clean,
                     labels, output="probs", **kw)
    assert "five fields" in advbo.AttackResult.__doc__


def test_output_format_is_reported_and_zero_probabilities_warn():
    clean, labels = grey_images([0.4]), np.array([0])
    kw = {"eps": 0.1, "budget": 10, "attack": "square"}
    res = advbo.attack(Brightness(), clean, labels, **kw)
    assert res.model_output == "logits" and res.records[0]["model_output"] == "logits"

    def one_hot(x):  # probabilities with exact zeros
        b = (x.mean((1, 2, 3)) > 0.5).astype(np.float64)
        return np.stack([1 - b, b], 1)
    with pytest.warns(UserWarning, match="exact-zero probability"):
        res = advbo.attack(one_hot, clean, labels, **kw)
    assert res.model_output == "probabilities"

    def log_probs(x):
        z = Brightness()(x)
        return z - np.log(np.exp(z).sum(1, keepdims=True))
    assert advbo.attack(log_probs, clean, labels, **kw).model_output == "log_probabilities"


def test_every_passed_through_option_is_read_by_the_module():
    """the options Attack passes through come from the module's own list
    (_core.RUN_OPTIONS), and the module reads each one: a wrong-typed value is refused as
    that option's type or value error, never as an unknown option."""
    from advbo import _api, _core
    assert set(_api._OPTIONS) <= set(_core.RUN_OPTIONS)
    assert {"output", "defense", "setup_queries", "clean_images"} <= set(_api._OPTIONS)
    clean, labels = grey_images([0.4]), np.array([0])
    for name in _api._OPTIONS:
        with pytest.raises((TypeError, ValueError)) as info:
            advbo.attack(Brightness(), clean, labels, eps=0.1, **{name: object()})
        assert "unknown option" not in str(info.value), name
        assert name in str(info.value), (name, str(info.value))


def test_hard_label_and_l2_threat_models_through_the_python_api():
    # Hard-label: RayS against the brightness classifier sees labels only, may query outside
    # the ball, and records the closest adversarial query; a brightness shift of 0.1 flips
    # these images, inside the L_inf ball of 0.2.
    model = Brightness()
    clean = grey_images([0.42, 0.45])
    res = advbo.attack(model, clean, np.array([0, 0]), attack="rays", eps=0.2, budget=200,
                       targeted=False, seed=0, feedback="label", pixels="float")
    for r in res.records:
        assert r["feedback"] == "label" and r["norm"] == "linf" and r["success"]
        assert r["distance"] <= 0.2 and r["distance_trace"][-1][1] == r["distance"]
        assert np.abs(res.x_adv[r["image_index"]] - clean[r["image_index"]]).max() <= 0.2 + 1e-6
    # A failed instance (eps 0.02, a shift of at least 0.05 needed): x_adv is the clean image;
    # the record keeps the closest adversarial query (JSON lists), outside the ball, and its
    # distance; every record survives json.dumps.
    for attack in ("rays", "hsja", "bo-hl"):
        model = Brightness()
        res = advbo.attack(model, clean, np.array([0, 0]), attack=attack, eps=0.02, budget=150,
                           targeted=False, seed=0, feedback="label", pixels="float")
        assert not res.success.any(), attack
        np.testing.assert_array_equal(res.x_adv, clean)
        assert (model(res.x_adv).argmax(1) == 0).all()
        json.loads(json.dumps(res.records))
        for r in res.records:
            near = np.asarray(r["closest_adversarial"], dtype=np.float32)
            assert near.shape == (1, 8, 8)
            assert model(near[None]).argmax(1)[0] == 1  # adversarial
            dist = np.abs(near - clean[r["image_index"]]).max()
            assert r["distance"] > 0.02 and abs(dist - r["distance"]) < 1e-6
    # goal="min-distance": the attack spends its budget; success means the closest adversarial
    # query ended within eps, and x_adv is then that query, inside the ball.
    model = Brightness()
    res = advbo.attack(model, clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=150,
                       targeted=False, seed=0, feedback="label", pixels="float",
                       goal="min-distance")
    for r in res.records:
        assert r["goal"] == "min-distance" and r["queries_used"] == 150
        assert r["success"] == (r["distance"] <= 0.2) and set(r["distance_at"]) == {"100"}
        x = res.x_adv[r["image_index"]]
        assert np.abs(x - clean[r["image_index"]]).max() <= 0.2 + 1e-6
        assert (model(x[None]).argmax(1)[0] == 1) == r["success"]
    with pytest.raises(TypeError, match="bad_queries must be True or False"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     targeted=False, feedback="label", bad_queries=float("nan"))
    with pytest.raises(ValueError, match="min-distance"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     targeted=False, goal="min-distance")
    # start_images: only for targeted hard-label runs; a missing folder is named.
    with pytest.raises(ValueError, match="start.images is for targeted hard-label runs"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     targeted=False, feedback="label", start_images="/tmp")
    with pytest.raises(Exception, match="start.images: /nonexistent-advbo"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     target=1, feedback="label", start_images="/nonexistent-advbo")
    # A path-like folder is taken as model= takes one; an empty one is refused by name.
    with pytest.raises(Exception, match="start.images: /nonexistent-advbo"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     target=1, feedback="label", start_images=pathlib.Path("/nonexistent-advbo"))
    with pytest.raises(ValueError, match="start_images is an empty path"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     target=1, feedback="label", start_images="")
    # Targeted with no image of the target class among x: the error names start_images.
    with pytest.raises(ValueError, match="start_images"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="hsja", eps=0.2, budget=10,
                     target=1, feedback="label")
    # L2: SimBA-DCT's queries stay inside the L2 ball of 1.0.
    model = Brightness()
    res = advbo.attack(model, clean[:1], np.array([0]), attack="simba-dct", eps=1.0, budget=100,
                       targeted=False, seed=0, norm="l2", pixels="float")
    queries = np.concatenate(model.batches[2 + 1:])
    assert np.sqrt(((queries - clean[0]) ** 2).reshape(len(queries), -1).sum(1)).max() <= 1.0 + 1e-5
    assert res.records[0]["norm"] == "l2"
    with pytest.raises(ValueError, match="needs one of"):
        advbo.attack(Brightness(), clean, np.array([0, 0]), attack="square", eps=0.2, budget=10,
                     targeted=False, feedback="label")


def test_attacks_are_the_registrys():
    """advbo.ATTACKS is the C++ registry's list (attacks/registry.h), and every name in it is
    accepted as attack=."""
    assert len(advbo.ATTACKS) == len(set(advbo.ATTACKS)) == 24
    assert {"bos2", "square", "square-l2", "rays", "bo-hl", "ta", "gta", "cgba", "cgba-h"} <= set(
        advbo.ATTACKS)
    with pytest.raises(ValueError, match=r"unknown attack 'sqare' \(available: bos2, "):
        advbo.attack(Brightness(), grey_images([0.4]), np.array([0]), attack="sqare", eps=0.1)


def test_evaluate_equals_the_cli_run_and_its_verdicts(tmp_path):
    # advbo.evaluate and `advbo evaluate` run one library: the same options give the same
    # records and summary (timing aside), and the robust accuracy is the verdicts' own count.
    model = advbo.shipped_model("mnist_cw")
    common = dict(dataset="mnist", num_images=3, budget=60, reference="none", seed=1)
    r = advbo.evaluate(model, str(tmp_path / "py"), **common)
    subprocess.run([BINARY, "evaluate", "--dataset", "mnist", "-n", "3", "--budget", "60",
                    "--reference", "none", "--seed", "1", "--threads", "0", "-q", "-o",
                    str(tmp_path / "cli")], check=True, stdout=subprocess.DEVNULL)
    def records(folder):
        with open(folder / "records.jsonl") as f:
            return [{k: v for k, v in json.loads(line).items() if k not in TIMING} for line in f]
    assert records(tmp_path / "py") == records(tmp_path / "cli")
    with open(tmp_path / "cli" / "summary.json") as f:
        cli = json.load(f)
    assert r.robust_accuracy == cli["robust_accuracy"]
    with open(tmp_path / "py" / "images.jsonl") as f:
        verdicts = [json.loads(line) for line in f]
    assert len(verdicts) == 3
    assert r.robust_accuracy == sum(v["robust"] for v in verdicts) / 3
    assert r.upper_bound and any("budget below" in why for why in r.summary["upper_bound_reasons"])
    assert r.summary["budget"] == 60 and r.summary["budget_unit"] == "model queries per image"
    assert r.status == 0 and "robust accuracy" in r.table and r.reference_robust_accuracy is None


def test_evaluate_refuses_bad_arguments_by_name(tmp_path):
    model = advbo.shipped_model("mnist_cw")
    with pytest.raises(TypeError, match="unknown option"):
        advbo.evaluate(model, str(tmp_path / "a"), targets=3)
    with pytest.raises(ValueError, match="eps"):
        advbo.evaluate(model, str(tmp_path / "b"), eps=2.0)
    with pytest.raises(TypeError, match="TorchScript file"):
        advbo.evaluate(lambda x: x, str(tmp_path / "c"))
    assert not (tmp_path / "b").exists()  # bad input writes nothing
