"""Mitsuba's Python names on kiln.render (issue 29): variants, the array type names, Bitmap and
mi.util, mi.ad, and the sensor parameters every Mitsuba scene gives. Expected values are
Mitsuba 3.9.1's behaviour (sRGB encoding and rounding of convert(), channel grouping of
split(), which variants exist), written out here."""

from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr
from kiln.render import mitsuba_variants as variants_module

DATA = Path(__file__).resolve().parents[1] / "render" / "data"


@pytest.fixture
def restore_variant():
    device = kl.default_device()
    current = variants_module._current
    layout = kl.numpy_layout()
    yield
    kl.set_device(device)
    kl.set_numpy_layout(layout)
    variants_module._current = current


def test_rgb_variants_map_to_devices(restore_variant):
    assert {"scalar_rgb", "llvm_ad_rgb"} <= set(kr.variants())
    kr.set_variant("llvm_ad_rgb")
    assert kr.variant() == "llvm_ad_rgb" and kl.default_device() == "cpu"
    kr.set_variant("scalar_rgb")
    assert kr.variant() == "scalar_rgb" and kl.default_device() == "cpu"


def test_set_variant_gives_drjits_numpy_layout(restore_variant):
    colors = kl.Array3f(kl.Float([0.1, 0.2]), 0.5, kl.Float([0.7, 0.8]))
    assert np.asarray(colors).shape == (2, 3) and kl.numpy_layout() == "lanes"
    kr.set_variant("llvm_ad_rgb")
    assert kl.numpy_layout() == "components"
    assert np.allclose(np.array(colors)[0], [0.1, 0.2])  # the red channel, as in Mitsuba
    assert np.array(kl.Matrix3f(1, 2, 3, 4, 5, 6, 7, 8, 9)).shape == (3, 3, 1)
    assert colors.numpy().shape == (2, 3)  # .numpy() keeps Kiln's layout
    with pytest.raises(ValueError, match="'lanes' or 'components'"):
        kl.set_numpy_layout("rows")


def test_set_variant_takes_the_first_usable_name(restore_variant):
    kr.set_variant("cuda_ad_rgb", "llvm_ad_rgb")
    cuda = "cuda_ad_rgb" in kr.variants()
    assert kr.variant() == ("cuda_ad_rgb" if cuda else "llvm_ad_rgb")
    assert kl.default_device() == ("cuda" if cuda else "cpu")


@pytest.mark.parametrize("name, feature", [("scalar_spectral", "spectral"), ("llvm_ad_mono", "monochrome"),
                                           ("cuda_ad_spectral_polarized", "polarization"),
                                           ("llvm_ad_rgbx", "not a variant")])
def test_unsupported_variants_raise_import_error_naming_the_feature(restore_variant, name, feature):
    before = kr.variant()
    with pytest.raises(ImportError, match=feature):
        kr.set_variant(name)
    assert kr.variant() == before


def test_set_variant_argument_errors(restore_variant):
    with pytest.raises(TypeError, match="at least one"):
        kr.set_variant()
    with pytest.raises(TypeError, match="variant names"):
        kr.set_variant(3)


def test_array_type_names_are_kiln_types():
    assert kr.Float is kl.Float and kr.UInt32 is kl.UInt32 and kr.TensorXf is kl.TensorXf
    assert kr.Color3f is kl.Array3f and kr.ScalarPoint3f is kr.Point3f
    for name in ("Point3f", "Vector3f", "Normal3f"):  # kinds of Array3f: transforms tell them apart
        assert issubclass(getattr(kr, name), kl.Array3f)
    assert issubclass(kr.Point2f, kl.Array2f) and kr.Vector3u is kl.Array3u
    assert kr.ScalarTransform4f is kr.Transform4f


def test_color_from_components_and_sequence_arithmetic():
    color = kr.Color3f(0.5, 0.25, 1.0)
    color *= [2.0, 4.0, 0.5]
    assert np.allclose(np.asarray(color).ravel(), [1.0, 1.0, 0.5])
    assert np.allclose(np.asarray(kr.Color3f([1, 2, 3]) - (1, 1, 1)).ravel(), [0, 1, 2])
    with pytest.raises(TypeError):
        kr.Color3f([1.0, 2.0])


