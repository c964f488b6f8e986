"""The scenes of kiln.render's demo, crop-loop example and benchmark, as Mitsuba-style dicts.

- `cornell_box(width, height)`: the Cornell box of tests/render/scenes.py (the scene the
  render tests compare with Mitsuba 3) on a film of the given size.
- `story_films(count, film_range)`: story 1's changes, one dict per iteration of the
  parameters to set through traverse() (Mitsuba's keys): film size, crop window, horizontal
  field of view and camera.
- `caustic_scene(width, height)`: the particle tracer's reference scene of the render tests
  (a glass sphere focusing a spot light onto a floor, an area light, a point light, a dim
  sky), rendered by `ptracer`, on the whole film.
- `mesh_scene(assets, width, height)`: a bumpy torus of `torus_triangles()` triangles
  (a binary PLY with vertex normals) in rough gold (`roughconductor`, GGX), a glass sphere
  (`dielectric`), a checkered floor, lit only by an environment map (an EXR of a sky with a
  sun). `write_assets(assets)` writes both files first (NumPy for the mesh, kr.write_image
  for the EXR, so only that step needs Kiln).

Both dicts are read by `kr.load_dict` as they are, and by Mitsuba's `mi.load_dict` after
`for_mitsuba(scene, mi)` (transforms as nested 4 x 4 lists become Mitsuba transforms).
Importing this module needs only NumPy: the benchmark's Mitsuba process imports it too.
"""

import importlib.util
import math
import random
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ASSETS = ROOT / "build" / "render-scenes"  # where the examples and the benchmark write the files


