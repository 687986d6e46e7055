"""`pip install --no-build-isolation .` into a fresh venv: the package installs there (not into
Debian's site-packages), carries the shipped models and data, and the README's Python example
runs from another directory. Uses the ctest build (ADVBO_CMAKE_BUILD_DIR) instead of a second
full CMake build; a source copy keeps the work tree clean."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.environ.get("ADVBO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("ADVBO_BINARY", os.path.join(ROOT, "build", "advbo"))

EXAMPLE = """
import advbo, torch
net = torch.jit.load(advbo.shipped_model("mnist_cw")).eval()   # any torch.nn.Module
x, y = advbo.load_images("mnist", limit=2)                      # float32 [2, 1, 28, 28] in [0, 1]
result = advbo.attack(net, torch.from_numpy(x), y, eps=0.3, budget=300, targeted=False, seed=0)
import json
print(json.dumps({"shape": list(result.x_adv.shape), "type": type(result.x_adv).__name__,
                  "successes": int(result.success.sum()), "module": advbo.__file__}))
"""


def test_pip_install_into_a_venv_and_run_the_readme_example(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for f in ("setup.py", "pyproject.toml", "README.md", "CMakeLists.txt"):
        shutil.copy(os.path.join(ROOT, f), src / f)
    for d in ("src/python", "data", "models"):
        shutil.copytree(os.path.join(ROOT, d), src / d)
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    env = dict(os.environ, ADVBO_CMAKE_BUILD_DIR=os.path.dirname(BINARY), PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)
    sites = {sysconfig.get_paths()["purelib"], "/usr/lib/python3/dist-packages",
             "/usr/local/lib/python3/dist-packages"}
    listing = lambda: {d: sorted(os.listdir(d)) for d in sites if os.path.isdir(d)}  # noqa: E731
    before = listing()
    run = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "-q",
                          str(src)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert listing() == before  # nothing written to the system's site-packages
    out = subprocess.run([str(venv / "bin" / "python"), "-c", EXAMPLE], env=env, cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["shape"] == [2, 1, 28, 28] and got["type"] == "Tensor" and got["successes"] == 2
    module = got["module"]
    assert module.startswith(str(venv))
    # The installed package carries the shipped model and data, not paths into the tree.
    pkg = os.path.dirname(module)
    assert os.path.isfile(os.path.join(pkg, "shipped", "models", "mnist_cw.pt"))
    assert os.path.isfile(os.path.join(pkg, "shipped", "data", "mnist",
                                       "t10k-images-idx3-ubyte.gz"))


def test_install_script_refuses_an_interpreter_without_the_packages(tmp_path):
    """a bare `python3` may be another interpreter (pyenv, conda) without torch or
    wheel; tools/install_python.sh says so before any build, and which interpreter to use."""
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nexit 1\n")  # an interpreter where every import fails
    fake.chmod(0o755)
    env = dict(os.environ, PYTHON=str(fake))
    run = subprocess.run(["bash", os.path.join(ROOT, "tools", "install_python.sh"),
                          str(tmp_path / "venv")], env=env, capture_output=True, text=True)
    assert run.returncode == 1
    assert "lacks: numpy torch wheel setuptools pip venv" in run.stderr, run.stderr
    assert "PYTHON=/usr/bin/python3 bash tools/install_python.sh" in run.stderr, run.stderr
    assert not (tmp_path / "venv").exists()  # nothing made
