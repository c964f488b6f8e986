"""Tests of the render tests' statistical criterion (reference_check.py) and of the reference
file format (exr_float.py) on synthetic images: no renderer needed.

Synthetic renders are a smooth image plus noise blurred over neighbouring pixels (as a
reconstruction filter correlates them), with each reference's noise 64 times smaller in
variance than a render's (as at 64x the samples)."""

import math
import sys
import struct
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import exr_float  # noqa: E402
import reference_check as rc  # noqa: E402

HEIGHT, WIDTH = 32, 40


def truth():
    """A smooth RGB image with a sharp vertical edge at x = 20 and a black band at the bottom."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    image = np.stack([0.3 + 0.2 * np.sin(x / 7.0), 0.5 + 0.1 * np.cos(y / 5.0), 0.2 + 0.6 * (x >= 20)], axis=-1)
    image[HEIGHT - 4:] = 0.0
    return image


def noisy(rng, image, count, sigma):
    """`count` renders: image + noise of relative sd `sigma`, blurred over 3 x 3 pixels."""
    noise = rng.normal(size=(count,) + image.shape)
    blurred = sum(np.roll(np.roll(noise, dy, axis=1), dx, axis=2) for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 3.0
    return image * (1 + sigma * blurred)


def references_and_renders(rng, test_image, renders=16, sigma=0.1):
    return noisy(rng, truth(), 2, sigma / 8), noisy(rng, test_image, renders, sigma)


@pytest.mark.parametrize("dof,t", [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042)])
def test_student_t_matches_tabulated_quantiles(dof, t):
    assert rc.student_t_two_sided_p(t, dof) == pytest.approx(0.05, abs=2e-4)


def test_student_t_tails():
    assert rc.student_t_two_sided_p(0.0, 7) == pytest.approx(1.0)
    # Normal limit: P(|Z| > 5) = 5.733e-7.
    assert rc.student_t_two_sided_p(5.0, 10**5) == pytest.approx(5.733e-7, rel=2e-3)
    assert rc.student_t_two_sided_p(math.inf, 3) == 0.0


def test_unbiased_renders_pass():
    failures = 0
    for seed in range(20):
        references, renders = references_and_renders(np.random.default_rng(seed), truth())
        failures += not rc.compare(references, renders, ["R", "G", "B"], alpha=1e-3).passed
    assert failures == 0


def test_global_bias_of_three_percent_fails_on_the_whole_image():
    references, renders = references_and_renders(np.random.default_rng(1), truth() * 1.03)
    result = rc.compare(references, renders, ["R", "G", "B"], alpha=1e-3)
    assert not result.passed
    assert "whole image" in result.report


def test_local_bias_fails_and_names_its_block():
    image = truth()
    image[8:16, 16:24, 1] *= 1.2
    references, renders = references_and_renders(np.random.default_rng(2), image)
    result = rc.compare(references, renders, ["R", "G", "B"], alpha=1e-3)
    assert not result.passed
    assert "block x 16..23, y 8..15, channel G" in result.report


def test_a_wider_blur_of_an_edge_fails_on_a_column():
    # The edge's blur keeps every 8 x 8 block's mean but moves value between two columns.
    image = truth()
    image[:, 19, 2] += 0.05
    image[:, 20, 2] -= 0.05
    references, renders = references_and_renders(np.random.default_rng(3), image)
    result = rc.compare(references, renders, ["R", "G", "B"], alpha=1e-3)
    assert not result.passed
    assert "column x 19" in result.report or "column x 20" in result.report


def test_exact_zero_regions_and_float_rounding_pass_but_a_deterministic_offset_fails():
    references = np.repeat(truth()[None], 2, axis=0)
    renders = np.repeat(truth()[None] * (1 + 1e-5), 4, axis=0)
    assert rc.compare(references, renders).passed
    result = rc.compare(references, renders * 1.01)
    assert not result.passed and "t = inf" not in result.report


def test_exactly_equal_images_pass_with_t_zero():
    references = np.zeros((2, 4, 4, 1))
    result = rc.compare(references, np.zeros((3, 4, 4, 1)))
    assert result.passed and result.worst_p == 1.0
    assert not rc.compare(references, np.full((3, 4, 4, 1), 1e-3)).passed


def test_nan_in_a_render_fails_and_names_the_pixel():
    references, renders = references_and_renders(np.random.default_rng(4), truth())
    renders[3, 5, 7, 1] = np.nan
    result = rc.compare(references, renders, ["R", "G", "B"])
    assert not result.passed
    assert result.report == "render 3 has nan at pixel x 7, y 5, channel G"


def test_nan_in_a_reference_is_an_error():
    references, renders = references_and_renders(np.random.default_rng(5), truth())
    references[1, 0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="reference"):
        rc.compare(references, renders)


def test_a_different_shape_fails():
    references, renders = references_and_renders(np.random.default_rng(6), truth())
    result = rc.compare(references, renders[:, :, :, :2], ["R", "G", "B"])
    assert not result.passed and "(32, 40, 2)" in result.report


def test_bad_arguments_raise():
    references, renders = references_and_renders(np.random.default_rng(7), truth())
    with pytest.raises(ValueError, match="two reference images"):
        rc.compare(references[:1], renders)
    with pytest.raises(ValueError, match="at least two test renders"):
        rc.compare(references, renders[:1])
    with pytest.raises(ValueError, match="channel names"):
        rc.compare(references, renders, ["R"])


def test_missing_reference_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        rc.load_references("no_such_scene", tmp_path)


def test_exr_round_trip_keeps_values_and_channel_order(tmp_path):
    image = np.random.default_rng(8).random((3, 5, 4)).astype(np.float32)
    names = ["img.R", "A", "dd.T", "B"]
    exr_float.write_exr(tmp_path / "x.exr", image, names)
    assert np.array_equal(exr_float.read_exr_channels(tmp_path / "x.exr", names), image)
    stored, stored_names = exr_float.read_exr(tmp_path / "x.exr")
    assert stored_names == sorted(names)
    with pytest.raises(ValueError, match="no channel"):
        exr_float.read_exr_channels(tmp_path / "x.exr", ["R"])


def test_exr_reader_rejects_compressed_files(tmp_path):
    path = tmp_path / "x.exr"
    exr_float.write_exr(path, np.zeros((2, 2, 1)), ["Y"])
    data = bytearray(path.read_bytes())
    at = data.index(b"compression\0compression\0") + len("compression\0compression\0") + 4
    data[at] = 3  # ZIP_COMPRESSION
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="compressed"):
        exr_float.read_exr(path)
    path.write_bytes(struct.pack("<i", 1234) + bytes(data[4:]))
    with pytest.raises(ValueError, match="not an OpenEXR file"):
        exr_float.read_exr(path)
