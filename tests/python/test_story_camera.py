"""Story 1 from Python: the camera loop with a changing film size, crop window, field of
view and camera compiles at most twice, says why, and gives the same pixels as kernels
with every literal baked in."""

import os
import random
import subprocess
import sys

import numpy as np
import pytest

import kiln as kl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from film_camera import random_settings, render_crop  # noqa: E402


@pytest.fixture
def fresh_caches(tmp_path):
    kl.set_disk_cache_dir(str(tmp_path))
    kl.flush_kernel_cache()
    kl.kernel_history(clear=True)
    yield
    kl.flush_kernel_cache()
    kl.set_disk_cache_dir("")


def compilations(history):
    return [launch for launch in history if launch["source"] in ("compiled", "generalized")]


def test_thirty_iterations_compile_at_most_twice(fresh_caches):
    rng = random.Random(2024)
    renders = []
    for _ in range(30):
        image = render_crop(random_settings(rng))
        kl.kernel_history(clear=True)
        kl.eval(image)  # the render's kernels (a GPU's sum below runs kernels of its own)
        renders += kl.kernel_history()
        kl.sum(image).item()
    compiled = compilations(renders)
    assert 1 <= len(compiled) <= 2, [launch["reason"] for launch in compiled]
    assert compiled[0]["reason"] == "first time this kernel shape was seen"
    if len(compiled) == 2:
        assert compiled[1]["source"] == "generalized"
        assert "changed" in compiled[1]["reason"] and "film_camera.py" in compiled[1]["reason"]
    assert all(launch["reason"] is None for launch in renders if launch not in compiled)
    compiles_after_warm_up = kl.cache_stats().compiles
    for _ in range(30):
        kl.sum(render_crop(random_settings(rng))).item()
    assert kl.cache_stats().compiles == compiles_after_warm_up


def test_without_generalization_every_iteration_compiles(fresh_caches):
    kl.set_flag(kl.Flag.Generalize, False)
    rng = random.Random(7)
    for _ in range(4):
        render_crop(random_settings(rng)).numpy()
    assert len(compilations(kl.kernel_history())) == 4


def test_generalized_kernels_give_the_pixels_of_specialized_ones(fresh_caches):
    settings = [random_settings(random.Random(seed)) for seed in (1, 2, 3)]
    generic = [render_crop(s).numpy().copy() for s in settings]
    assert kl.kernel_history()[-1]["parameters"] > 0
    kl.set_flag(kl.Flag.Generalize, False)
    kl.flush_kernel_cache()
    specialized = [render_crop(s).numpy().copy() for s in settings]
    for a, b in zip(generic, specialized):
        np.testing.assert_array_equal(a, b)


def test_second_process_loads_the_kernels_from_disk(tmp_path):
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "film_loop.py")
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
    assert " 0 compiled" not in first.stdout, first.stdout  # 1 or 2 render kernels (and a GPU's sum kernels)
    assert "0 compiled" in second.stdout and "disk hits" in second.stdout, second.stdout
