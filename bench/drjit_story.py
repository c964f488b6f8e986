"""Story 1 in Dr.Jit (LLVM backend), for kiln_bench's `story` group to compare against.

The camera of examples/film_camera.h written with drjit.llvm arrays the way a Dr.Jit user
writes it: film size, crop window, field of view and camera-to-world transform are Python
ints and floats, so each becomes a literal baked into the kernel. Runs 30 iterations with
changing cameras and prints one JSON line: the Dr.Jit version, the number of kernels
compiled, their compile time (codegen + LLVM, from dr.kernel_history()), the loop's wall
time and the sum of all pixels (to check that Kiln rendered the same images).

    python3 bench/drjit_story.py [CAMERAS]

CAMERAS is a file with one camera per line, as kiln_bench writes it:
    film_w film_h crop_x crop_y crop_w crop_h fov_x to_world[0..15] (row major)
Without it, 30 random cameras (seed 7) of the same kind. Dr.Jit's disk cache lives in
$HOME/.drjit; HOME is pointed at an empty temporary directory so every compilation is real.
"""
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from array import array

home = tempfile.mkdtemp(prefix="drjit_story_")
os.environ["HOME"] = home  # before Dr.Jit starts: an empty disk cache

import drjit as dr  # noqa: E402
from drjit.llvm import Array3f, Float, UInt32  # noqa: E402

ITERATIONS = 30


class Camera:
    def __init__(self, values):
        self.film_w, self.film_h, self.crop_x, self.crop_y, self.crop_w, self.crop_h = (int(v) for v in values[:6])
        self.fov_x = float(values[6])
        self.to_world = [float(v) for v in values[7:23]]


def random_camera(rng):
    """Like film::random_settings(): random film, crop inside it, fov, orbiting camera."""
    film_w, film_h = 96 + rng.randrange(160), 64 + rng.randrange(128)
    crop_w, crop_h = 16 + rng.randrange(film_w - 16), 16 + rng.randrange(film_h - 16)
    crop_x, crop_y = rng.randrange(film_w - crop_w + 1), rng.randrange(film_h - crop_h + 1)
    angle, distance, height = rng.uniform(-0.6, 0.6), rng.uniform(2.5, 4.0), rng.uniform(-0.5, 0.5)
    ca, sa = math.cos(angle), math.sin(angle)
    to_world = [ca, 0, sa, -sa * distance, 0, 1, 0, height, -sa, 0, ca, -ca * distance, 0, 0, 0, 1]
    return Camera([film_w, film_h, crop_x, crop_y, crop_w, crop_h, rng.uniform(30, 70)] + to_world)


def transform_point(m, p):
    h = [sum(m[4 * r + c] * p[c] for c in range(3)) + m[4 * r + 3] for r in range(4)]
    return [h[r] / h[3] for r in range(3)]


def render_crop(cam):
    """film::render_crop(): the shaded crop window, one gray value per pixel."""
    tan_half = math.tan(cam.fov_x * 0.5 * 3.14159265 / 180)
    scale_x, scale_y = tan_half, tan_half * cam.film_h / cam.film_w

    pixel = dr.arange(UInt32, cam.crop_w * cam.crop_h)
    px, py = pixel % cam.crop_w + cam.crop_x, pixel // cam.crop_w + cam.crop_y
    u, v = (Float(px) + 0.5) * (1 / cam.film_w), (Float(py) + 0.5) * (1 / cam.film_h)
    direction = Array3f((u * 2 - 1) * scale_x, (1 - v * 2) * scale_y, 1)

    m = cam.to_world
    origin = Array3f(*transform_point(m, [0, 0, 0]))
    d = dr.normalize(Array3f(*(sum(m[4 * r + c] * direction[c] for c in range(3)) for r in range(3))))

    b, c = dr.dot(origin, d), dr.dot(origin, origin) - 1
    discriminant = b * b - c
    t = -b - dr.sqrt(dr.maximum(discriminant, 0))
    normal = dr.normalize(origin + d * t)
    light = dr.normalize(Array3f(0.3, 1, 0.5))
    diffuse = dr.maximum(dr.dot(normal, light), 0) * 0.8 + 0.1
    sky = d.y * 0.25 + 0.5
    return dr.select((discriminant > 0) & (t > 0), diffuse, sky)


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            cameras = [Camera(line.split()) for line in f if line.strip()]
    else:
        rng = random.Random(7)
        cameras = [random_camera(rng) for _ in range(ITERATIONS)]

    dr.eval(dr.arange(Float, 8) * 3)  # starts the LLVM backend outside the measurement
    dr.set_flag(dr.JitFlag.KernelHistory, True)
    dr.kernel_history_clear()

    images = []
    start = time.perf_counter()
    for cam in cameras:
        image = render_crop(cam)
        dr.eval(image)
        images.append(image.memview().tobytes())  # read the result back, as Kiln's to_vector()
    wall_s = time.perf_counter() - start

    launches = [k for k in dr.kernel_history() if k["type"] == dr.KernelType.JIT]
    compiled = [k for k in launches if not k["cache_hit"]]
    print(json.dumps({
        "drjit": dr.__version__,
        "launches": len(launches),
        "compilations": len(compiled),
        "compile_ms": sum(k["codegen_time"] + k["backend_time"] for k in compiled),
        "wall_s": wall_s,
        "pixel_sum": sum(sum(array("f", image)) for image in images),
    }))


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(home, ignore_errors=True)
