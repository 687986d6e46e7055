"""The Python API of advbo: input checks and conversions around advbo._core.run.

advbo._core (C++, src/python/core_module.cc) runs the attacks through the same experiment
runner and query oracle as the ``advbo attack`` CLI; this layer takes what a torch user has
(nn.Modules, tensors on any device, label lists), refuses what would silently go wrong
(channels-last images, 0-255 pixels, normalised pixels, integer images) with a message
saying what to do, and gives back x_adv shaped like x.
"""
import difflib
import itertools
import math
import numbers
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, List, NamedTuple, Optional

import numpy as np

from . import _core

# data/ and models/ of the repository, copied into the package by setup.py (pip install);
# absent in the build tree (build/python/advbo), where the C++ side finds the repository.
_SHIPPED = Path(__file__).resolve().parent / "shipped"

_DATASETS = ("mnist", "cifar10")

# Attack's keyword arguments: its own, then the options passed through to advbo._core.run
# (the module's own list, less what Attack names itself or replaces, see _INSTEAD).
_NAMED = ("eps", "budget", "targeted", "target", "seed", "pixels", "dataset", "verbose",
          "callback")
# Options users bring from other tools, with what advbo offers instead.
_INSTEAD = {
    "indices": "select images by indexing x",
    "attack": "the attack is Attack's first argument / advbo.attack(..., attack=...)",
    "labels": "labels are y, the third argument",
    "images": "images are x, the second argument",
    "progress": "verbose=True prints one line per finished instance; callback=f(done, total, "
                "record) receives each",
}


_OPTIONS = tuple(k for k in _core.RUN_OPTIONS if k not in _NAMED and k not in _INSTEAD)


