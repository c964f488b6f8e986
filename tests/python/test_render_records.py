"""Per-vertex records out of kr.render and its backward pass (story 2, issue 18): a
kr.PathRecorder given to render() gets one record per path vertex from `path` and `prb`
while rendering, and from prb's replay during reverse mode, with the radiance leaving each
vertex and the adjoint radiance arriving there. Checked against host computations on a
scene whose paths are known: a diffuse square under a point light, seen head-on."""

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

SIZE, SPP, REFLECTANCE, INTENSITY = 8, 3, 0.6, 2.0
CAMERA, LAMP = np.array([0.0, 0.0, 3.0]), np.array([0.3, -0.2, 1.0])


def square_scene(integrator="prb", mode="symbolic", max_depth=2):
    T = kr.Transform4f
    return kr.load_dict({
        "type": "scene", "integrator": {"type": integrator, "max_depth": max_depth, "mode": mode},
        "sensor": {"type": "perspective", "fov": 20, "to_world": T().look_at(CAMERA.tolist(), [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": SIZE, "height": SIZE, "rfilter": {"type": "box"}}},
        "square": {"type": "rectangle", "to_world": T().scale([2, 2, 1]),
                   "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [REFLECTANCE] * 3}}},
        "lamp": {"type": "point", "position": LAMP.tolist(), "intensity": {"type": "rgb", "value": [INTENSITY] * 3}},
    })


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("integrator", ["path", "prb"])
def test_render_records_hold_one_vertex_per_hit_where_it_is(integrator, mode):
    scene = square_scene(integrator, mode)
    recorder = kr.PathRecorder(4096)
    kr.render(scene, spp=SPP, seed=2, recorder=recorder)
    records = recorder.render.numpy()
    # Every camera ray hits the square once, and max_depth 2 ends the path there.
    assert recorder.render.count() == SIZE * SIZE * SPP
    order = np.lexsort((records["sample"], records["pixel"]))
    np.testing.assert_array_equal(records["pixel"][order], np.repeat(np.arange(SIZE * SIZE), SPP))
    np.testing.assert_array_equal(records["sample"][order], np.tile(np.arange(SPP), SIZE * SIZE))
    assert (records["depth"] == 0).all()
    p = records["p"]
    np.testing.assert_allclose(p[:, 2], 0, atol=1e-6)
    np.testing.assert_allclose(records["n"], np.tile([0, 0, 1], (len(p), 1)), atol=1e-6)
    towards_camera = (CAMERA - p) / np.linalg.norm(CAMERA - p, axis=1, keepdims=True)
    np.testing.assert_allclose(records["wi"], towards_camera, atol=1e-5)
    np.testing.assert_allclose(records["throughput"], 1.0)
    assert (records["radiance"] == 0).all() and (records["adjoint"] == 0).all()
    # The pixel a record names is where its point lies (x right, y down in the image).
    row, column = records["pixel"] // SIZE, records["pixel"] % SIZE
    assert np.corrcoef(column, p[:, 0])[0, 1] > 0.95 and np.corrcoef(row, -p[:, 1])[0, 1] > 0.95
    assert recorder.backward.count() == 0


def test_backward_records_carry_the_radiance_out_and_the_adjoint_in():
    scene = square_scene("prb")
    params = kr.traverse(scene)
    kl.enable_grad(params["square.bsdf.reflectance.value"])
    params.update()
    recorder = kr.PathRecorder(4096)
    image = kr.render(scene, params, spp=SPP, seed=2, seed_grad=5, recorder=recorder)
    weights = np.random.default_rng(0).uniform(0.5, 1.5, (SIZE, SIZE, 3)).astype(np.float32)
    kl.backward_from(image.array, kl.Float(weights.ravel()))
    records = recorder.backward.numpy()
    assert recorder.backward.count() == SIZE * SIZE * SPP
    p = records["p"]
    to_lamp = LAMP - p
    distance = np.linalg.norm(to_lamp, axis=1)
    direct = REFLECTANCE / np.pi * INTENSITY * (to_lamp[:, 2] / distance) / distance ** 2
    np.testing.assert_allclose(records["radiance"], np.repeat(direct[:, None], 3, 1), rtol=1e-4)
    # Box filter: a sample's share of its pixel is 1 / spp, so dL = weight / spp.
    row, column = records["pixel"] // SIZE, records["pixel"] % SIZE
    np.testing.assert_allclose(records["adjoint"], weights[row, column] / SPP, rtol=1e-5)


def test_records_leave_without_a_copy_and_overflow_is_an_error():
    scene = square_scene("path")
    recorder = kr.PathRecorder(SIZE * SIZE * SPP)
    kr.render(scene, spp=SPP, seed=2, recorder=recorder)
    first, second = recorder.render.numpy()["p"], recorder.render.numpy()["p"]
    assert np.shares_memory(first, second)
    small = kr.PathRecorder(10)
    kr.render(scene, spp=SPP, seed=2, recorder=small)
    with pytest.raises(kl.SizeError, match=str(SIZE * SIZE * SPP)):
        small.render.numpy()
    with pytest.raises(TypeError):
        kr.render(scene, spp=SPP, recorder="records")
    for capacity in (0, -5):
        with pytest.raises(ValueError, match="at least 1"):
            kr.PathRecorder(capacity)
