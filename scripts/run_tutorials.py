"""Runs Mitsuba's tutorial notebooks on Kiln with their two imports changed, from a local
snapshot of github mitsuba-renderer/mitsuba-tutorials, and prints a table (issue 29).

    python scripts/run_tutorials.py SNAPSHOT [--only NAME ...] [--original] [--json FILE]

Needs matplotlib (pip install matplotlib). SNAPSHOT is a checkout or a git directory of the
tutorials; the notebooks are taken at commit b79d3ac (the last one written for Mitsuba 3.9)
when it is a git directory. Each
notebook's code cells run in order in a fresh process, headless (matplotlib's Agg backend),
in the notebook's folder, with `import mitsuba as mi` / `import drjit as dr` changed to
`import kiln.render as mi` / `import kiln as dr` (and `from mitsuba[.x] import` / `from drjit
import` to `from kiln.render[.x] import` / `from kiln import`) and nothing else; IPython's `%` and `!`
lines are dropped and `display()` does nothing. The table gives, per notebook, the cells
that ran, the time, and the first error a user would see. `--original` runs them on Mitsuba
and Dr.Jit themselves (for comparison, where they are installed). The notebooks are not
committed: their code is not Kiln's."""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

COMMIT = "b79d3ac"

# The notebooks issue 29 asks to run, and those out of its scope (with the reason).
IN_SCOPE = [
    "quickstart/mitsuba_quickstart",
    "how_to_guides/image_io_and_manipulation",
    "how_to_guides/mesh_io_and_manipulation",
    "how_to_guides/transformation_toolbox",
    "how_to_guides/use_optimizers",
    "rendering/editing_a_scene",
    "rendering/multi_view_rendering",
    "rendering/scripting_renderer",
    "inverse_rendering/gradient_based_opt",
    "inverse_rendering/forward_inverse_rendering",
    "inverse_rendering/pytorch_mitsuba_interoperability",
    "inverse_rendering/caustics_optimization",
    "inverse_rendering/radiance_field_reconstruction",
    "inverse_rendering/object_pose_estimation",
    "inverse_rendering/shape_optimization",
    "others/custom_plugin",
    "others/bsdf_deep_dive",
]
OUT_OF_SCOPE = {
    "rendering/polarized_rendering": "polarized variants",
    "inverse_rendering/polarizer_optimization": "polarized variants",
    "inverse_rendering/volume_optimization": "participating media",
    "others/granular_phase_function": "participating media",
    "inverse_rendering/projective_sampling_integrators": "the bsplinecurve shape of its shadow art scene (issue 32)",
    "quickstart/drjit_quickstart": "Dr.Jit's own tutorial (not a Mitsuba script)",
}

IMPORTS = [
    (re.compile(r"^(\s*)import mitsuba as mi\b", re.M), r"\1import kiln.render as mi"),
    (re.compile(r"^(\s*)import drjit as dr\b", re.M), r"\1import kiln as dr"),
    (re.compile(r"^(\s*)from mitsuba import\b", re.M), r"\1from kiln.render import"),
    (re.compile(r"^(\s*)from mitsuba\.", re.M), r"\1from kiln.render."),
    (re.compile(r"^(\s*)from drjit import\b", re.M), r"\1from kiln import"),
]

# Runs inside the notebook's process: the cells one by one, the first failure reported.
CELL_RUNNER = r'''
import json, linecache, sys, time, traceback
import matplotlib
matplotlib.use("Agg")
cells = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__", "display": lambda *args, **kwargs: None}
result = {"cells": len(cells), "ran": 0, "error": None}
start = time.perf_counter()
for index, source in enumerate(cells):
    filename = f"<cell {index + 1}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # as Jupyter keeps it
    try:
        exec(compile(source, filename, "exec"), namespace)
    except BaseException as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<cell")]
        where = f"{frames[-1].filename} line {frames[-1].lineno}: {frames[-1].line}" if frames else f"<cell {index + 1}>"
        result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''} ({where})"
        traceback.print_exc()
        break
    result["ran"] += 1
result["seconds"] = time.perf_counter() - start
print("@@RESULT@@" + json.dumps(result))
'''


