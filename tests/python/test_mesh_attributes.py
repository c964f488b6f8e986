"""Mesh attributes (Mitsuba's Mesh.add_attribute and the `mesh_attribute` texture) from
Python, as the mesh_io tutorial uses them: attributes added to a mesh, listed by mi.traverse,
read by the texture in both control-flow modes, differentiated, and every misuse refused
with an error that names it. The comparison with Mitsuba's images is the `mesh_attributes`
scene of test_render_references.py; the PLY naming rules are in test_mesh_io.cpp."""

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

N = 24  # vertices of the wavy disk: N - 1 on the fringe, the last at the center


def wavy_disk(attributes=(), bsdf=None):
    """The mesh_io tutorial's wavy disk (a kr.Mesh filled through kr.traverse), with
    `attributes` ((name, channels, values) each) added."""
    theta = np.linspace(0, 2 * np.pi, N)
    positions = np.stack([np.sin(theta), np.cos(theta), 0.4 * np.sin(12 * theta)], axis=1)
    positions[-1] = 0
    idx = np.arange(N - 1)
    faces = np.stack([np.full(N - 1, N - 1), (idx + 1) % (N - 2), idx % (N - 2)], axis=1)
    mesh = kr.Mesh("wavydisk", vertex_count=N, face_count=N - 1)
    params = kr.traverse(mesh)
    params["vertex_positions"] = kl.Float(positions.ravel().astype(np.float32))
    params["faces"] = kl.UInt32(faces.ravel().astype(np.uint32))
    params.update()
    for name, channels, values in attributes:
        mesh.add_attribute(name, channels, values)
    scene = {"type": "scene", "integrator": {"type": "path", "max_depth": 2, "hide_emitters": True},
             "light": {"type": "constant"},
             "sensor": {"type": "perspective", "film": {"type": "hdrfilm", "width": 24, "height": 20},
                        "to_world": kr.ScalarTransform4f().look_at(origin=[0, -5, 5], target=[0, 0, 0], up=[0, 0, 1])},
             "wavydisk": mesh}
    return mesh, scene


def textured_disk(tmp_path, reflectance, mode="symbolic", **extra_attributes):
    """The wavy disk written with attributes and loaded back as a PLY with `reflectance`."""
    colors = np.random.default_rng(1).uniform(0.1, 0.9, 3 * N).tolist()
    mesh, _ = wavy_disk([("vertex_color", 3, colors), ("face_shade", 1, np.linspace(0.2, 0.8, N - 1).tolist())])
    path = tmp_path / "disk.ply"
    mesh.write_ply(str(path))
    disk = kr.load_dict({"type": "ply", "filename": str(path), "bsdf": {"type": "diffuse", "reflectance": reflectance}})
    _, scene = wavy_disk()
    scene["wavydisk"] = disk
    scene["integrator"]["mode"] = mode
    return disk, kr.load_dict(scene)


def test_attributes_render_in_both_modes_and_are_scene_parameters(tmp_path):
    images = {}
    for mode in ("symbolic", "evaluated"):
        disk, scene = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "vertex_color"}, mode)
        images[mode] = np.asarray(kr.render(scene, spp=4, seed=3))
    np.testing.assert_allclose(images["symbolic"], images["evaluated"], rtol=1e-5, atol=1e-6)
    assert images["symbolic"].mean() > 0.02
    params = kr.traverse(scene)
    assert "wavydisk.vertex_color" in params.keys() and "wavydisk.face_shade" in params.keys()
    assert params.flags("wavydisk.vertex_color") == kr.ParamFlags.Differentiable
    assert disk.has_attribute("vertex_color") and not disk.has_attribute("vertex_normal_map")
    # Black vertices make a black disk: the texture reads the updated attribute.
    params["wavydisk.vertex_color"] = kl.zeros(kl.Float, 3 * N)
    params.update()
    darker = np.asarray(kr.render(scene, spp=4, seed=3))
    assert darker.mean() < 0.2 * images["symbolic"].mean()


def test_face_attribute_scaled_is_constant_per_triangle(tmp_path):
    _, vertex = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "face_shade"})
    _, scaled = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "face_shade", "scale": 0.5})
    full = np.asarray(kr.render(vertex, spp=4, seed=3))
    half = np.asarray(kr.render(scaled, spp=4, seed=3))
    # max_depth 2: direct light only, linear in the reflectance.
    np.testing.assert_allclose(half, 0.5 * full, rtol=1e-4, atol=1e-6)


def test_vertex_color_derivatives_match_central_differences(tmp_path):
    _, scene = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "vertex_color"})
    params = kr.traverse(scene)
    key = "wavydisk.vertex_color"
    base = np.asarray(params[key], dtype=np.float64)
    rng = np.random.default_rng(5)
    u = rng.uniform(-0.5, 1.5, base.shape)

    def loss(values):
        params[key] = kl.Float(values.astype(np.float32))
        params.update()
        return float(np.asarray(kr.render(scene, spp=4, seed=7), dtype=np.float64).sum())

    h = 1e-2
    finite = (loss(base + h * u) - loss(base - h * u)) / (2 * h)
    value = kl.Float(base.astype(np.float32))
    kl.enable_grad(value)
    params[key] = value
    params.update()
    image = kr.render(scene, params, spp=4, seed=7, seed_grad=7)
    kl.backward(kl.sum(image.array))
    reverse = float((np.asarray(kl.grad(value), dtype=np.float64) * u).sum())
    assert abs(finite) > 1.0
    assert abs(reverse - finite) <= 2e-3 * abs(finite), (reverse, finite)


