"""kiln.render from Python: loading (dict and XML agree; every error names its place),
rendering (modes agree; bad arguments raise), scene parameters, and story 1: film size,
crop, field of view and camera changing every iteration compile nothing new."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import scenes  # noqa: E402

DATA = Path(scenes.DATA_DIR)


def small_scene(integrator="path", **sensor):
    """A lit box corner: a rectangle floor and wall, a sphere, an area light and a point light."""
    film = {"type": "hdrfilm", "width": sensor.pop("width", 24), "height": sensor.pop("height", 16),
            "rfilter": {"type": "gaussian"}}
    film.update(sensor.pop("film", {}))
    return {
        "type": "scene",
        "integrator": {"type": integrator, "max_depth": 4},
        "sensor": {"type": "perspective", "fov": sensor.pop("fov", 40.0),
                   "to_world": sensor.pop("to_world", kr.Transform4f().look_at([0, 1, 4], [0, 0.5, 0], [0, 1, 0])),
                   "film": film, **sensor},
        "gray": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}},
        "floor": {"type": "rectangle", "to_world": [[2, 0, 0, 0], [0, 0, 2, 0], [0, -2, 0, 0], [0, 0, 0, 1]],
                  "bsdf": {"type": "ref", "id": "gray"}},
        "ball": {"type": "sphere", "center": [0.3, 0.5, 0], "radius": 0.5,
                 "bsdf": {"type": "roughconductor", "alpha": 0.2}},
        "light": {"type": "rectangle", "to_world": [[0.5, 0, 0, 0], [0, 0, 0.5, 2], [0, -0.5, 0, 0], [0, 0, 0, 1]],
                  "flip_normals": True, "emitter": {"type": "area", "radiance": {"type": "rgb", "value": 8.0}}},
        "lamp": {"type": "point", "position": [-1, 2, 1], "intensity": {"type": "rgb", "value": [3, 3, 3]}},
    }


def render(scene_dict, **kwargs):
    return np.asarray(kr.render(kr.load_dict(scene_dict), **kwargs))


def test_render_returns_the_crop_window_as_a_tensor():
    image = kr.render(kr.load_dict(small_scene(film={"crop_offset_x": 3, "crop_width": 10})), spp=4)
    assert isinstance(image, kl.TensorXf)
    assert image.shape == (16, 10, 3)
    assert np.all(np.isfinite(np.asarray(image))) and np.asarray(image).mean() > 0


def test_symbolic_and_evaluated_modes_give_the_same_image():
    images = []
    for mode in ("symbolic", "evaluated"):
        scene = small_scene()
        scene["integrator"]["mode"] = mode
        images.append(render(scene, spp=8, seed=3))
    np.testing.assert_array_equal(images[0], images[1])


def test_seeds_change_the_noise_not_the_image():
    a, b = render(small_scene(), spp=32, seed=1), render(small_scene(), spp=32, seed=2)
    assert not np.array_equal(a, b)
    assert abs(a.mean() - b.mean()) < 0.05 * a.mean()


XML = """<scene version="3.0.0">
  <default name="spp" value="8"/>
  <integrator type="path"><integer name="max_depth" value="4"/></integrator>
  <sensor type="perspective">
    <float name="fov" value="40"/>
    <transform name="to_world"><lookat origin="0, 1, 4" target="0, 0.5, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="24"/><integer name="height" value="16"/></film>
    <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
  </sensor>
  <bsdf type="diffuse" id="gray"><rgb name="reflectance" value="0.6, 0.5, 0.4"/></bsdf>
  <shape type="obj">
    <string name="filename" value="{torus}"/>
    <transform name="to_world"><scale value="0.5"/><translate x="0" y="0.5" z="0"/></transform>
    <ref id="gray"/>
  </shape>
  <emitter type="constant"><rgb name="radiance" value="0.5"/></emitter>