def _reference_scenes():
    """tests/render/scenes.py, loaded under a name of its own (it has no package)."""
    spec = importlib.util.spec_from_file_location("reference_scenes", ROOT / "tests" / "render" / "scenes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_REFERENCE = _reference_scenes()
for_mitsuba, look_at = _REFERENCE.for_mitsuba, _REFERENCE.look_at
matmul, translate, rotate, scale = _REFERENCE.matmul, _REFERENCE.translate, _REFERENCE.rotate, _REFERENCE.scale
rgb, diffuse, floor, GOLD = _REFERENCE.rgb, _REFERENCE.diffuse, _REFERENCE.floor, _REFERENCE.GOLD

MESH_FILE = "bumpy_torus.ply"
ENVMAP_FILE = "sky.exr"
# The torus: 512 segments around its axis, 128 around its tube, two triangles per quad.
SEGMENTS, RINGS = 512, 128
MAJOR_RADIUS, MINOR_RADIUS, BUMP = 1.0, 0.36, 0.1


def torus_triangles():
    return 2 * SEGMENTS * RINGS


def cornell_box(width, height):
    """The render tests' Cornell box (path tracer, max_depth 6, tent filter) at width x height."""
    scene = _REFERENCE.cornell_box(_REFERENCE.DATA_DIR)
    scene["sensor"]["film"].update(width=width, height=height)
    return scene


def caustic_scene(width, height):
    """The render tests' particle_tracer scene at width x height, without its crop window."""
    scene = _REFERENCE.particle_tracer(_REFERENCE.DATA_DIR)
    film = scene["sensor"]["film"]
    for key in [k for k in film if k.startswith("crop_")]:
        del film[key]
    film.update(width=width, height=height)
    return scene


def story_films(count, film_range):
    """Story 1's settings, the same on every run: per iteration a film of width and height in
    `film_range`, a crop window of at least half of it, a fov of 30-50 degrees and a camera
    turned around the Cornell box."""
    rng = random.Random(2024)
    films = []
    for _ in range(count):
        width, height = rng.randint(*film_range), rng.randint(*film_range)
        crop_width, crop_height = rng.randint(width // 2, width), rng.randint(height // 2, height)
        offset = [rng.randint(0, width - crop_width), rng.randint(0, height - crop_height)]
        camera = look_at([rng.uniform(-1.2, 1.2), rng.uniform(-0.2, 0.2), 3.9], [0, 0, 0], [0, 1, 0])
        films.append({"sensor.film.size": [width, height], "sensor.film.crop_size": [crop_width, crop_height],
                      "sensor.film.crop_offset": offset, "sensor.x_fov": rng.uniform(30.0, 50.0),
                      "sensor.to_world": camera})
    return films


def mesh_scene(assets, width, height):
    """The bumpy gold torus and a glass sphere on a checkered floor under a sky (see the module)."""
    assets = Path(assets)
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 8},
        "sensor": {"type": "perspective", "fov": 38.0,
                   "to_world": look_at([0.0, 2.7, 5.2], [0.15, 0.3, 0.0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": width, "height": height},
                   "sampler": {"type": "independent"}},
        "torus": {"type": "ply", "filename": str(assets / MESH_FILE),
                  "to_world": matmul(translate(-0.55, 0.62, -0.3), rotate([1, 0, 0], 28), scale(0.75)),
                  "bsdf": {"type": "roughconductor", "distribution": "ggx", "alpha": 0.12, **GOLD}},
        "glass": {"type": "sphere", "center": [1.2, 0.5, 0.7], "radius": 0.5,
                  "bsdf": {"type": "dielectric", "int_ior": 1.5, "ext_ior": 1.0}},
        "floor": floor(0.0, 12.0, diffuse({"type": "checkerboard", "color0": rgb(0.75, 0.72, 0.66),
                                           "color1": rgb(0.25, 0.28, 0.33), "to_uv": scale(24, 24, 1)})),
        "sky": {"type": "envmap", "filename": str(assets / ENVMAP_FILE), "to_world": rotate([0, 1, 0], -40)},
    }


def write_assets(assets):
    """Writes the torus PLY and the sky EXR into `assets` (created if missing); returns the folder."""
    import kiln as kl
    import kiln.render as kr

    assets = Path(assets)
    assets.mkdir(parents=True, exist_ok=True)
    _write_ply(assets / MESH_FILE, *_bumpy_torus())
    kr.write_image(kl.TensorXf(sky()), str(assets / ENVMAP_FILE))
    return assets


def _bumpy_torus():
    """(positions, normals, triangles) of a torus around y whose tube radius ripples."""
    phi = np.arange(SEGMENTS) * (2 * np.pi / SEGMENTS)  # around the axis
    theta = np.arange(RINGS) * (2 * np.pi / RINGS)  # around the tube
    phi, theta = np.meshgrid(phi, theta, indexing="ij")

    def surface(phi, theta):
        tube = MINOR_RADIUS * (1 + BUMP * np.sin(9 * phi) * np.sin(5 * theta + 3 * phi))
        ring = MAJOR_RADIUS + tube * np.cos(theta)
        return np.stack([ring * np.cos(phi), tube * np.sin(theta), ring * np.sin(phi)], axis=-1)

    positions = surface(phi, theta)
    step = 1e-4  # normals from the surface's partial derivatives (central differences)
    d_phi = surface(phi + step, theta) - surface(phi - step, theta)
    d_theta = surface(phi, theta + step) - surface(phi, theta - step)
    normals = np.cross(d_theta, d_phi)
    normals /= np.linalg.norm(normals, axis=-1, keepdims=True)

    i, j = np.meshgrid(np.arange(SEGMENTS), np.arange(RINGS), indexing="ij")
    a, b = i * RINGS + j, ((i + 1) % SEGMENTS) * RINGS + j
    c, d = ((i + 1) % SEGMENTS) * RINGS + (j + 1) % RINGS, i * RINGS + (j + 1) % RINGS
    triangles = np.concatenate([np.stack([a, d, c], -1).reshape(-1, 3), np.stack([a, c, b], -1).reshape(-1, 3)])
    return positions.reshape(-1, 3), normals.reshape(-1, 3), triangles


def _write_ply(path, positions, normals, triangles):
    """A binary little-endian PLY: float x y z nx ny nz per vertex, uchar-counted int faces."""
    header = "\n".join(["ply", "format binary_little_endian 1.0", "comment generated by render_scenes.py",
                        f"element vertex {len(positions)}"] +
                       [f"property float {name}" for name in ("x", "y", "z", "nx", "ny", "nz")] +
                       [f"element face {len(triangles)}", "property list uchar int vertex_indices", "end_header"])
    vertices = np.concatenate([positions, normals], axis=1).astype("<f4")
    faces = np.zeros(len(triangles), dtype=[("count", "u1"), ("indices", "<i4", 3)])
    faces["count"], faces["indices"] = 3, triangles
    with open(path, "wb") as f:
        f.write((header + "\n").encode())
        f.write(vertices.tobytes())
        f.write(faces.tobytes())


def sky(width=256, height=128):
    """A latitude-longitude sky (rows from +y down): blue zenith, pale horizon, a hazy ground,
    and a sun 35 degrees above the horizon."""
    elevation = (0.5 - (np.arange(height) + 0.5) / height) * np.pi  # +pi/2 at the top row
    azimuth = (np.arange(width) + 0.5) / width * 2 * np.pi
    elevation, azimuth = np.meshgrid(elevation, azimuth, indexing="ij")
    up = np.clip(np.sin(elevation), 0, 1)[..., None]
    horizon, zenith = np.array([1.0, 0.95, 0.88]), np.array([0.25, 0.45, 0.9])
    sky = horizon + (zenith - horizon) * np.sqrt(up)
    ground = np.array([0.5, 0.47, 0.42])
    image = np.where((elevation > 0)[..., None], sky, ground)
    sun_elevation, sun_azimuth = math.radians(35), math.radians(120)
    cos_angle = (np.sin(elevation) * math.sin(sun_elevation) +
                 np.cos(elevation) * math.cos(sun_elevation) * np.cos(azimuth - sun_azimuth))
    image = image + np.where(cos_angle > math.cos(math.radians(6)), 20.0, 0.0)[..., None] * np.array([1.0, 0.9, 0.75])
    return np.ascontiguousarray(image, dtype=np.float32)
