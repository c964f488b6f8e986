"""examples/shape_optimization.py (issue 30) on a short run: from a sphere, the mesh moves
towards the photographed blob (its Chamfer distance to it falls) and the images' L1 loss falls."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import shape_optimization  # noqa: E402


def test_shape_moves_towards_the_target():
    problem, losses, errors, before, after = shape_optimization.run(6, views=4, size=32, spp=8, reference_spp=32)
    assert errors[-1] < 0.88 * errors[0] and all(b < a for a, b in zip(errors, errors[1:])), errors
    assert losses[-1] < losses[0], losses
    assert len(before) == len(after) == 4 and after[0].shape == (32, 32, 3)


def test_careless_arguments_are_refused_by_name():
    import subprocess
    script = Path(__file__).resolve().parents[2] / "examples" / "shape_optimization.py"
    done = subprocess.run([sys.executable, str(script), "--views", "0"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--views: must be at least 1" in done.stderr, done.stderr
