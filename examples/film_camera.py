"""Story 1's camera program in Python (the same program as film_camera.h): a perspective
camera shades one ray per pixel of a crop window of the film. Film size, crop window, field
of view and the camera-to-world transform are plain Python numbers that change every
iteration; Kiln turns the ones that change into kernel parameters instead of recompiling.
Used by examples/film_loop.py, tests/python/test_story_camera.py and bench/python_bench.py."""

import math
import random
from dataclasses import dataclass, field

import kiln as kl


@dataclass
class CameraSettings:
    """What changes from one iteration to the next."""

    film_width: int = 256
    film_height: int = 256
    crop_offset_x: int = 0
    crop_offset_y: int = 0
    crop_width: int = 256
    crop_height: int = 256
    fov_x: float = 45.0  # horizontal field of view in degrees
    to_world: list = field(default_factory=lambda: [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])


def named(array_type, value, label):
    """A Python number as a labelled Kiln literal (the label names it in compile reasons)."""
    array = array_type(value)
    kl.set_label(array, label)
    return array


def render_crop(s: CameraSettings) -> kl.Float:
    """The shaded crop window: one gray value per pixel, row by row."""
    crop_width = named(kl.UInt32, s.crop_width, "crop_size.x")
    crop_x = named(kl.UInt32, s.crop_offset_x, "crop_offset.x")
    crop_y = named(kl.UInt32, s.crop_offset_y, "crop_offset.y")
    inv_width = named(kl.Float, 1.0 / s.film_width, "1/film_size.x")
    inv_height = named(kl.Float, 1.0 / s.film_height, "1/film_size.y")
    tan_half = math.tan(math.radians(s.fov_x * 0.5))
    scale_x = named(kl.Float, tan_half, "tan(fov_x/2)")
    scale_y = named(kl.Float, tan_half * s.film_height / s.film_width, "tan(fov_y/2)")

    # Pixel coordinates of the crop window on the film, then the camera-space direction.
    pixel = kl.arange(kl.UInt32, s.crop_width * s.crop_height)
    px = pixel % crop_width + crop_x
    py = pixel // crop_width + crop_y
    u = (kl.cast(kl.Float, px) + 0.5) * inv_width
    v = (kl.cast(kl.Float, py) + 0.5) * inv_height
    direction = kl.Array3f((u * 2.0 - 1.0) * scale_x, (1.0 - v * 2.0) * scale_y, kl.Float(1.0))

    to_world = kl.Matrix4f(*(named(kl.Float, value, f"to_world.{i}") for i, value in enumerate(s.to_world)))
    origin = kl.transform_point(to_world, kl.Array3f(0.0, 0.0, 0.0))
    d = kl.normalize(kl.transform_vector(to_world, direction))

    # A unit sphere at the origin, lit from above; sky elsewhere.
    b = kl.dot(origin, d)
    c = kl.dot(origin, origin) - 1.0
    discriminant = b * b - c
    hit = discriminant > 0.0
    t = -b - kl.sqrt(kl.max(discriminant, 0.0))
    normal = kl.normalize(origin + d * t)
    light = kl.normalize(kl.Array3f(0.3, 1.0, 0.5))
    diffuse = kl.max(kl.dot(normal, light), 0.0) * 0.8 + 0.1
    sky = d.y * 0.25 + 0.5
    return kl.select(hit & (t > 0.0), diffuse, sky)


def random_settings(rng: random.Random) -> CameraSettings:
    """A random camera of the kind story 1 describes: random film size, crop window inside
    it, field of view, and a camera orbiting the sphere."""
    s = CameraSettings()
    s.film_width = rng.randrange(96, 256)
    s.film_height = rng.randrange(64, 192)
    s.crop_width = rng.randrange(16, s.film_width)
    s.crop_height = rng.randrange(16, s.film_height)
    s.crop_offset_x = rng.randrange(0, s.film_width - s.crop_width + 1)
    s.crop_offset_y = rng.randrange(0, s.film_height - s.crop_height + 1)
    s.fov_x = rng.uniform(30.0, 70.0)
    angle, distance, height = rng.uniform(-0.6, 0.6), rng.uniform(2.5, 4.0), rng.uniform(-0.5, 0.5)
    ca, sa = math.cos(angle), math.sin(angle)
    # Rotation about y, then a translation back along the viewing direction.
    s.to_world = [ca, 0.0, sa, -sa * distance, 0.0, 1.0, 0.0, height, -sa, 0.0, ca, -ca * distance, 0.0, 0.0, 0.0, 1.0]
    return s
