"""Story 1 end to end (examples/inverse_crop.py, issue 18): an inverse-rendering loop that
changes film size, crop window and view every iteration compiles nothing after its first two
iterations, and its Adam steps on the texture lower the loss and move the texture towards
the truth. A short run at a small size (the example's default run is 300 iterations)."""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import inverse_crop  # noqa: E402


def test_story_1_inverse_rendering_compiles_nothing_after_two_iterations(tmp_path):
    problem, losses, compiled, reasons = inverse_crop.run(40, size=48, views=4, spp=4, reference_spp=32, lr=0.05,
                                                          folder=tmp_path, progress=False)
    assert compiled[0] > 0 and compiled[inverse_crop.WARM_UP:] == [0] * (40 - inverse_crop.WARM_UP), (compiled, reasons[-3:])
    # Iteration 2 compiles only where a value that changed became a launch parameter.
    assert all("literal" in reason or "first time" in reason for reason in reasons), reasons
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:10])
    initial = inverse_crop.texture_psnr(np.full_like(problem.truth, inverse_crop.INITIAL_ALBEDO), problem.truth)
    assert inverse_crop.texture_psnr(problem.texture(), problem.truth) > initial + 2.0