def _check_option_names(options):
    """TypeError for an option advbo does not take: what to use instead, or the closest
    accepted name and every accepted one."""
    for key in options:
        if key in _OPTIONS:
            continue
        if key in _INSTEAD:
            raise TypeError(f"unknown option {key!r} ({_INSTEAD[key]})")
        close = difflib.get_close_matches(key, _NAMED + _OPTIONS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TypeError(f"unknown option {key!r}{hint}; accepted: {', '.join(_NAMED + _OPTIONS)}")


def _root() -> Path:
    return _SHIPPED if _SHIPPED.is_dir() else Path(_core.repo_root())


def shipped_model(name: str = "mnist_cw") -> str:
    """Path of a shipped TorchScript model: mnist_cw, cifar10_cw, mnist_cw_plain,
    cifar10_cw_plain, mnist_carlini (see the model cards in models/). Each takes float32
    [N, C, H, W] in [0, 1] and returns logits [N, 10]. Raises ValueError for another name."""
    if not isinstance(name, str):
        raise TypeError(f"shipped_model: name must be a string, got {type(name).__name__}")
    path = _root() / "models" / (name[:-3] if name.endswith(".pt") else name)
    path = path.with_suffix(".pt")
    if not path.is_file():
        known = sorted(p.stem for p in (_root() / "models").glob("*.pt"))
        raise ValueError(f"shipped_model: no shipped model {name!r} (shipped: {', '.join(known)})")
    return str(path)


def load_images(dataset: str = "mnist", data: str = "", format: str = "auto",
                limit: Optional[int] = None):
    """Images and labels as the ``advbo`` CLI reads them.

    dataset: "mnist" | "cifar10" -- the shipped sample (MNIST test set, first 2,000 CIFAR-10
        test images), when ``data`` is empty.
    data: your own data instead: an MNIST IDX images file (labels file beside it), a CIFAR-10
        .bin batch, an image file or a folder of images (class subfolders as torchvision's
        ImageFolder: ``0/``, ``1/``, ... or class names, sorted); ``format`` auto | mnist |
        cifar10 | images.
    limit: keep the first ``limit`` images (>= 0).

    Returns (images, labels): numpy float32 [N, C, H, W] in [0, 1] and int64 [N], -1 where
    the data carry no label. Raises advbo.DataError naming the file, ValueError for a bad
    argument.
    """
    if not isinstance(dataset, str) or dataset not in _DATASETS:
        raise ValueError(f"load_images: dataset must be 'mnist' or 'cifar10', got {dataset!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral)
                              or limit < 0):
        raise ValueError(f"load_images: limit must be an integer >= 0, got {limit!r}")
    data = os.fspath(data)
    if not data and _SHIPPED.is_dir():
        data = str(_SHIPPED / "data" / ("mnist/t10k-images-idx3-ubyte.gz" if dataset == "mnist"
                                        else "cifar10/test_batch_first2000.bin"))
    return _core.load_images(dataset=dataset, data=data, format=format, limit=limit)


class AttackResult(NamedTuple):
    """What an attack returns (unpacks into its five fields: ``x_adv, success, queries,
    attacked, records``).

    x_adv: the adversarial images, same type (numpy / torch), dtype and device as x, pixels in
        [0, 1] inside the eps-ball; shape of x [N, C, H, W] with one goal per image
        (untargeted, the default, or target=K / target=[t_0, ..]), [N, K, C, H, W] with
        targeted=True, every other class (the BOS^2 thesis' protocol and the CLI's default;
        x_adv[i, k]: the image aimed at class k). Where a score-based attack failed, the query
        it ended on (closest to the goal, inside the ball); where a hard-label attack failed,
        the clean image (its queries may lie outside the ball); where nothing was attacked
        (the true class, a misclassified image), the clean image. So
        ``model(x_adv).argmax(1) != y`` also counts the images the model misclassified before
        any attack (``attacked`` False); ``success`` counts the attack's successes alone.
    success: bool [N] (or [N, K]): the image in x_adv meets the goal; index with it
        (``x_adv[result.success]``: the adversarial images). With 8-bit queries (the
        default) x_adv is on the 1/255 grid, so it stays a success once saved as PNG.
    queries: int64 [N] (or [N, K]): the queries the attack needed (0 where not attacked).
    attacked: bool [N] (or [N, K]): an attack ran (False: misclassified image, or k the true
        class).
    records: one dict per attacked instance with the CLI's record fields (image_index,
        target, success, queries, linf, adversarial_class, model_output, seed, ...). Hard-label
        attacks' records also hold ``distance`` (of the closest adversarial query, in the
        ball's norm; None before one) and ``closest_adversarial`` (that query as nested lists
        [C][H][W] -- ``np.asarray(r["closest_adversarial"], np.float32)`` -- possibly outside
        the ball; None before one). Every record is JSON-serialisable (``json.dumps``).

    Not a field (so unpacking stays five): ``model_output``, the model's output format as
    detected or given ("logits", "log_probabilities" or "probabilities"; None when nothing
    was attacked).
    """
    x_adv: Any
    success: Any
    queries: Any
    attacked: Any
    records: List[dict]

    @property
    def model_output(self) -> Optional[str]:
        return self.records[0].get("model_output") if self.records else None


def _torch():
    """torch if the caller has imported it (advbo never imports torch itself)."""
    return sys.modules.get("torch")


def _is_tensor(v) -> bool:
    torch = _torch()
    return torch is not None and isinstance(v, torch.Tensor)


def _check_images(x):
    """x as numpy float32 [N, C, H, W] in [0, 1] (a copy when converted); errors name the
    problem and the fix."""
    if _is_tensor(x):
        if x.is_complex() or not x.is_floating_point():
            _integer_pixels(str(x.dtype).replace("torch.", ""), x.dtype == _torch().uint8)
        arr = x.detach().to("cpu").float().numpy()
    elif isinstance(x, np.ndarray):
        if x.dtype.kind != "f":
            if x.dtype.kind in "biu":
                _integer_pixels(str(x.dtype), x.dtype == np.uint8)
            raise TypeError(f"x must hold float pixels in [0, 1], got dtype {x.dtype}")
        arr = np.ascontiguousarray(x, dtype=np.float32)
    else:
        hint = " (stack them: np.stack(x) or torch.stack(x))" if isinstance(x, (list, tuple)) else ""
        raise TypeError(f"x must be a numpy array or a torch tensor [N, C, H, W] with pixels in "
                        f"[0, 1], got {type(x).__name__}{hint}")
    if arr.ndim != 4:
        one = " (one image [C, H, W]: pass x[None])" if arr.ndim == 3 else ""
        raise ValueError(f"x must be a batch of images [N, C, H, W], got shape {tuple(arr.shape)}{one}")
    n, c, h, w = arr.shape
    if c not in (1, 3, 4) and w in (1, 3, 4):
        raise ValueError(
            f"x has shape {tuple(arr.shape)}, which looks channels-last [N, H, W, C]; advbo takes "
            f"[N, C, H, W]: use x.permute(0, 3, 1, 2) (torch) or x.transpose(0, 3, 1, 2) (numpy)")
    if n == 0 or c == 0 or h == 0 or w == 0:
        raise ValueError(f"x must hold at least one image, got shape {tuple(arr.shape)}")
    finite = np.isfinite(arr)
    if not finite.all():
        bad = np.argwhere(~finite)[0]
        raise ValueError(f"x holds {int((~finite).sum())} NaN/inf pixel(s), the first at "
                         f"{tuple(int(v) for v in bad)}")
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0:  # normalised pixels ((x - mean) / std) go negative; 0-255 pixels never do
        raise ValueError(
            f"x must hold pixels in [0, 1], got values from {lo:g} to {hi:g}; normalised input "
            f"((x - mean) / std)? Pass the raw pixels in [0, 1] and give the normalisation "
            f"as normalize='MEAN:STD' (e.g. normalize='0.1307:0.3081' for MNIST), or put it in "
            f"the model")
    if hi > 1:
        if 2 < hi <= 255:
            hint = "; they look like 0-255 pixels: pass x / 255"
        elif hi <= 2:
            hint = ("; normalised input ((x - mean) / std)? Give the normalisation as "
                    "normalize='MEAN:STD'; pixels only slightly off: x.clip(0, 1)")
        else:
            hint = ""
        raise ValueError(f"x must hold pixels in [0, 1], got values up to {hi:g}{hint}")
    return arr


def _integer_pixels(dtype: str, is_uint8: bool):
    hint = (": 0-255 pixels? pass x.float() / 255 (torch) or x.astype(np.float32) / 255"
            if is_uint8 else "")
    raise TypeError(f"x must hold float pixels in [0, 1], got dtype {dtype}{hint}")


def _check_classes(v, n: int, what: str, allow_none: bool) -> Optional[np.ndarray]:
    """Labels or targets as int64 [n] (None stays None when allowed)."""
    if v is None:
        if allow_none:
            return None
        raise ValueError(f"{what} is required")
    if isinstance(v, bool) or isinstance(v, float):
        raise TypeError(f"{what} must be integer class indices, got {type(v).__name__} {v!r}")
    if _is_tensor(v):
        v = v.detach().to("cpu").numpy()
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integer class indices, got dtype {arr.dtype}")
    if arr.ndim == 0:
        arr = np.full(n, int(arr), dtype=np.int64)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"{what} must have one class per image: shape ({n},), got {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"{what} must be class indices >= 0, got {int(arr.min())} at index "
                         f"{int(np.argmin(arr))}")
    return arr.astype(np.int64)