def test_add_attribute_refuses_what_mitsuba_refuses():
    mesh, _ = wavy_disk([("vertex_color", 3, [0.5] * (3 * N))])
    with pytest.raises(ValueError, match="must start with 'vertex_' or 'face_'"):
        mesh.add_attribute("color", 3, [0.0] * (3 * N))
    with pytest.raises(ValueError, match=r"attribute 'vertex_weight' of 1 channel\(s\) needs 24 values \(24 vertices\), not 5"):
        mesh.add_attribute("vertex_weight", 1, [0.0] * 5)
    with pytest.raises(ValueError, match="has it already"):
        mesh.add_attribute("vertex_color", 3, [0.0] * (3 * N))
    with pytest.raises(ValueError, match="has it already"):
        mesh.add_attribute("vertex_positions", 3, [0.0] * (3 * N))
    with pytest.raises(ValueError, match="size must be positive"):
        mesh.add_attribute("face_x", 0, [])
    with pytest.raises(ValueError, match="size must not be negative"):
        mesh.add_attribute("face_x", -3, [])
    sphere = kr.load_dict({"type": "sphere"})
    with pytest.raises(TypeError, match="is not a triangle mesh"):
        sphere.add_attribute("vertex_color", 3, [0.0] * 3)
    assert not sphere.has_attribute("vertex_color")


def test_mesh_attribute_texture_misuse_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="must start with 'vertex_' or 'face_'"):
        kr.load_dict({"type": "mesh_attribute", "name": "color"})
    with pytest.raises(ValueError, match="'name'"):
        kr.load_dict({"type": "mesh_attribute"})
    # No shape of the scene has the attribute: an error when the render traces, naming it.
    _, scene = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "vertex_albedo"})
    with pytest.raises(ValueError, match="'vertex_albedo', which no shape of the scene has"):
        kr.render(scene, spp=1)
    # Evaluated outside a scene's shapes.
    texture = kr.load_dict({"type": "mesh_attribute", "name": "vertex_color"})
    with pytest.raises(ValueError, match="only inside a scene's shapes"):
        texture.eval(kr.SurfaceInteraction3f(), True)
    # Where a BSDF needs the texture's mean (as in Mitsuba, it has none).
    with pytest.raises(ValueError, match="has no mean"):
        kr.load_dict({"type": "plastic", "diffuse_reflectance": {"type": "mesh_attribute", "name": "vertex_color"}})
    # As an emitter's value: emitters are sampled at points no ray hit.
    for emitter, key in (("area", "radiance"), ("directionalarea", "radiance"), ("spot", "texture")):
        with pytest.raises(ValueError, match=f"'{key}'.*'mesh_attribute' texture, which reads the shape a ray hits"):
            kr.load_dict({"type": emitter, key: {"type": "mesh_attribute", "name": "vertex_color"}})


def test_an_attribute_of_four_channels_is_refused_when_read_as_a_color(tmp_path):
    mesh, scene = wavy_disk([("vertex_rgba", 4, [0.5] * (4 * N))])
    path = tmp_path / "rgba.ply"
    mesh.write_ply(str(path))  # as rgba_0 ... rgba_3, which Mitsuba's reader (and Kiln's) skip
    disk = kr.load_dict({"type": "ply", "filename": str(path),
                         "bsdf": {"type": "diffuse", "reflectance": {"type": "mesh_attribute", "name": "vertex_rgba"}}})
    assert not disk.has_attribute("vertex_rgba")
    disk.add_attribute("vertex_rgba", 4, [0.5] * (4 * N))  # in memory it exists, but is no color
    scene["wavydisk"] = disk
    with pytest.raises(ValueError, match="has 4 channels; a texture reads 1 \\(gray\\) or 3 \\(RGB\\)"):
        kr.render(kr.load_dict(scene), spp=1)


def test_a_mesh_in_two_scenes_reads_its_attributes_in_each(tmp_path):
    # The texture follows the scene that traces (shape ids differ between the scenes: the
    # second's extra ball is out of sight, so both images are the same), and outlives a
    # scene that is gone.
    disk, scene = textured_disk(tmp_path, {"type": "mesh_attribute", "name": "vertex_color"})
    expected = np.asarray(kr.render(scene, spp=2, seed=1))
    _, other = wavy_disk()
    del other["wavydisk"]
    other["ball"] = {"type": "sphere", "to_world": kr.ScalarTransform4f().translate([5, 5, 5]).scale(0.1)}
    other["wavydisk"] = disk  # now the second shape
    second = kr.load_dict(other)
    np.testing.assert_allclose(np.asarray(kr.render(second, spp=2, seed=1)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(kr.render(scene, spp=2, seed=1)), expected, rtol=1e-5, atol=1e-6)
    del second
    np.testing.assert_allclose(np.asarray(kr.render(scene, spp=2, seed=1)), expected, rtol=1e-5, atol=1e-6)