</scene>
"""


def test_xml_and_dict_give_the_same_image(tmp_path):
    path = tmp_path / "scene.xml"
    path.write_text(XML.replace("{torus}", str(DATA / "torus.obj")))
    from_xml = np.asarray(kr.render(kr.load_file(str(path), spp=8), seed=5))
    scene = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 4},
        "sensor": {"type": "perspective", "fov": 40.0,
                   "to_world": kr.Transform4f().look_at([0, 1, 4], [0, 0.5, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": 24, "height": 16},
                   "sampler": {"type": "independent", "sample_count": 8}},
        "gray": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}},
        "torus": {"type": "obj", "filename": str(DATA / "torus.obj"),
                  "to_world": [[0.5, 0, 0, 0], [0, 0.5, 0, 0.5], [0, 0, 0.5, 0], [0, 0, 0, 1]],
                  "bsdf": {"type": "ref", "id": "gray"}},
        "sky": {"type": "constant", "radiance": {"type": "rgb", "value": 0.5}},
    }
    from_dict = np.asarray(kr.render(kr.load_dict(scene), seed=5))
    np.testing.assert_array_equal(from_xml, from_dict)


@pytest.mark.parametrize("generalize, integrator", [(True, "path"), (False, "path"), (False, "ptracer")])
def test_story_1_film_and_camera_changes_compile_nothing_after_warm_up(generalize, integrator):
    # Without literal generalization, every value a render varies must already reach the
    # kernels as a parameter: then nothing compiles after the first iteration either (the
    # particle tracer's film size, crop and importance included).
    kl.set_flag(kl.Flag.Generalize, generalize)
    try:
        check_story_1(warm_up=2 if generalize else 1, integrator=integrator)
    finally:
        kl.set_flag(kl.Flag.Generalize, True)


def new_kernels():
    """Kernels a launch did not find in memory: compiled, or loaded from the disk cache."""
    stats = kl.cache_stats()
    return stats.compiles + stats.disk_hits


def check_story_1(warm_up, integrator):
    scene = kr.load_dict(small_scene(integrator))
    params = kr.traverse(scene)
    compiles = []
    for it in range(6):
        size, offset, crop = (24 + 4 * it, 16 + 2 * it), (it, it // 2), (20 + 3 * it, 14 + it)
        fov = 35.0 + it
        to_world = kr.Transform4f().look_at([0.1 * it, 1, 4], [0, 0.5, 0], [0, 1, 0])
        params["sensor.film.size"] = size
        params["sensor.film.crop_offset"] = offset
        params["sensor.film.crop_size"] = crop
        params["sensor.x_fov"] = fov
        params["sensor.to_world"] = to_world
        params.update()
        before = new_kernels()
        image = np.asarray(kr.render(scene, spp=4, seed=it))
        compiles.append(new_kernels() - before)
        assert image.shape == (crop[1], crop[0], 3)
        if it in (2, 5):
            fresh = small_scene(integrator, width=size[0], height=size[1], fov=fov, to_world=to_world,
                                film={"crop_offset_x": offset[0], "crop_offset_y": offset[1],
                                      "crop_width": crop[0], "crop_height": crop[1]})
            expected = render(fresh, spp=4, seed=it)
            if integrator == "ptracer":  # splats add up atomically, in whatever order threads run
                np.testing.assert_allclose(image, expected, rtol=1e-3, atol=1e-5 * expected.max())
            else:
                np.testing.assert_array_equal(image, expected)
    assert compiles[warm_up:] == [0] * (6 - warm_up), compiles


def test_scene_parameters_use_mitsubas_keys_and_update_the_scene():
    scene = kr.load_dict(small_scene())
    params = kr.traverse(scene)
    for key in ("gray.reflectance.value", "light.emitter.radiance.value", "floor.vertex_positions",
                "sensor.film.size", "sensor.x_fov", "sensor.to_world", "ball.to_world"):
        assert key in params, key
    dark = render(small_scene(), spp=8, seed=1)
    params["light.emitter.radiance.value"] = [16.0, 16.0, 16.0]
    params.update()
    brighter = np.asarray(kr.render(scene, spp=8, seed=1))
    assert brighter.mean() > dark.mean() * 1.2
    positions = np.asarray(params["floor.vertex_positions"])
    params["floor.vertex_positions"] = kl.Float(positions + 0.25)
    params.update()
    assert np.asarray(kr.render(scene, spp=8, seed=1)).mean() != brighter.mean()


def test_a_mesh_moved_through_its_parameters_renders_as_loaded_there():
    # The floor and the light, both rectangles, share joined vertex arrays in the kernel
    # (one body for both); lifting the floor's vertices must rebuild them.
    lifted = small_scene()
    lifted["floor"]["to_world"] = [[2, 0, 0, 0], [0, 0, 2, 0.25], [0, -2, 0, 0], [0, 0, 0, 1]]
    for mode in ("symbolic", "evaluated"):
        scene_dict = small_scene()
        scene_dict["integrator"]["mode"] = mode
        scene = kr.load_dict(scene_dict)
        before = np.asarray(kr.render(scene, spp=8, seed=2))
        params = kr.traverse(scene)
        positions = np.asarray(params["floor.vertex_positions"]).reshape(-1, 3) + [0.0, 0.25, 0.0]
        params["floor.vertex_positions"] = kl.Float(positions.astype(np.float32).ravel())
        params.update()
        moved = np.asarray(kr.render(scene, spp=8, seed=2))
        lifted["integrator"]["mode"] = mode
        np.testing.assert_allclose(moved, render(lifted, spp=8, seed=2), rtol=1e-5, atol=1e-6)
        assert np.abs(moved - before).max() > 0.01


@pytest.mark.parametrize("change, error", [
    (lambda d: d.update(extra={"type": "no_such_plugin"}), "unknown plugin type 'no_such_plugin'"),
    (lambda d: d["gray"].update(roughness=0.5), "roughness"),
    (lambda d: d["ball"].update(radius="big"), "radius"),
    (lambda d: d["floor"].update(bsdf={"type": "ref", "id": "nothing"}), "nothing"),
    (lambda d: d["sensor"].update(fov=200.0), "fov"),
    (lambda d: d["sensor"]["film"].update(crop_width=100), "crop window"),
    (lambda d: d.update(mesh={"type": "obj", "filename": "/no/such/mesh.obj"}), "/no/such/mesh.obj"),
])
def test_bad_scenes_raise_errors_that_name_the_place(change, error):
    scene = small_scene()
    change(scene)
    with pytest.raises((ValueError, TypeError, OSError)) as info:
        kr.load_dict(scene)
    assert error in str(info.value)


def test_unknown_parameter_names_plugin_parameter_and_key_path():
    scene = small_scene()
    scene["ball"]["bsdf"]["alphaa"] = 0.3
    with pytest.raises(ValueError) as info:
        kr.load_dict(scene)
    message = str(info.value)
    assert "roughconductor" in message and "alphaa" in message and "['ball']['bsdf']" in message


def test_xml_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text('<scene version="3.0.0">\n  <shape type="sphere">\n    <float name="radius" value="x"/>\n'
                    '  </shape>\n</scene>\n')
    with pytest.raises(ValueError) as info:
        kr.load_file(str(path))
    assert "bad.xml:3" in str(info.value)
    with pytest.raises(OSError):
        kr.load_file(str(tmp_path / "missing.xml"))


def test_a_malformed_mesh_is_an_error(tmp_path):
    ply = tmp_path / "bad.ply"
    ply.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nend_header\n\x00")
    with pytest.raises(OSError) as info:
        kr.load_dict({"type": "scene", "mesh": {"type": "ply", "filename": str(ply)}})
    assert "bad.ply" in str(info.value)


def test_bad_render_arguments_raise():
    scene = kr.load_dict(small_scene())
    with pytest.raises(ValueError):
        kr.render(scene, spp=-1)
    with pytest.raises(ValueError):
        kr.render(scene, seed=-1)
    with pytest.raises(TypeError):
        kr.render(scene, integrator=kr.load_dict({"type": "diffuse"}))
    with pytest.raises(IndexError):
        kr.render(scene, sensor=3)
    params = kr.traverse(scene)
    with pytest.raises(KeyError):
        params["no.such.key"]
    # A mesh's arrays may change size (remeshing): the mesh checks them when they are applied.
    floor = kl.Float(params["floor.vertex_positions"])
    params["floor.vertex_positions"] = kl.Float([1.0, 2.0])
    with pytest.raises(ValueError, match="3 values per vertex"):
        params.update()
    params["floor.vertex_positions"] = floor
    params.update()
    params["sensor.film.crop_offset"] = (20, 0)
    with pytest.raises(ValueError, match="the crop window"):
        params.update()


def test_images_round_trip_through_files(tmp_path):
    image = kr.render(kr.load_dict(small_scene()), spp=4)
    kr.write_image(image, str(tmp_path / "out.exr"))
    np.testing.assert_array_equal(np.asarray(kr.read_image(str(tmp_path / "out.exr"))), np.asarray(image))
    kr.write_image(image, str(tmp_path / "out.png"))
    assert kr.read_image(str(tmp_path / "out.png")).shape == (16, 24, 3)


def test_transform4f_chains_like_mitsuba():
    t = kr.Transform4f().translate([1, 2, 3]).scale(2)
    m = t.matrix
    assert [m[0, 0][0], m[0, 3][0], m[2, 3][0]] == [2.0, 1.0, 3.0]
    with pytest.raises(ValueError):
        kr.Transform4f([[1, 0], [0, 1]])
