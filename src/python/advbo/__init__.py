"""advbo: black-box adversarial attacks driven by Bayesian optimisation.

Attack any classifier you can only query -- a ``torch.nn.Module``, a TorchScript file, a
served model's URL or any Python callable -- with BOS^2 (the default) or any other attack of
``advbo.ATTACKS`` (score-based L_inf and L2, hard-label; the C++ registry's names)::

    import advbo, torch
    net = torch.jit.load(advbo.shipped_model("cifar10_cw")).eval()   # or your nn.Module
    x, y = advbo.load_images("cifar10", limit=4)                      # [4, 3, 32, 32] in [0, 1]
    result = advbo.attack(net, torch.from_numpy(x), y, eps=8 / 255, targeted=False)
    result.x_adv, result.success, result.queries, result.records

Every image the model scores is one query; the budget is a hard limit and every query stays
inside the eps-ball (L_inf, or L2 with norm="l2"; hard-label attacks, feedback="label", may
query outside it and succeed only inside). By default queries are 8-bit images, so each success is an image
that stays adversarial when saved as PNG. See ``help(advbo.attack)``.

Robust accuracy over an ensemble of black-box attacks, beside a white-box reference, is
``advbo.evaluate(model_file, out_folder, dataset="cifar10")`` (``help(advbo.evaluate)``).
"""
from ._core import ATTACKS, DataError, ModelError, __version__
from ._api import (Attack, AttackResult, EvaluationResult, attack, evaluate, load_images,
                   shipped_model)

__all__ = ["ATTACKS", "Attack", "AttackResult", "EvaluationResult", "attack", "evaluate",
           "load_images", "shipped_model", "DataError", "ModelError", "__version__"]
