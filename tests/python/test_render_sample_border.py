"""hdrfilm's `sample_border` (issue 30): the crop window's edge pixels then get the samples
their filter reaches beyond it, so a cropped render's pixels are the full render's; without
it they are not (Mitsuba's behaviour both ways: with the scene below, Mitsuba 3.9.1 gives the
crop's edge pixel 0.157 with sample_border and 0 without, kiln.render 0.158 and 0)."""

import numpy as np
import pytest

import kiln.render as kr

T = kr.Transform4f


def render(border, crop=True, rfilter="gaussian"):
    film = {"type": "hdrfilm", "width": 16, "height": 12, "sample_border": border, "rfilter": {"type": rfilter}}
    if crop:
        film |= {"crop_offset_x": 4, "crop_offset_y": 3, "crop_width": 8, "crop_height": 6}
    scene = kr.load_dict({
        "type": "scene", "integrator": {"type": "direct"},
        "sensor": {"type": "perspective", "fov": 40, "to_world": T().look_at([0, 0, 4], [0, 0, 0], [0, 1, 0]),
                   "film": film, "sampler": {"type": "independent", "sample_count": 2048}},
        # A wall of light whose edge lies just outside the crop window's left or right side.
        "wall": {"type": "rectangle", "to_world": T().translate([-1.728, 0, 0]),
                 "emitter": {"type": "area", "radiance": {"type": "rgb", "value": 1.0}}},
    })
    return np.asarray(kr.render(scene, seed=1))[..., 0]


def test_cropped_render_with_border_is_the_full_renders_window():
    full = render(False, crop=False)[3:9, 4:12]
    with_border, without = render(True), render(False)
    edge = np.unravel_index(np.argmax(np.abs(full - without)), full.shape)
    assert abs(full[edge] - without[edge]) > 0.1, "the scene puts nothing at the crop's edge"
    np.testing.assert_allclose(with_border, full, atol=0.01)


def test_box_filter_has_no_border():
    np.testing.assert_array_equal(render(True, rfilter="box"), render(False, rfilter="box"))


@pytest.mark.parametrize("value", ["yes", 2])
def test_sample_border_must_be_a_boolean(value):
    with pytest.raises((ValueError, TypeError)):
        kr.load_dict({"type": "hdrfilm", "sample_border": value})
