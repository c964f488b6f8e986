"""Installs the Python package the way a user does and uses it: a fresh virtual environment,
`pip install` of a clean copy of the tracked sources with build isolation (pip fetches the
build requirements from PyPI and builds the C++ core from scratch), then a computation,
derivatives and the installed stub checked in that environment. ctest runs it as
`python_package`, beside the other tests. Usage: pip_install.py SOURCE_DIR"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

# Runs inside the new environment, from a directory holding no copy of the package.
USER_PROGRAM = r"""
import ast, pathlib, sys
import numpy as np
import kiln as kl

package = pathlib.Path(kl.__file__).resolve().parent
assert package.is_relative_to(pathlib.Path(sys.prefix).resolve()), f"kiln imported from {package}"
ast.parse((package / "_kiln.pyi").read_text())

x = kl.Float(np.linspace(0, 1, 1000, dtype=np.float32))
total = kl.sum(kl.sqrt(x) * 2 + 1).item()
expected = float(np.sum(np.sqrt(np.linspace(0, 1, 1000, dtype=np.float32)) * 2 + 1))
assert abs(total - expected) < 1e-3 * expected, (total, expected)

a = kl.Float([0.5, 1.0, 2.0])
kl.enable_grad(a)
kl.backward(kl.sum(a * a * a))
assert np.allclose(kl.grad(a).numpy(), 3 * np.array([0.5, 1.0, 2.0]) ** 2)

t = kl.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
assert np.array_equal(np.asarray(t @ t.T), np.array([[5, 14], [14, 50]], dtype=np.float32))

# The renderer comes with the package (its extension and library, Embree reached from kernels).
import kiln.render as kr
scene = kr.load_dict({"type": "scene",
                      "sensor": {"type": "perspective", "film": {"type": "hdrfilm", "width": 8, "height": 6}},
                      "ball": {"type": "sphere", "center": [0, 0, 3]},
                      "sky": {"type": "constant"}})
image = np.asarray(kr.render(scene, spp=4))
assert image.shape == (6, 8, 3) and np.isfinite(image).all() and image.mean() > 0.1, image.mean()
"""


def copy_tracked_sources(source, destination):
    """The files git tracks (as they are in the working tree, edits included), nothing built."""
    for name in run(["git", "-C", source, "ls-files", "-z"]).stdout.split("\0"):
        path = source / name
        if name and path.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination / name)


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"python_package: `{' '.join(map(str, command))}` failed ({result.returncode}):\n"
                 f"{result.stdout[-20000:]}\n{result.stderr[-20000:]}")
    return result


def main():
    source = pathlib.Path(sys.argv[1]).resolve()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kiln-pip-") as work:
        work = pathlib.Path(work)
        copy_tracked_sources(source, work / "src")
        run([sys.executable, "-m", "venv", work / "venv"])
        python = work / "venv" / "bin" / "python"
        # Nothing from the calling environment may stand in for what pip must fetch and build.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_NO_BUILD_ISOLATION")}
        run([python, "-m", "pip", "install", "--disable-pip-version-check", work / "src"], env=env)
        run([python, "-c", USER_PROGRAM], cwd=work, env=dict(env, KILN_CACHE_DIR=str(work / "kernel-cache")))
    print(f"python_package: pip install with build isolation into a fresh venv and a first program: "
          f"passed in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