def test_bitmap_from_an_array_describes_it():
    pixels = np.linspace(0, 1, 4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
    bitmap = kr.Bitmap(pixels)
    assert (bitmap.width(), bitmap.height(), bitmap.channel_count()) == (5, 4, 3)
    assert bitmap.pixel_format() == kr.Bitmap.PixelFormat.RGB
    assert bitmap.component_format() == kr.Struct.Type.Float32 and not bitmap.srgb_gamma()
    assert np.array_equal(np.array(bitmap), pixels)
    assert np.array_equal(kl.TensorXf(bitmap).numpy(), pixels)
    assert kr.Bitmap(pixels[..., 0]).pixel_format() == kr.Bitmap.PixelFormat.Y


def test_convert_to_8_bit_srgb_rounds_the_encoded_value():
    bitmap = kr.Bitmap(np.array([[[0.0, 0.5, 1.0], [0.002, 0.18, 2.0]]], dtype=np.float32))
    converted = bitmap.convert(component_format=kr.Struct.Type.UInt8, srgb_gamma=True)
    # sRGB(0.5) = 0.7354 -> 188; sRGB(0.002) = 12.92 * 0.002 -> 7 (the linear segment);
    # sRGB(0.18) = 0.4614 -> 118; values above 1 clamp.
    assert np.array(converted).tolist() == [[[0, 188, 255], [7, 118, 255]]]
    assert converted.srgb_gamma() and converted.component_format() == kr.Struct.Type.UInt8
    back = converted.convert(component_format=kr.Struct.Type.Float32, srgb_gamma=False)
    assert np.allclose(np.array(back)[0, 0], [0.0, 0.5, 1.0], atol=3e-3)


def test_convert_channels_as_mitsuba():
    rgb = kr.Bitmap(np.array([[[1.0, 0.0, 0.0]]], dtype=np.float32))
    gray = rgb.convert(kr.Bitmap.PixelFormat.Y)
    assert np.allclose(np.array(gray), 0.212671, atol=1e-6)
    rgba = kr.Bitmap(np.array([[[0.25]]], dtype=np.float32)).convert(kr.Bitmap.PixelFormat.RGBA)
    assert np.array(rgba).tolist() == [[[0.25, 0.25, 0.25, 1.0]]]


def test_split_groups_channels_by_layer():
    data = np.arange(2 * 2 * 5, dtype=np.float32).reshape(2, 2, 5)
    layers = dict(kr.Bitmap(data, channel_names=["A.x", "A.y", "B.x", "B.y", "B.z"]).split())
    assert sorted(layers) == ["A", "B"]
    assert np.array_equal(np.array(layers["B"]), data[..., 2:])
    assert layers["B"].pixel_format() == kr.Bitmap.PixelFormat.MultiChannel
    root = dict(kr.Bitmap(data[..., :3]).split())
    assert list(root) == ["<root>"]


def test_png_and_exr_round_trips(tmp_path):
    pixels = np.random.default_rng(1).random((6, 7, 3)).astype(np.float32)
    kr.util.write_bitmap(tmp_path / "image.exr", kl.TensorXf(pixels))
    exr = kr.Bitmap(str(tmp_path / "image.exr"))
    assert exr.component_format() == kr.Struct.Type.Float32 and np.array_equal(np.array(exr), pixels)
    kr.util.write_bitmap(str(tmp_path / "image.png"), pixels)
    png = kr.Bitmap(tmp_path / "image.png")
    assert png.component_format() == kr.Struct.Type.UInt8 and png.srgb_gamma()
    assert np.array_equal(np.array(png), np.array(kr.util.convert_to_bitmap(pixels)))


def test_bitmap_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        kr.Bitmap(np.zeros((2, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="channel names"):
        kr.Bitmap(np.zeros((2, 2, 3), np.float32), channel_names=["R", "G"])
    with pytest.raises(TypeError, match="numbers"):
        kr.Bitmap(np.array([["a"]]))
    with pytest.raises(TypeError, match="bc must be a mi.FilterBoundaryCondition or a pair"):
        kr.Bitmap(np.zeros((2, 2, 3), np.float32)).resample([4, 4], bc=("repeat", "repeat"))
    with pytest.raises(Exception, match="unknown image format"):
        kr.Bitmap(np.zeros((2, 2, 3), np.float32)).write(str(tmp_path / "image.tga"))
    with pytest.raises(Exception, match="missing.exr"):
        kr.Bitmap(str(tmp_path / "missing.exr"))


def test_mi_ad_names_the_optimizers():
    assert kr.ad.Adam is kr.Adam and kr.ad.SGD is kr.SGD


CBOX_SENSOR = """<scene version="3.0.0">
    <sensor type="perspective" id="sensor">
        <string name="fov_axis" value="smaller"/>
        <float name="near_clip" value="0.001"/>
        <float name="far_clip" value="100.0"/>
        <float name="focus_distance" value="1000"/>
        <float name="fov" value="39.3077"/>
        <film type="hdrfilm">
            <integer name="width" value="8"/>
            <integer name="height" value="8"/>
            <string name="component_format" value="float32"/>
        </film>
    </sensor>
    <shape type="sphere"><bsdf type="diffuse"/></shape>
    <emitter type="constant"/>
</scene>"""


def test_perspective_takes_mitsubas_parameters_and_lists_its_clip_planes():
    scene = kr.load_string(CBOX_SENSOR)
    params = kr.traverse(scene)
    assert np.allclose(np.asarray(params["sensor.near_clip"]), 0.001)
    assert np.allclose(np.asarray(params["sensor.far_clip"]), 100.0)
    near = kr.render(scene, spp=4)
    params["sensor.near_clip"] = 5.0  # inside the unit sphere's distance: nothing is hit before it
    params.update()
    far = kr.render(scene, spp=4)
    assert not np.allclose(np.asarray(near), np.asarray(far))


def test_transforms_apply_by_kind_as_mitsuba():
    t = kr.Transform4f().translate([1.0, 0.0, 0.0]).scale([1.0, 2.0, 1.0])
    assert np.allclose(np.asarray(t @ kr.Point3f(1.0, 1.0, 1.0)).ravel(), [2.0, 2.0, 1.0])
    assert np.allclose(np.asarray(t @ kr.Vector3f(1.0, 1.0, 1.0)).ravel(), [1.0, 2.0, 1.0])
    assert np.allclose(np.asarray(t @ kr.Normal3f(0.0, 1.0, 0.0)).ravel(), [0.0, 0.5, 0.0])
    assert isinstance(t @ [0.0, 0.0, 0.0], kr.Point3f)  # a list is a point, as in Mitsuba
    with pytest.raises(TypeError, match="Point3f"):
        t @ kl.Array3f(1.0, 2.0, 3.0)
    # Arithmetic keeps the kind as Dr.Jit's: the right operand's if it has one.
    assert type(kr.Point3f(1, 2, 3) + kr.Vector3f(1, 1, 1)) is kr.Vector3f
    assert type(2.0 * kr.Point3f(1, 2, 3)) is kr.Point3f and type(-kr.Normal3f(0, 0, 1)) is kr.Normal3f
    # Transform arguments take Kiln vectors as well as lists.
    look = kr.Transform4f().look_at(origin=kr.Point3f(0, 0, 5), target=[0, 0, 0], up=kr.Vector3f(0, 1, 0))
    assert np.allclose(np.asarray(look @ kr.Point3f(0, 0, 0)).ravel(), [0, 0, 5])
    with pytest.raises(TypeError, match="'origin' must be a vector of 3 components"):
        kr.Transform4f().look_at(origin="camera", target=[0, 0, 0], up=[0, 1, 0])


def test_typed_constructors_keep_the_kind():
    points = kl.unravel(kr.Point3f, kl.Float([0, 0, 0, 1, 1, 1]))
    assert type(points) is kr.Point3f and points.size() == 2
    assert type(kl.zeros(kr.Vector3f, 4)) is kr.Vector3f


def test_loaded_objects_are_their_bound_class():
    sensor = kr.load_dict({"type": "perspective", "film": {"type": "hdrfilm", "width": 4, "height": 4}})
    assert isinstance(sensor, kr.Sensor)
    assert isinstance(kr.load_dict({"type": "diffuse"}), kr.BSDF)
    scene = kr.load_string(CBOX_SENSOR)
    image = kr.render(scene, spp=2, sensor=sensor)
    assert image.shape == (4, 4, 3)


def test_scene_parameters_keep_and_items():
    params = kr.traverse(kr.load_string(CBOX_SENSOR))
    params.keep(r"sensor\..*_clip")
    assert sorted(params.keys()) == ["sensor.far_clip", "sensor.near_clip"]
    assert [key for key, _ in params.items()] == params.keys()
    params.keep(["sensor.near"])  # a list of patterns, each matched at the start
    assert params.keys() == ["sensor.near_clip"]
    params.keep(None)
    assert len(params) == 1


def test_warp_functions_take_sequences_as_mitsuba():
    d = kr.warp.square_to_cosine_hemisphere([kl.Float([0.5]), 0.5])
    assert np.allclose(np.asarray(d).ravel(), [0.0, 0.0, 1.0], atol=1e-6)
    assert np.allclose(kr.warp.square_to_cosine_hemisphere_pdf(d).numpy(), 1.0 / np.pi)
    u = kr.warp.square_to_uniform_hemisphere(kl.Array2f(0.25, 0.75))
    assert np.allclose(kl.norm(u).numpy(), 1.0) and np.asarray(u).ravel()[2] >= 0.0
    assert np.allclose(kr.warp.square_to_uniform_sphere_pdf([0.0, 0.0, 1.0]).numpy(), 0.25 / np.pi)
    with pytest.raises(TypeError, match="square_to_uniform_hemisphere\\(\\): sample must be a vector of 2 components"):
        kr.warp.square_to_uniform_hemisphere("samples")


def test_transform_toolbox_values_match_mitsuba():
    # Each expected value was printed by Mitsuba 3.9.1 (scalar_rgb) for the same expression.
    def values(v):
        return np.asarray(v).ravel().tolist()

    frame = kr.Frame3f([0, 0, 1], [0, 1, 0], [1, 0, 0])
    assert values(frame.to_local(kr.Vector3f([3, 2, 1]))) == [1, 2, 3]
    assert np.asarray(kr.Transform3f([3, 2, 3]).matrix).reshape(3, 3).tolist() == [[3] * 3, [2] * 3, [3] * 3]
    assert np.allclose(values(kr.ProjectiveTransform4f().perspective(fov=90, near=0.1, far=10) @ kr.Point3f(2, -2, 2)),
                       [1, -1, 0.959596])
    assert np.allclose(values(kr.Transform4f().orthographic(near=0.1, far=10) @ kr.Point3f(1, 2, 3)), [1, 2, 0.292929])
    wide = kr.Frame3f([0, 0, 1], [0, 2, 0], [3, 0, 0])
    assert values(kr.Transform4f().to_frame(wide) @ kr.Point3f(1, 2, 3)) == [9, 4, 1]
    assert np.allclose(values(kr.Transform4f().from_frame(frame) @ kr.Point3f(3, 2, 1)), [1, 2, 3])
    t = kr.Transform4f().translate([0, 1, 2]) @ kr.Transform4f().scale([1, 2, 3])
    assert values(t @ kr.Vector3f([3, 4, 5])) == [3, 8, 15] and values(t @ kr.Point3f([3, 4, 5])) == [3, 9, 17]
    assert values(kr.Transform4f().scale(2.0).translate([1, 0, 0]) @ kr.Point3f(0, 0, 0)) == [2, 0, 0]
    assert np.allclose(values(kr.Transform3f().translate([1, 2]).rotate(90) @ kr.Point2f(1, 0)), [1, 3])
    assert values(kr.Transform3f().scale(2) @ kr.Vector2f(1, 1)) == [2, 2]
    assert np.allclose(values(kr.Transform3f().translate([1, 2]).inverse() @ kr.Point2f(1, 2)), [0, 0])
    assert np.asarray(kl.Matrix3f(2)).reshape(3, 3).tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    with pytest.raises(TypeError, match="Point2f"):
        kr.Transform3f() @ kl.Array2f(1, 2)
    with pytest.raises(ValueError, match="3 x 3"):
        kr.Transform3f([[1, 2], [3, 4]])


def test_resample_as_mitsuba():
    rng = np.random.default_rng(5)
    pixels = rng.random((8, 6, 3)).astype(np.float32)
    bitmap = kr.Bitmap(pixels)
    box = kr.load_dict({"type": "box"})
    assert isinstance(box, kr.ReconstructionFilter) and box.radius() == 0.5
    assert np.allclose(np.array(bitmap.resample([6, 8], box)), pixels, atol=1e-6)  # same size: unchanged
    halved = np.array(bitmap.resample([3, 4], box))  # a box at half size averages 2 x 2 blocks
    assert np.allclose(halved, pixels.reshape(4, 2, 3, 2, 3).mean(axis=(1, 3)), atol=1e-6)
    constant = kr.Bitmap(np.full((5, 7, 1), 0.25, np.float32))
    for rfilter in (None, kr.load_dict({"type": "tent"}), kr.load_dict({"type": "gaussian"})):
        assert np.allclose(np.array(constant.resample([13, 3], rfilter)), 0.25, atol=1e-6)
    eight_bit = kr.util.convert_to_bitmap(pixels).resample([3, 4], box)
    assert eight_bit.component_format() == kr.Struct.Type.UInt8 and eight_bit.srgb_gamma()
    with pytest.raises(TypeError, match="reconstruction filter"):
        bitmap.resample([3, 4], "box")
    with pytest.raises(ValueError, match="positive"):
        bitmap.resample([0, 4])


def test_bitmap_files_jpeg_hdr_and_named_exr_channels(tmp_path):
    pixels = np.random.default_rng(2).random((6, 5, 3)).astype(np.float32) * 4.0
    kr.Bitmap(pixels).write(tmp_path / "image.hdr")
    hdr = np.array(kr.Bitmap(tmp_path / "image.hdr"))
    # RGBE: one exponent per pixel, 8-bit mantissas (steps of the pixel's largest value / 128).
    assert np.all(np.abs(hdr - pixels) <= pixels.max(axis=2, keepdims=True) / 128.0)
    kr.util.write_bitmap(tmp_path / "image.jpg", np.clip(pixels / 4.0, 0, 1))
    jpeg = kr.Bitmap(tmp_path / "image.jpg")
    assert jpeg.component_format() == kr.Struct.Type.UInt8 and jpeg.srgb_gamma() and (jpeg.width(), jpeg.height()) == (5, 6)
    layers = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    kr.Bitmap(layers, channel_names=["R", "G", "B", "depth.Y", "albedo.R"]).write(tmp_path / "layers.exr")
    read = kr.Bitmap(tmp_path / "layers.exr")
    assert read.pixel_format() == kr.Bitmap.PixelFormat.MultiChannel
    split = dict(read.split())
    assert sorted(split) == ["<root>", "albedo", "depth"]
    assert np.array_equal(np.array(split["<root>"]), layers[..., :3])
    assert np.array_equal(np.array(split["depth"])[..., 0], layers[..., 3])
    read.metadata()["note"] = "kept"
    assert read.metadata() == {"note": "kept"}


def test_cornell_box_loads_as_mitsubas():
    description = kr.cornell_box()
    assert description["sensor"]["film"]["width"] == 256 and description["integrator"]["max_depth"] == 8
    description["sensor"]["film"].update(width=16, height=16)
    image = kr.render(kr.load_dict(description), spp=16)
    # Mitsuba 3.9.1 (llvm_ad_rgb, 256 spp at 256 x 256) gives channel means 0.2402, 0.1411, 0.0600.
    assert np.allclose(np.asarray(image).mean(axis=(0, 1)), [0.2402, 0.1411, 0.0600], rtol=0.15)


@pytest.mark.parametrize("plugin, name", [("area", "radiance"), ("constant", "radiance"), ("point", "intensity"),
                                          ("spot", "intensity"), ("directional", "irradiance")])
def test_an_emitters_uniform_spectrum_is_the_equal_energy_color(plugin, name):
    # Mitsuba 3.9.1 (llvm_ad_rgb) lists [2.40959, 1.89658, 1.81783] for a spectrum of value 2
    # given as emitted value, and keeps plain floats and RGB gray.
    params = kr.traverse(kr.load_dict({"type": plugin, name: {"type": "spectrum", "value": 2.0}}))
    assert np.allclose(np.asarray(params[f"{name}.value"]).ravel(), [2.40959, 1.89658, 1.81783], atol=2e-5)
    params = kr.traverse(kr.load_dict({"type": plugin, name: 2.0}))
    assert np.allclose(np.asarray(params[f"{name}.value"]).ravel(), 2.0)


def test_a_uniform_spectrum_reflectance_stays_gray():
    params = kr.traverse(kr.load_dict({"type": "diffuse", "reflectance": {"type": "spectrum", "value": 0.5}}))
    assert np.allclose(np.asarray(params["reflectance.value"]).ravel(), 0.5)
    xml = '<emitter version="3.0.0" type="constant"><spectrum name="radiance" value="1"/></emitter>'
    params = kr.traverse(kr.load_string(xml))
    assert np.allclose(np.asarray(params["radiance.value"]).ravel(), [1.204794, 0.948291, 0.908916], atol=1e-6)


def wavy_disk(count=100):
    """Mitsuba's mesh tutorial's wavy disk, built in memory with kr.Mesh."""
    theta = kl.linspace(kl.Float, 0.0, kl.two_pi, count)
    x, y = kl.sincos(theta)
    positions = kr.Point3f(x, y, 0.4 * kl.sin(theta * 12.0))
    positions[kl.arange(kl.UInt32, count) == count - 1] = 0.0
    index = kl.arange(kl.UInt32, count - 1)
    faces = kr.Vector3u(count - 1, (index + 1) % (count - 2), index % (count - 2))
    mesh = kr.Mesh("wavydisk", vertex_count=count, face_count=count - 1)
    params = kr.traverse(mesh)
    params["vertex_positions"] = kl.ravel(positions)
    params["faces"] = kl.ravel(faces)
    params.update()
    return mesh


def disk_scene(shape):
    return kr.load_dict({"type": "scene", "light": {"type": "constant"}, "disk": shape, "sensor": {
        "type": "perspective", "to_world": kr.Transform4f().look_at(origin=[0, -5, 5], target=[0, 0, 0], up=[0, 0, 1]),
        "film": {"type": "hdrfilm", "width": 32, "height": 32}}})


def test_a_mesh_built_in_memory_renders_as_its_ply_file(tmp_path):
    mesh = wavy_disk()
    assert (mesh.vertex_count(), mesh.face_count(), mesh.id()) == (100, 99, "wavydisk")
    assert sorted(kr.traverse(mesh).keys()) == ["bsdf.reflectance.value", "faces", "vertex_positions"]
    mesh.write_ply(tmp_path / "disk.ply")
    from_file = kr.load_dict({"type": "ply", "filename": str(tmp_path / "disk.ply"), "face_normals": True})
    assert np.array_equal(np.asarray(kr.traverse(from_file)["faces"]), np.asarray(kr.traverse(mesh)["faces"]))
    image = np.asarray(kr.render(disk_scene(mesh), spp=64))
    # The same triangles, so the same image but where a ray meets an edge exactly: Embree's
    # parallel builds may then report either triangle (each with its own face normal).
    differs = np.abs(image - np.asarray(kr.render(disk_scene(from_file), spp=64))) > 1e-6
    assert differs.mean() < 0.01
    # Mitsuba 3.9.1 renders this mesh (64 x 64, 256 spp) with mean 0.9064.
    assert abs(image.mean() - 0.9064) < 0.01


def test_mesh_errors(tmp_path):
    with pytest.raises(ValueError, match="no faces"):
        kr.Mesh("empty", vertex_count=3, face_count=0)
    unset = kr.Mesh("unset", vertex_count=3, face_count=1)
    assert kr.render(disk_scene(unset), spp=1).shape == (32, 32, 3)  # degenerate: nothing to hit
    unset.write_ply(tmp_path / "flat.ply")
    lamp = kr.load_dict({"type": "ply", "filename": str(tmp_path / "flat.ply"), "face_normals": True,
                         "emitter": {"type": "area", "radiance": 1.0}})
    with pytest.raises(ValueError, match="no area, so it cannot be sampled"):
        kr.render(disk_scene(lamp), spp=1)
    with pytest.raises(TypeError, match="not a triangle mesh"):
        kr.load_dict({"type": "sphere"}).write_ply(tmp_path / "sphere.ply")
    with pytest.raises(TypeError, match="props"):
        kr.Mesh("named", 3, 1, props={"bsdf": None})


def test_film_bitmap_world_transform_and_render_with_another_integrator():
    scene = kr.load_string(CBOX_SENSOR)
    sensor = scene.sensors()[0]
    with pytest.raises(ValueError, match="nothing was rendered"):
        sensor.film().bitmap()
    image = kr.render(scene, spp=2)
    bitmap = sensor.film().bitmap()
    assert bitmap.pixel_format() == kr.Bitmap.PixelFormat.RGB and np.array_equal(np.array(bitmap), np.asarray(image))
    assert np.allclose(np.asarray(sensor.world_transform().matrix).reshape(4, 4), np.eye(4))
    aov = kr.load_dict({"type": "aov", "aovs": "dd:depth,nn:sh_normal"})
    channels = kr.render(scene, spp=2, integrator=aov)
    assert channels.shape == (8, 8, 4)
    names = [name for name, _ in sensor.film().bitmap().split()]
    assert names == ["dd", "nn"]
    assert kr.render(scene, spp=0).shape == (8, 8, 3)  # 0: the sampler's count, as Mitsuba
    kl.set_flag(kl.Flag.Symbolic, True)
    assert np.array_equal(np.asarray(kr.render(scene, None, 0, None, 3)), np.asarray(kr.render(scene, seed=3)))


def test_file_resolver_finds_scene_files_in_its_folders(tmp_path):
    folder = tmp_path / "assets"
    folder.mkdir()
    kr.Mesh("tri", 3, 1).write_ply(folder / "tri.ply")
    resolver = kr.file_resolver()
    before = len(resolver)
    with pytest.raises(OSError, match="tri.ply"):
        kr.load_dict({"type": "ply", "filename": "tri.ply"})
    resolver.append(str(folder))
    try:
        assert len(resolver) == before + 1 and str(resolver[before]) == str(folder)
        assert str(resolver.resolve("tri.ply")) == str(folder / "tri.ply")
        assert kr.load_dict({"type": "ply", "filename": "tri.ply", "face_normals": True}).face_count() == 1
        xml = '<shape version="3.0.0" type="ply"><string name="filename" value="tri.ply"/></shape>'
        assert kr.load_string(xml).face_count() == 1
        assert str(resolver.resolve("/absolute/missing.ply")) == "/absolute/missing.ply"
    finally:
        resolver.clear()
    assert len(resolver) == 0


def test_bounding_box_ray_intersect_as_mitsuba():
    box = kr.ScalarBoundingBox3f([0, 0, 0], [1, 1, 1])
    # (origin, direction) -> (hit, mint, maxt), as Mitsuba 3.9.1 gives them
    cases = [([0.5, 0.5, 5], [0, 0, 1], True, -5.0, -4.0), ([0.5, 0.5, -5], [0, 0, 1], True, 5.0, 6.0),
             ([2, 0.5, -5], [0, 0, 1], False, None, None), ([0.5, 0.5, 0.5], [0, 0, 1], True, -0.5, 0.5),
             ([0.5, 0.5, -5], [0.0, 0.1, 1], True, 5.0, 5.0)]
    for origin, direction, hit, mint, maxt in cases:
        h, t0, t1 = box.ray_intersect(kr.Ray3f(kr.Point3f(origin), kr.Vector3f(direction)))
        assert bool(np.asarray(h)[0]) == hit
        if hit:
            assert float(np.asarray(t0)[0]) == pytest.approx(mint) and float(np.asarray(t1)[0]) == pytest.approx(maxt)
    assert box.valid() and not kr.BoundingBox3f().valid()
    np.testing.assert_allclose(np.asarray(box.center()).ravel(), [0.5, 0.5, 0.5])
    inside = box.contains(kr.Point3f(kl.Float([0.5, 1.5]), kl.Float([0.5, 0.5]), kl.Float([0.5, 0.5])))
    assert list(np.asarray(inside)) == [True, False]
    grown = kr.BoundingBox3f([0, 0, 0])
    grown.expand([1, 2, 3])
    np.testing.assert_allclose(np.asarray(grown.extents()).ravel(), [1, 2, 3])


def test_texture3f_keeps_its_tensor_object_and_reads_it_again_on_update_inplace():
    texture = kr.Texture3f(kl.full(kl.TensorXf, 1.0, shape=(2, 2, 2, 1)))
    tensor = texture.tensor()
    assert texture.tensor() is tensor and tensor.shape == (2, 2, 2, 1)
    p = kr.Point3f(0.5, 0.5, 0.5)
    texture.set_tensor(kl.full(kl.TensorXf, 3.0, shape=(4, 4, 4, 1)))
    assert texture.shape == (4, 4, 4, 1) and float(np.asarray(texture.eval(p)[0])[0]) == pytest.approx(3.0)
    ray = kr.Ray3f(kl.Array3f(1.0, 2.0, 3.0), kl.Array3f(0.0, 0.0, 1.0))
    copy = kr.Ray3f(ray)
    np.testing.assert_allclose(np.asarray(copy(2.0)).ravel(), [1.0, 2.0, 5.0])
    assert kr.python.ad.integrators.common.RBIntegrator is kr.ad.RBIntegrator
    assert kr.ad.common.ADIntegrator is kr.ad.ADIntegrator


def test_images_given_in_memory_load_as_their_files_do(tmp_path):
    rng = np.random.default_rng(3)
    pixels = rng.uniform(0.1, 0.9, (6, 8, 3)).astype(np.float32)
    path = str(tmp_path / "texture.exr")
    kr.write_image(kl.TensorXf(pixels), path)

    def render(texture, emitter=None):
        description = kr.cornell_box()
        description["red"]["reflectance"] = texture
        description["sensor"]["film"].update(width=24, height=24)
        if emitter is not None:
            description["sky"] = emitter
        return np.asarray(kr.render(kr.load_dict(description), spp=4, seed=2))

    from_file = render({"type": "bitmap", "filename": path})
    np.testing.assert_array_equal(render({"type": "bitmap", "data": kl.TensorXf(pixels)}), from_file)
    np.testing.assert_array_equal(render({"type": "bitmap", "data": pixels}), from_file)  # a NumPy array too
    np.testing.assert_array_equal(render({"type": "bitmap", "bitmap": kr.Bitmap(pixels)}), from_file)
    sky = render({"type": "bitmap", "filename": path}, {"type": "envmap", "filename": path})
    np.testing.assert_array_equal(render({"type": "bitmap", "data": pixels}, {"type": "envmap", "bitmap": kr.Bitmap(pixels)}),
                                  sky)

    encoded = kr.Bitmap(np.full((2, 2, 3), 128, np.uint8), srgb_gamma=True)
    linear = kr.traverse(kr.load_dict({"type": "bitmap", "bitmap": encoded}))["data"]
    assert float(np.asarray(linear).flat[0]) == pytest.approx(0.2158605, abs=1e-6)  # sRGB 128/255 decoded
    raw = kr.traverse(kr.load_dict({"type": "bitmap", "bitmap": encoded, "raw": True}))["data"]
    assert float(np.asarray(raw).flat[0]) == pytest.approx(128 / 255, abs=1e-6)

    with pytest.raises(ValueError, match="'filename' and 'data' exclude each other"):
        kr.load_dict({"type": "bitmap", "filename": path, "data": pixels})
    with pytest.raises(ValueError, match="needs an image"):
        kr.load_dict({"type": "bitmap"})
    with pytest.raises(ValueError, match=r"shape \(height, width\[, channels\]\)"):
        kr.load_dict({"type": "bitmap", "data": kl.TensorXf(np.zeros((2, 2, 2, 2), np.float32))})
    with pytest.raises(TypeError, match="expected float, found image"):
        kr.load_dict({"type": "perspective", "fov": pixels})


def test_d65_is_white_and_other_spectra_are_refused_by_name():
    emitter = kr.load_dict({"type": "constant", "radiance": {"type": "d65", "scale": 2.0}})
    np.testing.assert_allclose(np.asarray(kr.traverse(emitter)["radiance.value"]).ravel(), [2.0, 2.0, 2.0])
    scene = kr.load_string("""<scene version="3.0.0"><emitter type="constant">
        <spectrum type="d65" name="radiance"><float name="scale" value="0.5"/></spectrum></emitter></scene>""")
    constant = [e for e in scene.emitters()][0]
    np.testing.assert_allclose(np.asarray(kr.traverse(constant)["radiance.value"]).ravel(), [0.5, 0.5, 0.5])
    for kind in ("blackbody", "regular", "irregular"):
        with pytest.raises(ValueError, match=f"'{kind}' spectrum is spectral data"):
            kr.load_dict({"type": "constant", "radiance": {"type": kind}})
    with pytest.raises(ValueError, match="takes only 'scale'"):
        kr.load_dict({"type": "constant", "radiance": {"type": "d65", "temperature": 3}})
    # The same rules as the XML loader's (one C++ rule for both), each naming the key path.
    with pytest.raises(ValueError, match=r"\['radiance'\]: an 'rgb' value has 3 numbers \(or 1 for gray\), not 2"):
        kr.load_dict({"type": "constant", "radiance": {"type": "rgb", "value": [1, 2]}})
    with pytest.raises(ValueError, match=r"\['radiance'\]\['value'\] is spectral data"):
        kr.load_dict({"type": "constant", "radiance": {"type": "spectrum", "value": [400, 0.5, 700, 0.6]}})
    # Mitsuba's own dict forms of spectral data: refused as such, before their values are read.
    with pytest.raises(ValueError, match=r"\['radiance'\]\['value'\] is spectral data"):
        kr.load_dict({"type": "constant", "radiance": {"type": "spectrum", "value": [(400, 0.5), (700, 0.6)]}})
    with pytest.raises(ValueError, match="'regular' spectrum is spectral data"):
        kr.load_dict({"type": "constant", "radiance": {"type": "regular", "wavelength_min": 400, "values": "1, 2"}})
    assert np.asarray(kr.traverse(kr.load_dict({"type": "constant", "radiance": {"type": "spectrum", "value": 2}}))[
        "radiance.value"]).ravel()[0] > 1.5


def test_load_dict_refers_to_nested_dicts_by_key_path_as_well_as_by_id():
    # The caustics tutorial refers to {'simple-glass': {..., 'id': 'simple-glass-bsdf'}} as
    # 'simple-glass'; Mitsuba's load_dict also declares nested paths ('ball.bsdf').
    scene = kr.load_dict({
        "type": "scene",
        "glass-key": {"type": "dielectric", "id": "glass-id"},
        "ball": {"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.2}}},
        "by_key": {"type": "sphere", "center": [3, 0, 0], "bsdf": {"type": "ref", "id": "glass-key"}},
        "by_id": {"type": "sphere", "center": [6, 0, 0], "bsdf": {"type": "ref", "id": "glass-id"}},
        "by_path": {"type": "sphere", "center": [9, 0, 0], "bsdf": {"type": "ref", "id": "ball.bsdf"}},
    })
    bsdfs = [repr(shape.bsdf()) for shape in scene.shapes()]
    assert "'dielectric' id 'glass-id'" in bsdfs[1] and bsdfs[1] == bsdfs[2]
    assert "diffuse" in bsdfs[3] and "['ball']['bsdf']" in bsdfs[3] and bsdfs[3] == bsdfs[0]
    with pytest.raises(ValueError, match="declared twice"):
        kr.load_dict({"type": "scene", "a": {"type": "diffuse", "id": "b"}, "b": {"type": "diffuse"}})


def test_scalar_rgb_module_and_textures_from_load_dict():
    from kiln.render.scalar_rgb import Transform4f, Point3f

    assert Transform4f is kr.ScalarTransform4f and Point3f is kr.ScalarPoint3f
    texture = kr.load_dict({"type": "bitmap", "filename": str(DATA / "texture.png"), "format": "variant"})
    assert isinstance(texture, kr.Texture)
    si = kl.zeros(kr.SurfaceInteraction3f, 2)
    si.uv = kr.Point2f([0.1, 0.6], [0.3, 0.9])
    rgb, gray = texture.eval(si), texture.eval_1(si)
    assert type(rgb) is kr.Color3f and rgb.x.size() == 2
    np.testing.assert_allclose(gray.numpy(), (0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z).numpy(), rtol=1e-3)
    with pytest.raises(ValueError, match="'format'.*\"half\""):
        kr.load_dict({"type": "bitmap", "filename": str(DATA / "texture.png"), "format": "half"})


def test_bitmap_data_is_a_tensor_parameter_as_in_mitsuba():
    texture = kr.load_dict({"type": "bitmap", "filename": str(DATA / "texture.png")})
    params = kr.traverse(texture)
    assert type(params["data"]) is kr.TensorXf and params["data"].shape == (16, 16, 3)
    params["data"] = kl.full(kr.TensorXf, 0.5, (4, 8, 1))  # another resolution, one channel
    params.update()
    assert texture.eval(kl.zeros(kr.SurfaceInteraction3f, 1)).x.numpy().tolist() == [0.5]
    params["data"] = kl.full(kr.Float, 0.25, 32)  # as many entries as the tensor: its shape stays
    params.update()
    assert params["data"].shape == (4, 8, 1)
    params["data"] = kl.full(kr.TensorXf, 0.5, (4, 4, 2))
    with pytest.raises(ValueError, match="1 or 3 channels, got \\(4, 4, 2\\)"):
        params.update()
    assert params["data"].shape == (4, 8, 1)  # the refused value did not stay


def test_bitmap_resample_boundary_conditions_match_mitsuba():
    # A 4 x 3 ramp resampled with each boundary condition; Mitsuba 3.9.1 (scalar_rgb) printed
    # these values for the same calls.
    B = kr.FilterBoundaryCondition
    bitmap = kr.Bitmap(np.arange(12, dtype=np.float32).reshape(3, 4, 1) / 7.0 + 0.1)
    tent = kr.load_dict({"type": "tent"})
    expected = {
        ("Repeat", (7, 5), tent): [0.42041, 0.37959, 0.46122, 0.54286, 0.62449, 0.70612, 0.66531],
        ("Mirror", (7, 5), None): [0.15511, 0.17358, 0.27277, 0.35719, 0.44160, 0.54079, 0.55927],
        ("Zero", (7, 5), None): [0.02239, 0.07764, 0.14765, 0.21796, 0.28887, 0.39431, 0.33565],
        ("One", (2, 2), tent): [0.54603, 0.72063],
    }
    for (name, res, rfilter), first_row in expected.items():
        condition = getattr(B, name)
        image = np.array(bitmap.resample(list(res), rfilter, (condition, condition)))
        np.testing.assert_allclose(image[0].ravel(), first_row, atol=2e-5, err_msg=name)
    zero_last = np.array(bitmap.resample([7, 5], None, (B.Zero, B.Zero)))[-1].ravel()
    np.testing.assert_allclose(zero_last, [0.88000, 1.20809, 1.19323, 1.26213, 1.33445, 1.52476, 1.19327], atol=2e-5)
    # One condition for both axes, and x and y apart (Clamp across, Zero down: the top row
    # darkens, the left column does not).
    same = np.array(bitmap.resample([7, 5], tent, B.Repeat))
    np.testing.assert_allclose(same, np.array(bitmap.resample([7, 5], tent, (B.Repeat, B.Repeat))))
    mixed = np.array(bitmap.resample([8, 6], tent, (B.Clamp, B.Zero)))
    clamped = np.array(bitmap.resample([8, 6], tent))
    assert (mixed[0] < clamped[0] - 1e-3).all() and np.allclose(mixed[2:4], clamped[2:4], atol=1e-6)
