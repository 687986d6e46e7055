"""Saving TorchScript modules without machine-specific debug information.

A saved TorchScript archive keeps, next to each code file, a ``*.debug_pkl`` with the source
file paths and lines of the Python that built it -- absolute paths of the machine that ran
the export. TorchScript loads and runs without them (an exception raised inside forward()
still carries its message), so the project's exports drop them.

    /usr/bin/python3 tools/train/torchscript_util.py strip models/*.pt   # rewrite in place

prints each file's new sha256 (copy it into the model card).
"""
import hashlib
import os
import sys
import tempfile
import zipfile


def strip_debug_info(path):
    """Rewrites the archive at ``path`` without its *.debug_pkl entries (atomically: a
    temporary file in the same folder renamed over it). Returns the new sha256."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".pt.tmp")
    os.close(fd)
    try:
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as dst:
            for item in src.infolist():
                if not item.filename.endswith(".debug_pkl"):
                    dst.writestr(item, src.read(item.filename))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.remove(tmp)
        raise
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def save_portable(module, path):
    """Saves a scripted or traced ``module`` to ``path`` without debug information."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".pt.tmp")
    os.close(fd)
    module.save(tmp)
    os.replace(tmp, path)
    return strip_debug_info(path)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "strip":
        sys.exit("usage: torchscript_util.py strip FILE.pt...")
    for p in sys.argv[2:]:
        print(f"{p}: sha256 {strip_debug_info(p)}")