class _ModuleScorer:
    """An nn.Module as advbo's score function: numpy float32 [N, C, H, W] -> numpy float64
    [N, classes], run on the module's own device and dtype under torch.no_grad()."""

    def __init__(self, module):
        torch = _torch()
        self.module = module
        first = next(itertools.chain(module.parameters(), module.buffers()), None)
        self.device = first.device if first is not None else torch.device("cpu")
        if self.device.type == "meta":
            raise ValueError(
                f"the model ({type(module).__name__}) is on the meta device: its weights were "
                f"never materialised, so it cannot score images; load them first (e.g. "
                f"module.to_empty(device='cpu') then module.load_state_dict(...))")
        self.dtype = (first.dtype if first is not None and first.is_floating_point()
                      else torch.float32)
        self.__qualname__ = type(module).__name__  # records name the model "python:<class>"

    def __call__(self, x):
        torch = _torch()
        with torch.no_grad():
            out = self.module(torch.from_numpy(x).to(self.device, self.dtype))
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"the model returned {type(out).__name__}; advbo needs a tensor of "
                            f"scores [N, classes] (logits or probabilities)")
        return out.detach().to("cpu", torch.float64).numpy()


class _CallableScorer:
    """Any callable as advbo's score function. It receives what x was: a torch tensor on x's
    device (float32) when x was a tensor, else a numpy float32 array; its output may be a
    tensor or anything numpy.asarray takes."""

    def __init__(self, f, device):
        self.f, self.device = f, device
        self.__qualname__ = getattr(f, "__qualname__", type(f).__name__)

    def __call__(self, x):
        torch = _torch()
        if self.device is not None:
            x = torch.from_numpy(x).to(self.device)
        out = self.f(x)
        if _is_tensor(out):
            out = out.detach().to("cpu", _torch().float64).numpy()
        return out


