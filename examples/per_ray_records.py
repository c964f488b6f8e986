"""Story 2: per-ray, per-bounce data out of a loop, and which kernels ran.

Rays scatter through a fog: each bounce moves a ray by a random distance, records
(ray id, depth, position, direction) into a kl.Recorder, picks a new random direction and
ends the path with probability 0.3 (or at MAX_DEPTH). The records leave as NumPy arrays
over the recorder's memory (no copy), ready to be a training set. The loop runs once
symbolically (one kernel that contains the loop) and once evaluated (one kernel per
bounce over the rays still alive); kl.kernel_history() shows which.

    python examples/per_ray_records.py
"""

import dataclasses
import math

import numpy as np

import kiln as kl

RAYS = 4096
MAX_DEPTH = 8
SURVIVAL = 0.7


@dataclasses.dataclass
class Path:
    ray: kl.UInt32
    depth: kl.UInt32
    position: kl.Array3f
    direction: kl.Array3f
    rng: kl.PCG32
    alive: kl.Bool


def random_direction(rng):
    """A uniformly distributed unit vector per lane."""
    z = 1.0 - 2.0 * rng.next_float32()
    r = kl.sqrt(kl.max(1.0 - z * z, kl.Float(0.0)))
    phi = (2.0 * math.pi) * rng.next_float32()
    return kl.Array3f(r * kl.cos(phi), r * kl.sin(phi), z)


def trace(records, mode):
    """Follows RAYS paths, appending one record per ray and bounce."""
    ray = kl.arange(kl.UInt32, RAYS)
    pixel = kl.cast(kl.Float, ray) / float(RAYS)
    zero = kl.zeros(kl.Float, RAYS)
    start = Path(ray=ray, depth=kl.zeros(kl.UInt32, RAYS), position=kl.Array3f(pixel, zero, zero),
                 direction=kl.Array3f(zero, zero, kl.full(kl.Float, 1.0, RAYS)), rng=kl.PCG32(RAYS),
                 alive=ray < RAYS)

    def bounce(path):
        distance = -kl.log(1.0 - path.rng.next_float32())  # exponential free flight
        path.position = path.position + path.direction * distance
        records.append(True, ray=path.ray, depth=path.depth, position=path.position, direction=path.direction)
        path.direction = random_direction(path.rng)
        path.depth = path.depth + 1
        path.alive = (path.rng.next_float32() < SURVIVAL) & (path.depth < MAX_DEPTH)
        return path

    end = kl.while_loop(start, lambda path: path.alive, bounce, mode=mode, name="bounces")
    kl.eval(end.depth)


def run(mode):
    records = kl.Recorder({"ray": kl.UInt32, "depth": kl.UInt32, "position": kl.Array3f,
                           "direction": kl.Array3f}, capacity=RAYS * MAX_DEPTH)
    kl.kernel_history(clear=True)
    trace(records, mode)
    launches = kl.kernel_history(clear=True)
    return records, launches


def main():
    records, launches = run("symbolic")
    count = records.count()
    ray = np.asarray(records["ray"])  # views of the recorder's memory
    depth = np.asarray(records["depth"])
    assert np.shares_memory(ray, np.asarray(records["ray"]))
    position, direction = np.asarray(records["position"]), np.asarray(records["direction"])  # (n, 3)
    print(f"{count} records of {RAYS} rays (capacity {records.capacity}); "
          f"ray and depth are NumPy views of the recorder's memory")
    for d, n in enumerate(np.bincount(depth, minlength=MAX_DEPTH)):
        mean_distance = np.linalg.norm(position[depth == d], axis=1).mean() if n else float("nan")
        print(f"  depth {d}: {n:5d} records, mean distance from the origin {mean_distance:.3f}")
    order = np.lexsort((depth, ray))
    training_set = np.concatenate([position[order], direction[order]], axis=1)
    print(f"training set: {training_set.shape} float32 rows (position, direction), sorted by (ray, depth)")

    print("\nkernels of the symbolic loop (one kernel holds the whole loop and the appends):")
    for launch in launches:
        print(f"  {launch['source']:11s} size {launch['size']:5d}, {launch['ops']:4d} ops, "
              f"{launch['side_effects']} side effects")

    evaluated, evaluated_launches = run("evaluated")
    other = evaluated.numpy()
    same = all(np.array_equal(a[np.lexsort((other['depth'], other['ray']))], b[order])
               for a, b in ((other["ray"], ray), (other["depth"], depth), (other["position"], position)))
    print(f"\nevaluated mode: {len(evaluated_launches)} kernels: each bounce with the next condition over the rays "
          f"still alive, and whenever half of the rays ended, one that "
          f"compacts the rest and one that stores the finished paths; {evaluated.count()} records, "
          f"{'identical' if same else 'DIFFERENT'} after sorting by (ray, depth):")
    for launch in evaluated_launches:
        print(f"  {launch['source']:11s} size {launch['size']:5d}, {launch['ops']:4d} ops, "
              f"{launch['side_effects']} side effects")


if __name__ == "__main__":
    main()
