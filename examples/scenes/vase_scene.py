"""Story 1's inverse-rendering scene: a vase (a lathe surface with texture coordinates) whose
diffuse albedo is a bitmap, under the sky of render_scenes.py, seen from views around it.

- `write_assets(folder, texture)`: the vase OBJ (positions, normals and texture coordinates;
  u runs around the axis, v up the profile, the seam's vertices doubled so u goes 0 -> 1),
  the sky EXR and `texture` (an (h, w, 3) linear RGB array) as an EXR.
- `true_texture(width, height)`: the albedo the references are rendered with: bands, a
  checker, rings and a wave, all in [0.05, 0.95].
- `vase_scene(folder, size, spp, integrator)`: the scene dict (`prb` by default, a box
  pixel filter so that a film of another size is the area average of this one's pixels).
- `view(k, count)`: the camera of view k of `count` around the vase.

kr.load_dict reads the dict as it is; Mitsuba's mi.load_dict after render_scenes.for_mitsuba.
Importing this module needs only NumPy.
"""

import math
from pathlib import Path

import numpy as np

import render_scenes

MESH_FILE, TEXTURE_FILE = "vase.obj", "albedo.exr"
SEGMENTS, RINGS = 96, 48  # around the axis, up the profile
TEXTURE_KEY = "vase.bsdf.reflectance.data"


def profile(t):
    """The vase's radius and height at t in [0, 1] (bottom to top): a closed body, a neck and a lip."""
    height = 1.6 * t
    radius = 0.42 * np.sin(np.pi * np.clip(t / 0.72, 0, 1)) ** 0.6 + 0.14 * np.exp(-((t - 0.86) / 0.1) ** 2)
    radius = np.where(t > 0.72, np.maximum(radius, 0.1 + 0.15 * (t - 0.72) / 0.28), radius)
    return radius * np.sin(np.pi * np.clip(t, 0, 1)) ** 0.15, height


def lathe():
    """(positions, normals, texcoords, triangles) of the vase; poles are single points."""
    t = np.linspace(0.0, 1.0, RINGS + 1)
    u = np.linspace(0.0, 1.0, SEGMENTS + 1)  # the seam: u = 0 and u = 1 are separate vertices
    radius, height = profile(t)
    phi = 2 * np.pi * u
    T, PHI = np.meshgrid(t, phi, indexing="ij")
    R, H = np.meshgrid(radius, u, indexing="ij")[0], np.meshgrid(height, u, indexing="ij")[0]
    positions = np.stack([R * np.cos(PHI), H, -R * np.sin(PHI)], axis=-1)
    # Normals from the profile's slope: perpendicular to (dr, dh) in the meridian plane.
    step = 1e-4
    r_plus, h_plus = profile(np.clip(t + step, 0, 1))
    r_minus, h_minus = profile(np.clip(t - step, 0, 1))
    dr, dh = r_plus - r_minus, h_plus - h_minus
    radial, up = dh / np.hypot(dr, dh), -dr / np.hypot(dr, dh)
    RAD, UP = np.meshgrid(radial, u, indexing="ij")[0], np.meshgrid(up, u, indexing="ij")[0]
    normals = np.stack([RAD * np.cos(PHI), UP, -RAD * np.sin(PHI)], axis=-1)
    normals[0], normals[-1] = [0, -1, 0], [0, 1, 0]
    texcoords = np.stack([np.broadcast_to(u, T.shape), T], axis=-1)
    index = np.arange((RINGS + 1) * (SEGMENTS + 1)).reshape(RINGS + 1, SEGMENTS + 1)
    a, b = index[:-1, :-1], index[:-1, 1:]
    c, d = index[1:, 1:], index[1:, :-1]
    lower = np.stack([a, b, c], -1)[1:].reshape(-1, 3)  # the bottom ring's lower triangles have no area
    upper = np.stack([a, c, d], -1)[:-1].reshape(-1, 3)  # nor the top ring's upper ones
    triangles = np.concatenate([lower, upper])
    return positions.reshape(-1, 3), normals.reshape(-1, 3), texcoords.reshape(-1, 2), triangles


def write_obj(path, positions, normals, texcoords, triangles):
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in positions]
    lines += [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in normals]
    lines += [f"vt {u:.6f} {v:.6f}" for u, v in texcoords]
    lines += ["f " + " ".join(f"{i + 1}/{i + 1}/{i + 1}" for i in tri) for tri in triangles]
    Path(path).write_text("# the vase of examples/scenes/vase_scene.py\n" + "\n".join(lines) + "\n")


def true_texture(width=96, height=48):
    """The albedo to recover: (height, width, 3) linear RGB in [0.05, 0.95]."""
    v, u = np.meshgrid((np.arange(height) + 0.5) / height, (np.arange(width) + 0.5) / width, indexing="ij")
    bands = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * v)
    checker = ((np.floor(u * 12) + np.floor(v * 6)) % 2).astype(np.float64)
    rings = np.exp(-((np.hypot((u * 4) % 1 - 0.5, (v * 2) % 1 - 0.5) - 0.3) / 0.06) ** 2)
    wave = np.abs(v - 0.5 - 0.15 * np.sin(2 * np.pi * 2 * u)) < 0.05
    red = 0.15 + 0.6 * bands + 0.2 * rings
    green = 0.1 + 0.5 * checker * (1 - rings) + 0.3 * wave
    blue = 0.2 + 0.6 * (1 - bands) * (1 - wave) + 0.1 * checker
    return np.clip(np.stack([red, green, blue], axis=-1), 0.05, 0.95).astype(np.float32)


def write_assets(folder, texture):
    """Writes the vase, the sky and `texture` into `folder` (created if missing); returns it."""
    import kiln as kl
    import kiln.render as kr

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_obj(folder / MESH_FILE, *lathe())
    kr.write_image(kl.TensorXf(render_scenes.sky(128, 64)), str(folder / render_scenes.ENVMAP_FILE))
    kr.write_image(kl.TensorXf(np.ascontiguousarray(texture, dtype=np.float32)), str(folder / TEXTURE_FILE))
    return folder


def view(k, count):
    """Camera-to-world of view k of `count`, evenly around the vase, alternately higher and lower."""
    angle = 2 * math.pi * k / count
    height = 1.3 if k % 2 == 0 else 0.4
    return render_scenes.look_at([3.0 * math.sin(angle), height, 3.0 * math.cos(angle)], [0, 0.75, 0], [0, 1, 0])


def vase_scene(folder, size, spp=4, integrator="prb", max_depth=3):
    """The vase on a film of size x size (box filter) under the sky, from view 0."""
    folder = Path(folder)
    return {
        "type": "scene",
        "integrator": {"type": integrator, "max_depth": max_depth},
        "sensor": {"type": "perspective", "fov": 34.0, "to_world": view(0, 1),
                   "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "box"}},
                   "sampler": {"type": "independent", "sample_count": spp}},
        "vase": {"type": "obj", "filename": str(folder / MESH_FILE),
                 "bsdf": {"type": "diffuse",
                          "reflectance": {"type": "bitmap", "filename": str(folder / TEXTURE_FILE)}}},
        "sky": {"type": "envmap", "filename": str(folder / render_scenes.ENVMAP_FILE)},
    }