def _scorer(model, x):
    """What advbo._core.run takes for `model`: a path / URL string or a numpy callable."""
    torch = _torch()
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if torch is not None and isinstance(model, torch.nn.Module):
        return _ModuleScorer(model)
    if callable(model):
        return _CallableScorer(model, x.device if _is_tensor(x) else None)
    raise TypeError(f"model must be a torch.nn.Module, a TorchScript file path, a served "
                    f"model's URL (http://HOST:PORT/predict) or a callable returning scores "
                    f"[N, classes], got {type(model).__name__}")


def _number(name, v, lo, hi, integer=False, lo_open=False):
    """v checked to be an int (integer) or a real number in [lo, hi] ((lo, hi] if lo_open)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral if integer else numbers.Real):
        raise TypeError(f"{name} must be {'an integer' if integer else 'a number'}, got "
                        f"{type(v).__name__} {v!r}")
    bad_float = not integer and not math.isfinite(float(v))
    if bad_float or (v <= lo if lo_open else v < lo) or v > hi:
        raise ValueError(f"{name} must be in {'(' if lo_open else '['}{lo:g}, {hi:g}], got {v!r}")
    return int(v) if integer else float(v)


def _caller_level() -> int:
    """warnings.warn stacklevel of the first frame outside this package (the user's call)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    return level


def _progress_printer(name: str):
    """verbose=True: one line per finished instance on stderr."""
    state = {"succeeded": 0}

    def show(done, total, r):
        state["succeeded"] += bool(r["success"])
        goal = "untargeted" if r["target"] is None else f"-> class {r['target']}"
        print(f"advbo {name} [{done:>{len(str(total))}}/{total}] image {r['image_index']} {goal}: "
              f"{'success' if r['success'] else 'failed'} after {r['queries']} queries "
              f"(ASR so far {state['succeeded']}/{done})", file=sys.stderr, flush=True)
    return show


class Attack:
    """One black-box attack with its threat model, budget and goal; call it on a model and
    images: ``Attack("bos2", eps=8/255)(model, x, y) -> AttackResult``.

    name: attack spec as on the CLI: any name of advbo.ATTACKS ("bos2", the default, "square",
        "square-l2", "rays", ...), with settings "bos2:kernel=matern52,refine=0".
    eps: the ball's radius in pixel units: L_inf in (0, 1] (e.g. 8/255 for CIFAR-10, 0.3 for
        MNIST); with norm="l2" an L2 radius in (0, 886.81] (e.g. 2 for MNIST). Required, as with
        the CLI's --data, unless dataset= picks a shipped dataset's standard radius (L_inf:
        mnist 0.3, cifar10 8/255; L2: 2 and 0.5; the CLI's defaults). The range is checked by
        the core, as on the CLI.
    budget: model queries per instance, [1, 1e8] (default 900, the BOS^2 thesis' T; the one
        table of defaults is the core's, advbo._core.DEFAULT_BUDGET_ATTACK). Every image the
        model scores counts; never more than the budget.
    targeted / target: the goal. Default: untargeted (argmax != y; x_adv shaped like x, as
        torchattacks and ART return it). target=K: class K for every image; target=[t_0, ...]
        (one per image): per image. targeted=True without target: every other class, the
        BOS^2 thesis' protocol and the CLI's default (x_adv then has a class axis [N, K, ...]).
    seed: run seed (>= 0); the same seed gives the same records as ``advbo attack``.
    pixels: "8bit" (default; every query on the 1/255 grid, so successes survive saving as
        PNG) or "float" (the papers' setting).
    dataset: None, or "mnist" / "cifar10": that dataset's paper defaults (eps, the attacks'
        settings); records then equal the CLI's on the shipped data.
    verbose: print one line per finished instance to stderr.
    callback: f(done, total, record) after every finished instance (raise to stop).
    options: output ("auto" | "logits" | "probs"), normalize ("MEAN:STD"), defense
        ("jpeg:quality=75", "r2b2:jpeg+noise", ...), defender_eps, threads, http_timeout,
        http_retries, rescale_compat -- the CLI's options of the same names; setup_queries
        (default True; False = the CLI's --no-setup-queries: the model scores only the
        attack's counted queries, output must be given); norm ("linf" | "l2": the ball, eps
        then an L2 radius) and feedback ("scores" | "label": only the top-1 class, for the
        hard-label attacks "rays", "hsja", "sign-opt", "geoda", "ta", "gta", "cgba", "cgba-h",
        "bo-hl"); goal ("success" | "min-distance":
        a hard-label attack spends its whole budget shrinking its closest adversarial query;
        records carry distance_at {"100": d, "250": d, ...}); bad_queries (default True: records
        carry bad_queries, the queries a Blacklight detector beside the model would flag);
        start_images (a folder with one sub-folder per class, 0/, 1/, ...: targeted
        hard-label attacks start from the first image of the target's class there that the
        model classifies so; records carry start_image_index and start_images);
        lockstep (the CLI's
        --lockstep: 0 = auto, B = B instances at once, their queries sent to the model --
        a callable or nn.Module too -- as one batch per round; 1 = one call per query).

    Raises TypeError / ValueError for bad arguments (naming them), advbo.ModelError when the
    model fails, and the model's or callback's own exception when it raises.
    """

    def __init__(self, name: str = "bos2", *, eps: Optional[float] = None,
                 budget: int = _core.DEFAULT_BUDGET_ATTACK,
                 targeted: Optional[bool] = None, target=None, seed: int = 0,
                 pixels: str = "8bit",
                 dataset: Optional[str] = None, verbose: bool = False,
                 callback: Optional[Callable] = None, **options):
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"name must be an attack spec string such as 'bos2', got {name!r}")
        if "," in name.split(":")[0] or ("," in name and ":" not in name):
            raise ValueError(f"one attack per Attack, got {name!r} (compare attacks with one "
                             f"Attack each and the same seed, or with `advbo bench`)")
        for key, v in (("pixels", pixels), ("dataset", dataset)):
            if v is not None and not isinstance(v, str):
                raise TypeError(f"{key} must be a string, got {type(v).__name__} {v!r}")
        if dataset is not None and dataset not in _DATASETS:
            raise ValueError(f"dataset must be None, 'mnist' or 'cifar10', got {dataset!r}")
        if eps is None and dataset is None:
            raise ValueError("eps is required: the ball's radius in pixel units (L_inf in (0, 1], "
                             "e.g. 8/255 for CIFAR-10, 0.3 for MNIST; norm='l2': an L2 radius); "
                             "dataset='mnist'|'cifar10' uses that dataset's standard radius")
        self.name = name
        # A number here; its range (per norm) is the core's check, as on the CLI.
        if eps is not None and (isinstance(eps, bool) or not isinstance(eps, numbers.Real)):
            raise TypeError(f"eps must be a number, got {type(eps).__name__} {eps!r}")
        self.eps = None if eps is None else float(eps)
        self.budget = _number("budget", budget, 1, _core.kMaxBudget, integer=True)
        if targeted is not None and not isinstance(targeted, bool):
            raise TypeError(f"targeted must be True, False or None, got {targeted!r}")
        if target is not None and targeted is False:
            raise ValueError("target= is a targeted goal; drop targeted=False")
        if isinstance(target, bool) or isinstance(target, float):
            raise TypeError(f"target must be a class index or one per image, got {target!r}")
        if isinstance(target, numbers.Integral) and target < 0:
            raise ValueError(f"target must be a class index >= 0, got {target}")
        # None: untargeted unless a target is given.
        self.targeted, self.target = bool(targeted) or target is not None, target
        self.seed = _number("seed", seed, 0, 2.0 ** 64 - 1, integer=True)
        if pixels not in ("8bit", "float"):
            raise ValueError(f"pixels must be '8bit' or 'float', got {pixels!r}")
        self.pixels, self.dataset = pixels, dataset
        if not isinstance(verbose, bool):
            raise TypeError(f"verbose must be True or False, got {verbose!r}")
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable f(done, total, record), got "
                            f"{type(callback).__name__}")
        _check_option_names(options)
        if "start_images" in options:
            # A folder, as model= takes one: a str or a path-like object (pathlib.Path).
            folder = options["start_images"]
            if not isinstance(folder, (str, os.PathLike)):
                raise TypeError(f"start_images must be a folder path (str or pathlib.Path), got "
                                f"{type(folder).__name__} {folder!r}")
            options = dict(options, start_images=os.fspath(folder))
            if not options["start_images"]:
                raise ValueError("start_images is an empty path: give the folder of start "
                                 "images (one sub-folder per class: 0/, 1/, ...)")
        output = options.get("output", "auto")
        if not isinstance(output, str) or output not in ("auto", "logits", "probs",
                                                         "probabilities"):
            raise ValueError(f"output must be 'auto', 'logits' or 'probs', got {output!r}")
        self.verbose, self.callback, self.options = verbose, callback, options

    def __repr__(self):
        return (f"advbo.Attack({self.name!r}, eps={self.eps}, budget={self.budget}, "
                f"targeted={self.targeted}, target={self.target!r}, seed={self.seed}, "
                f"pixels={self.pixels!r})")

    def __call__(self, model, x, y=None) -> AttackResult:
        """Attacks images x of `model`; see the class docstring and advbo.attack.

        model: torch.nn.Module (run in Python on its own device and dtype, in eval mode
            for the attack, under torch.no_grad), TorchScript file path, served model URL, or
            callable f(x) -> scores [N, classes] (x: a tensor on x's device when x is a tensor,
            else numpy float32).
        x: numpy array or torch tensor [N, C, H, W], float pixels in [0, 1].
        y: true classes, int [N] (list, numpy or tensor); None: the model's predictions.
        """
        images = _check_images(x)
        n = images.shape[0]
        labels = _check_classes(y, n, "y", allow_none=True)
        targets = None  # one target per image (target=[...])
        if self.target is not None and not isinstance(self.target, numbers.Integral):
            targets = _check_classes(self.target, n, "target", allow_none=False)
        if targets is not None and labels is not None and (targets == labels).any():
            i = int(np.argmax(targets == labels))
            raise ValueError(f"target[{i}] = {int(targets[i])} is image {i}'s true class")
        scorer = _scorer(model, x)
        module = scorer.module if isinstance(scorer, _ModuleScorer) else None
        was_training = module is not None and module.training
        if was_training:
            module.eval()
        try:
            runs = self._run(scorer, images, labels, targets)
        finally:
            if was_training:
                module.train()
        return self._assemble(x, images, runs)

    def _run(self, scorer, images, labels, targets):
        """_core.run once, or once per distinct target (target=[...]); [(output, target)]."""
        lab = labels if labels is not None else np.full(len(images), -1, dtype=np.int64)
        hooks = ([_progress_printer(self.name)] if self.verbose else []) + \
            ([self.callback] if self.callback is not None else [])
        groups = [(None, None)] if targets is None else \
            [(int(t), np.flatnonzero(targets == t).tolist()) for t in np.unique(targets)]
        runs, base = [], 0
        for t, idx in groups:
            opts = dict(self.options)
            if self.dataset is not None:
                opts["dataset"] = self.dataset
            if self.target is not None:
                opts["target"] = t if t is not None else int(self.target)
            if idx is not None:
                opts["indices"] = idx
            progress = None
            if hooks:  # done / total count over all groups run so far
                def progress(done, total, record, base=base):
                    for h in hooks:
                        h(base + done, base + total, record)
            out = _core.run(scorer, images, lab, attack=self.name, eps=self.eps,
                            budget=self.budget, targeted=self.targeted, seed=self.seed,
                            progress=progress, pixels=self.pixels, **opts)
            base += len(out["records"])
            if out["pixels_note"]:
                warnings.warn(out["pixels_note"], UserWarning, stacklevel=_caller_level())
            if out["zero_probability_rows"]:
                warnings.warn(
                    f"{out['zero_probability_rows']} of the model's answers held an exact-zero "
                    f"probability: its log is clipped at log(1e-300), so the attack's loss "
                    f"saturates there; a model that returns logits avoids this", UserWarning,
                    stacklevel=_caller_level())
            runs.append(out)
        return runs

    def _assemble(self, x, images, runs) -> AttackResult:
        n = images.shape[0]
        all_targets = self.targeted and self.target is None
        records = [r for out in runs for r in out["records"]]
        if all_targets:
            k = runs[0]["num_classes"]
            adv = np.repeat(images[:, None], k, axis=1)
            shape = (n, k)
        else:
            adv = images.copy()
            shape = (n,)
        success = np.zeros(shape, dtype=bool)
        queries = np.zeros(shape, dtype=np.int64)
        attacked = np.zeros(shape, dtype=bool)
        for out in runs:
            for r, a, near in zip(out["records"], out["adversarial"], out["closest_adversarial"]):
                if r.get("feedback") == "label":
                    # Nested lists [C][H][W] (records stay JSON-serialisable; np.asarray(...)
                    # gives the float32 array back) or None before an adversarial query.
                    r["closest_adversarial"] = None if near is None else near.tolist()
                at = (r["image_index"], r["target"]) if all_targets else r["image_index"]
                adv[at] = a
                success[at] = r["success"]
                queries[at] = r["queries"]
                attacked[at] = True
        if _is_tensor(x):
            torch = _torch()
            conv = lambda a: torch.from_numpy(a).to(x.device)  # noqa: E731
            return AttackResult(conv(adv).to(x.dtype), conv(success), conv(queries),
                                conv(attacked), records)
        return AttackResult(adv.astype(x.dtype, copy=False), success, queries, attacked, records)


