"""Story 1 on the renderer: the Cornell box is loaded once, then rendered 20 times, each time
with a new film size, crop window, field of view and camera set through kr.traverse() and
params.update(). Prints per iteration the kernels that were not already in memory, with the
reason Kiln compiled each one; after the first two iterations nothing is compiled (the
script fails if something is). Run it twice: the second process loads its kernels from the
disk cache.

    python examples/render_crop_loop.py [--iterations 20] [--spp 4]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parent / "scenes"))

import render_scenes  # noqa: E402

WARM_UP = 2  # iterations that may compile: the first, and one in which varying values become parameters


def describe(film):
    (width, height), (crop_width, crop_height) = film["sensor.film.size"], film["sensor.film.crop_size"]
    x, y = film["sensor.film.crop_offset"]
    return f"film {width}x{height}, crop {crop_width}x{crop_height} at ({x}, {y}), fov {film['sensor.x_fov']:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--spp", type=int, default=4)
    args = parser.parse_args()
    films = render_scenes.story_films(args.iterations, (128, 256))
    scene = kr.load_dict(render_scenes.cornell_box(256, 256))
    params = kr.traverse(scene)
    kl.kernel_history(clear=True)
    late = 0  # kernels compiled after the warm-up
    for i, film in enumerate(films):
        for key, value in film.items():
            params[key] = value
        params.update()
        start = time.perf_counter()
        image = np.asarray(kr.render(scene, spp=args.spp, seed=i))
        seconds = time.perf_counter() - start
        launches = kl.kernel_history(clear=True)
        compiled = [launch for launch in launches if launch["source"] in ("compiled", "generalized")]
        loaded = sum(launch["source"] == "disk" for launch in launches)
        print(f"iteration {i + 1:2}: {describe(film)}: {len(compiled)} compiled, {loaded} from disk, "
              f"{len(launches) - len(compiled) - loaded} from memory, {seconds * 1e3:.0f} ms, "
              f"image mean {image.mean():.3f}")
        for launch in compiled:
            ms = launch["codegen_ms"] + launch["compile_ms"]
            print(f"    {launch['source']} {launch['hash'][:12]} ({launch['ops']} ops, {ms:.0f} ms): "
                  f"{launch['reason']}")
        if i >= WARM_UP:
            late += len(compiled)
    cache = kl.cache_stats()
    print(f"{args.iterations} iterations: {cache.compiles} kernels compiled ({cache.generalizations} generalized), "
          f"{cache.disk_hits} loaded from disk, {cache.memory_hits} found in memory; "
          f"{late} compiled after iteration {WARM_UP}")
    print("disk cache:", kl.disk_cache_dir() if cache.disk_enabled else cache.disk_problem)
    if late:
        sys.exit(f"story 1 regressed: {late} kernels compiled after the warm-up")


if __name__ == "__main__":
    main()
