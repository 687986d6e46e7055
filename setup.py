"""Builds the advbo Python package: the C++ extension advbo._core through CMake (target
advbo_python of the top-level CMakeLists.txt), the Python layer from src/python/advbo, and
the shipped classifiers and data samples (models/*_cw*.pt, models/mnist_carlini.pt, data/)
as advbo/shipped/, so advbo.load_images("mnist") and advbo.shipped_model() work anywhere.

    bash tools/install_python.sh                          # checks, then the two lines below
    /usr/bin/python3 -m venv --system-site-packages .venv  # Debian's numpy / torch visible
    .venv/bin/pip install --no-build-isolation .

Environment: ADVBO_CMAKE_BUILD_DIR=DIR reuses an existing CMake build of this tree (only
advbo_python is built there; the tests use it), else CMake builds in build-pip/ (kept, so a
re-install is incremental). ADVBO_NATIVE=0 builds for any x86-64 (default: -march=native).
JOBS sets the build's parallelism (default: all cores).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def check_interpreter():
    """Refuses, before anything is built, an interpreter that cannot build or run advbo: the
    build needs wheel and setuptools, the package needs numpy, and the API takes torch
    modules. A bare `python3` may be another interpreter than Debian's (conda, pyenv, a
    venv without --system-site-packages), which has none of Debian's packages."""
    missing = []
    for module, package in (("wheel", "python3-wheel"), ("numpy", "python3-numpy"),
                            ("torch", "python3-torch")):
        if module == "torch" and os.environ.get("ADVBO_ALLOW_NO_TORCH") == "1":
            continue
        try:
            __import__(module)
        except ImportError:
            missing.append((module, package))
    if missing:
        names = ", ".join(m for m, _ in missing)
        debs = " ".join(p for _, p in missing)
        sys.exit(
            f"setup.py: {sys.executable} has no {names}. advbo installs with Debian's "
            f"/usr/bin/python3 and its packages ({debs}; `bash tools/setup.sh` installs "
            f"them): run `bash tools/install_python.sh`, or by hand `/usr/bin/python3 -m venv "
            f"--system-site-packages .venv && .venv/bin/pip install --no-build-isolation .`"
            + ("" if "torch" not in names else
               ". Without torch (numpy callables and TorchScript files only): "
               "ADVBO_ALLOW_NO_TORCH=1"))


check_interpreter()
SHIPPED_MODELS = ["mnist_cw", "cifar10_cw", "mnist_cw_plain", "cifar10_cw_plain", "mnist_carlini"]
SHIPPED_DATA = ["mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz",
                "cifar10/test_batch_first2000.bin", "cifar10/batches.meta.txt"]


def version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(advbo VERSION ([0-9.]+)", text)
    if not m:
        sys.exit("setup.py: no 'project(advbo VERSION x.y.z' in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    """Builds advbo._core with CMake and copies it where setuptools expects the extension."""

    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            sys.exit("setup.py: cmake not found; run tools/setup.sh (Debian packages) first")
        reuse = os.environ.get("ADVBO_CMAKE_BUILD_DIR")
        build = Path(reuse).resolve() if reuse else ROOT / "build-pip"
        if not reuse:
            build.mkdir(exist_ok=True)
            native = "OFF" if os.environ.get("ADVBO_NATIVE", "1") == "0" else "ON"
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build),
                                   "-DCMAKE_BUILD_TYPE=Release", "-DADVBO_BUILD_TESTS=OFF",
                                   "-DADVBO_PYTHON=ON", f"-DADVBO_NATIVE={native}",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build), "--target", "advbo_python",
                               "-j", jobs])
        built = sorted((build / "python" / "advbo").glob("_core*.so"))
        if not built:
            sys.exit(f"setup.py: the CMake build in {build} made no python/advbo/_core*.so")
        out = Path(self.get_ext_fullpath(ext.name))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], out)


class BuildPyWithShipped(build_py):
    """The Python layer plus advbo/shipped/{models,data}."""

    def run(self):
        super().run()
        dest = Path(self.build_lib) / "advbo" / "shipped"
        for name in SHIPPED_MODELS:
            self._copy(ROOT / "models" / f"{name}.pt", dest / "models" / f"{name}.pt")
        for rel in SHIPPED_DATA:
            self._copy(ROOT / "data" / rel, dest / "data" / rel)

    def _copy(self, src: Path, dst: Path):
        if not src.is_file():
            sys.exit(f"setup.py: {src} is missing (a shipped model or data sample)")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


(ROOT / "build-pip").mkdir(exist_ok=True)
setup(
    version=version(),
    packages=["advbo"],
    package_dir={"advbo": "src/python/advbo"},
    ext_modules=[Extension("advbo._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithShipped},
    options={"build": {"build_base": "build-pip/setuptools"},
             "egg_info": {"egg_base": "build-pip"}},
    zip_safe=False,
)