def attack(model, x, y=None, attack: str = "bos2", **kwargs) -> AttackResult:
    """Attacks images x of `model` with one black-box attack; ``Attack(attack, **kwargs)(model,
    x, y)``.

        result = advbo.attack(net, x, y, eps=8/255, budget=900, targeted=False, seed=0)
        x_adv, success, queries, attacked, records = result

    model: torch.nn.Module (run in Python on its own device, so a GPU works), TorchScript
        file path, served model URL (http://HOST:PORT/predict) or any callable returning
        scores [N, classes] (logits or probabilities).
    x: numpy array or torch tensor [N, C, H, W], float pixels in [0, 1] (not 0-255, not
        normalised, not channels-last: each is an error saying what to pass).
    y: true classes [N] (list, numpy or tensor); None: the model's predictions.
    attack: "bos2" (default), "square", "parsimonious", "bayesopt", "genattack", "zoo",
        "autozoom", "random", with settings "bos2:refine=0".
    kwargs: eps (required unless dataset= is given), budget=900, targeted=None, target=None,
        seed=0, pixels="8bit", dataset=None, verbose=False, callback=None and the CLI's
        output, normalize, defense, defender_eps, threads, http_timeout, http_retries,
        rescale_compat; see advbo.Attack.

    Goal: by default untargeted, so x_adv is shaped like x [N, C, H, W], as in torchattacks
    and ART; target=K / target=[..] keep that shape. targeted=True (the BOS^2 thesis'
    protocol, the CLI's default) attacks every other class: x_adv is [N, K, C, H, W]
    (x_adv[i, k] aims at class k). Images the model already misclassifies are not attacked (attacked[i] False, x_adv
    the clean image), as in the CLI. Returns an AttackResult (x_adv, success, queries,
    attacked, records) whose arrays are numpy or torch like x, on x's device.
    """
    return Attack(attack, **kwargs)(model, x, y)


