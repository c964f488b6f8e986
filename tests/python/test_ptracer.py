"""The particle tracer (`ptracer`) from Python: it estimates the same image as the path tracer
(whole film, crop, gaussian filter, both control-flow modes, passes), renders only the
emitters the camera sees at max_depth 1 and none with hide_emitters, gives a black image
without emitters, lights a scene from an environment map as the path tracer does,
differentiates by plain AD, and refuses what it cannot do by name.
(tests/python/test_render_references.py compares it with Mitsuba's ptracer.)"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr


def box_scene(integrator, width=32, height=24, rfilter="box", **film):
    """A small lit box corner: a diffuse floor and wall, a diffuse ball, a visible area light."""
    return {
        "type": "scene",
        "integrator": integrator,
        "sensor": {"type": "perspective", "fov": 45,
                   "to_world": kr.ScalarTransform4f().look_at([0, 1.2, 3.5], [0, 0.6, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": width, "height": height, "rfilter": {"type": rfilter},
                            **film}},
        "floor": {"type": "rectangle", "to_world": kr.ScalarTransform4f().rotate([1, 0, 0], -90).scale(2),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.7, 0.6, 0.5]}}},
        "wall": {"type": "rectangle", "to_world": kr.ScalarTransform4f().translate([0, 1, -1]).scale(2),
                 "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.3, 0.5, 0.7]}}},
        "ball": {"type": "sphere", "center": [0.4, 0.4, 0.2], "radius": 0.4, "bsdf": {"type": "diffuse"}},
        "light": {"type": "rectangle", "to_world": kr.ScalarTransform4f().translate([-0.6, 1.3, -0.3])
                  .rotate([0, 1, 0], 30).scale(0.3),
                  "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [6.0, 5.0, 4.0]}}},
    }


def render(integrator, spp, seed=0, **scene):
    return np.asarray(kr.render(kr.load_dict(box_scene(integrator, **scene)), spp=spp, seed=seed))


def block_means(image, size=4):
    """The mean of each size x size block per channel: noise averaged, structure kept."""
    h, w, c = image.shape
    return image[:h - h % size, :w - w % size].reshape(h // size, size, w // size, size, c).mean(axis=(1, 3))


def assert_same_estimate(a, b, tolerance):
    """Block means agree within `tolerance` of the image's mean (relative)."""
    difference = np.abs(block_means(a) - block_means(b)).max()
    assert difference < tolerance * b.mean(), (difference, b.mean())


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_estimates_the_path_tracers_image(mode):
    path = render({"type": "path", "max_depth": 4}, spp=1024)
    particles = render({"type": "ptracer", "max_depth": 4, "mode": mode}, spp=256)
    assert abs(particles.mean() / path.mean() - 1) < 0.02
    assert_same_estimate(particles, path, 0.25)


def test_an_environment_map_lights_the_scene_as_in_the_path_tracer():
    # A turned, uneven sky instead of the area light: light paths enter through the bounding
    # sphere by the map's importance (hide_emitters: the sky itself is a camera-path term).
    sky = np.ones((8, 16, 3), dtype=np.float32) * 0.3
    sky[1:3, 2:6] = [8.0, 6.0, 3.0]
    env = {"type": "envmap", "bitmap": kr.Bitmap(sky),
           "to_world": kr.ScalarTransform4f().rotate([0, 1, 0], 70).rotate([1, 0, 0], 20)}
    images = []
    for integrator, spp in (({"type": "path", "max_depth": 4, "hide_emitters": True}, 512),
                            ({"type": "ptracer", "max_depth": 4, "hide_emitters": True}, 256)):
        scene = box_scene(integrator)
        del scene["light"]
        scene["sky"] = env
        images.append(np.asarray(kr.render(kr.load_dict(scene), spp=spp)))
    path, particles = images
    assert abs(particles.mean() / path.mean() - 1) < 0.03, (particles.mean(), path.mean())
    assert_same_estimate(particles, path, 0.3)


def test_crop_and_gaussian_filter_give_the_crop_of_the_whole_image():
    film = {"rfilter": "gaussian"}
    whole = render({"type": "ptracer", "max_depth": 3}, spp=512, **film)
    crop = render({"type": "ptracer", "max_depth": 3}, spp=512, crop_offset_x=8, crop_offset_y=4, crop_width=16,
                  crop_height=12, **film)
    assert crop.shape == (12, 16, 3)
    # Away from the crop's edges (a filter's taps outside the crop window are dropped).
    assert_same_estimate(crop[2:-2, 2:-2], whole[6:14, 10:22], 0.25)