def notebook_cells(path, original):
    """The code cells of a notebook, as a user's Python (magics dropped, imports changed)."""
    cells = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        if not original:
            for pattern, replacement in IMPORTS:
                source = pattern.sub(replacement, source)
        cells.append(source)
    return cells


def checkout(snapshot, folder):
    """The tutorials at COMMIT under `folder` (a git directory), or the checkout itself."""
    snapshot = Path(snapshot)
    if (snapshot / "quickstart").is_dir():
        return snapshot
    archive = folder / "tutorials.tar"
    subprocess.run(["git", "--git-dir", str(snapshot), "archive", "-o", str(archive), COMMIT], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "tutorials")
    return folder / "tutorials"


def run_notebook(root, name, original, timeout, log_folder):
    """Runs one notebook; returns its result dictionary."""
    notebook = root / f"{name}.ipynb"
    cells_file = log_folder / (name.replace("/", "__") + ".json")
    cells_file.write_text(json.dumps(notebook_cells(notebook, original)))
    runner = log_folder / "cell_runner.py"
    runner.write_text(CELL_RUNNER)
    environment = dict(os.environ, MPLBACKEND="Agg")
    start = time.perf_counter()
    try:
        process = subprocess.run([sys.executable, str(runner), str(cells_file)], cwd=notebook.parent,
                                 capture_output=True, text=True, timeout=timeout, env=environment)
    except subprocess.TimeoutExpired:
        return {"notebook": name, "ran": None, "cells": None, "error": f"timed out after {timeout} s",
                "seconds": time.perf_counter() - start}
    (log_folder / (name.replace("/", "__") + ".log")).write_text(process.stdout + process.stderr)
    marker = [line for line in process.stdout.splitlines() if line.startswith("@@RESULT@@")]
    if not marker:
        tail = (process.stderr.strip().splitlines() or ["no output"])[-1]
        return {"notebook": name, "ran": None, "cells": None,
                "error": f"process ended with {process.returncode}: {tail}", "seconds": time.perf_counter() - start}
    return dict(json.loads(marker[0][len("@@RESULT@@"):]), notebook=name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", help="a checkout or git directory of mitsuba-renderer/mitsuba-tutorials")
    parser.add_argument("--only", nargs="*", help="notebooks whose name contains one of these")
    parser.add_argument("--original", action="store_true", help="run on Mitsuba and Dr.Jit, imports unchanged")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per notebook")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--logs", help="folder for each notebook's output (default: a temporary one)")
    args = parser.parse_args()
    try:
        import matplotlib  # noqa: F401  (the notebooks plot; their cells run with its Agg backend)
    except ImportError:
        sys.exit("run_tutorials.py: the notebooks need matplotlib: pip install matplotlib")

    with tempfile.TemporaryDirectory() as scratch:
        root = checkout(args.snapshot, Path(scratch))
        logs = Path(args.logs or scratch)
        logs.mkdir(parents=True, exist_ok=True)
        names = [n for n in IN_SCOPE if not args.only or any(part in n for part in args.only)]
        results = []
        for name in names:
            result = run_notebook(root, name, args.original, args.timeout, logs)
            results.append(result)
            ran = "-" if result["ran"] is None else f"{result['ran']}/{result['cells']}"
            status = "ok" if result["error"] is None else result["error"]
            print(f"| {name} | {ran} | {result['seconds']:.0f} s | {status} |", flush=True)
        for name, reason in OUT_OF_SCOPE.items():
            print(f"| {name} | out of scope | | {reason} |")
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    failed = sum(result["error"] is not None for result in results)
    print(f"{len(results) - failed} of {len(results)} notebooks ran to the end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