class EvaluationResult(NamedTuple):
    """What advbo.evaluate returns.

    robust_accuracy: the black-box ensemble's worst-case robust accuracy, a fraction in [0, 1]
        over all images looked at (clean errors and images not evaluated count as not robust);
        None with reference_only=True.
    reference_robust_accuracy: the white-box reference's (APGD-CE + APGD-T, and FAB-T with
        reference="standard"), or None where it does not apply.
    upper_bound: whether the number is only an upper bound (no working adaptive attack
        challenged the defense, or the budget is below the default 10,000 per image); the
        reasons are summary["upper_bound_reasons"].
    summary: summary.json's content (every field of docs/guide/evaluate.md).
    table: the table advbo evaluate prints.
    out: the output folder (records.jsonl, reference.jsonl, images.jsonl, summary.json,
        table.txt, curves.csv).
    status: 0, or 3 when images were not evaluated (run the same call again to resume).
    notes: the run's banner and notes.
    """
    robust_accuracy: Optional[float]
    reference_robust_accuracy: Optional[float]
    upper_bound: bool
    summary: dict
    table: str
    out: str
    status: int
    notes: list


def evaluate(model, out, *, dataset: str = "mnist", eps: Optional[float] = None,
             budget: int = _core.DEFAULT_BUDGET_EVALUATE, **options) -> EvaluationResult:
    """Worst-case robust accuracy of a (defended) model over an ensemble of black-box attacks,
    AutoAttack's protocol (Croce & Hein 2020) with a per-image query budget -- what
    ``advbo evaluate`` runs, on the same library (the counterpart of AutoAttack's
    ``run_standard_evaluation``)::

        r = advbo.evaluate(advbo.shipped_model("cifar10_cw"), "eval_out", dataset="cifar10",
                           num_images=100)
        r.robust_accuracy, r.reference_robust_accuracy, r.upper_bound

    model: a TorchScript file (path) or a served model's URL (http://HOST:PORT/predict); an
        nn.Module: save it with torch.jit.save(torch.jit.script(net), "net.pt") first (the
        white-box reference differentiates the file).
    out: the output folder; a folder of an interrupted run with the same settings resumes.
    dataset: "mnist" | "cifar10", the shipped test sample (or data="path": your own, as the
        CLI's --data); indices=[...] or num_images=N (default 10) picks the images.
    eps: the radius in pixel units (default the dataset's standard: L_inf 0.3 MNIST, 8/255
        CIFAR-10; norm="l2": 2 and 0.5).
    budget: model queries per image over the whole ensemble (default 10,000; below it the
        result is marked an upper bound).
    options: norm, feedback, pixels, seed, defense ("jpeg:quality=75", "noise:sigma=0.02", ...;
        every member is then wrapped by the defense's adaptive attack unless adaptive=False),
        ensemble ("square,parsimonious"), split ("1,2"),
        reference ("auto" | "apgd" | "standard" | "none"), reference_only, reference_steps,
        reference_restarts, reference_targets, verify_draws, threads, normalize, output,
        save_images, shard ([k, n]) -- advbo evaluate's flags.

    Raises TypeError / ValueError for bad arguments (naming them), advbo.ModelError /
    advbo.DataError naming the file.
    """
    if hasattr(model, "__fspath__"):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError("model must be a TorchScript file path or a served model's URL, got "
                        f"{type(model).__name__} (save an nn.Module with torch.jit.save first)")
    if hasattr(out, "__fspath__"):
        out = os.fspath(out)
    if not isinstance(out, str) or not out:
        raise TypeError(f"out must be a folder path, got {out!r}")
    unknown = sorted(set(options) - set(_core.EVALUATE_OPTIONS))
    if unknown:
        raise TypeError(f"advbo.evaluate: unknown option(s) {', '.join(unknown)} (accepted: "
                        f"{', '.join(_core.EVALUATE_OPTIONS)})")
    if eps is not None:
        options["eps"] = eps
    r = _core.evaluate(model, out, dataset=dataset, budget=budget, **options)
    s = r["summary"]
    return EvaluationResult(
        robust_accuracy=s.get("robust_accuracy"),
        reference_robust_accuracy=s.get("reference_robust_accuracy"),
        upper_bound=bool(s.get("upper_bound", False)), summary=s, table=r["table"], out=out,
        status=r["status"], notes=list(r["notes"]))