def test_passes_estimate_the_same_image():
    one = render({"type": "ptracer", "max_depth": 3}, spp=256)
    four = render({"type": "ptracer", "max_depth": 3, "samples_per_pass": 64}, spp=256)
    assert abs(four.mean() / one.mean() - 1) < 0.03
    with pytest.raises(ValueError, match="samples_per_pass.*does not divide the 96 samples"):
        render({"type": "ptracer", "samples_per_pass": 64}, spp=96)


def test_depth_one_renders_the_visible_emitters_and_hide_emitters_hides_them():
    direct = render({"type": "ptracer", "max_depth": 1}, spp=256)
    path_direct = render({"type": "path", "max_depth": 1}, spp=256)
    assert direct.max() > 1.0
    assert_same_estimate(direct, path_direct, 0.35)
    hidden = render({"type": "ptracer", "max_depth": 1, "hide_emitters": True}, spp=16)
    assert np.all(hidden == 0)
    shown_light = render({"type": "ptracer", "max_depth": 3, "hide_emitters": True}, spp=64)
    assert shown_light.max() < direct.max() / 4  # the light itself is not seen, what it lights is


def test_a_scene_without_emitters_is_black():
    scene = box_scene({"type": "ptracer"})
    del scene["light"]
    image = np.asarray(kr.render(kr.load_dict(scene), spp=4))
    assert image.shape == (24, 32, 3) and np.all(image == 0)


def test_rgba_film_carries_an_alpha_channel():
    image = render({"type": "ptracer", "max_depth": 2}, spp=16, pixel_format="rgba")
    assert image.shape == (24, 32, 4)
    assert image[..., 3].max() > 0


@pytest.mark.parametrize("mode", ["evaluated", "symbolic"])
def test_derivatives_by_plain_ad_match_finite_differences(mode):
    """In both modes (the gradient render traces its light paths evaluated: the splats of a
    symbolic loop could not carry their derivatives out of it)."""
    scene = kr.load_dict(box_scene({"type": "ptracer", "max_depth": 3, "mode": mode}))
    params = kr.traverse(scene)
    key = "wall.bsdf.reflectance.value"
    params.keep([key])
    base = kl.detach(params[key])
    kl.enable_grad(params[key])
    image = kr.render(scene, params, spp=64, seed=3, seed_grad=3)  # the same paths as below
    loss = kl.mean(image)
    kl.backward(loss)
    gradient = np.asarray(kl.grad(params[key])).ravel()

    def loss_at(value):
        params[key] = value
        params.update()
        return float(np.asarray(kr.render(scene, spp=64, seed=3)).mean())

    h = 0.05
    for c in range(3):
        step = [0.0, 0.0, 0.0]
        step[c] = h
        up = loss_at(base + kr.Color3f(*step))
        down = loss_at(base - kr.Color3f(*step))
        assert gradient[c] == pytest.approx((up - down) / (2 * h), rel=2e-3), c


REFUSED_THEN_RENDER = '''
import sys
import numpy as np
import kiln.render as kr
sys.path.insert(0, sys.argv[1])
from test_ptracer import box_scene
scene = box_scene({"type": "ptracer"})
scene["sensor"] = {"type": "pixel_batch", "film": {"type": "hdrfilm", "width": 16, "height": 1},
                   "view": scene["sensor"]}
try:
    kr.render(kr.load_dict(scene), spp=4)
except ValueError as error:
    print(error)
# The refused scene is gone: nothing it traced may still be pending.
print(np.asarray(kr.render(kr.load_dict(box_scene({"type": "ptracer"})), spp=4)).shape)
'''


def test_what_it_cannot_do_is_refused_by_name():
    # In a subprocess: a refusal that left the scene's work pending crashed the next render.
    done = subprocess.run([sys.executable, "-c", REFUSED_THEN_RENDER, str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "'pixel_batch' sensor cannot be reached by light paths" in done.stdout and "(24, 32, 3)" in done.stdout
    for parameter, value, message in [("samples_per_pass", 0, "must be positive"), ("rr_depth", 0, "must be positive"),
                                      ("max_depth", -2, "must be -1")]:
        with pytest.raises(ValueError, match=f"{parameter}.*{message}"):
            kr.load_dict(box_scene({"type": "ptracer", parameter: value}))
    batch = box_scene({"type": "ptracer"})
    batch["sensor"] = {"type": "pixel_batch", "film": {"type": "hdrfilm", "width": 16, "height": 1},
                       "view": batch["sensor"]}
    with pytest.raises(ValueError, match="'pixel_batch' sensor cannot be reached by light paths"):
        kr.render(kr.load_dict(batch), spp=4)
    # A surface emitter outside a shape (it once crashed the particle tracer).
    for plugin in ("directionalarea", "area"):
        with pytest.raises(ValueError, match=f"emitter '{plugin}'.*nest it in a shape"):
            kr.load_dict({"type": "scene", "integrator": {"type": "ptracer"}, "e": {"type": plugin, "radiance": 1.0}})
