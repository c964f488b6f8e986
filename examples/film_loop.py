"""Story 1's optimization loop in Python: 30 renders with a random film size, crop window,
field of view and camera each. Prints every compilation with its reason (from
kl.kernel_history()), then the cache totals. Run it twice: the second process loads its
kernels from the disk cache.   python examples/film_loop.py [--no-generalize]"""

import random
import sys

import kiln as kl
from film_camera import random_settings, render_crop


def main():
    kl.set_flag(kl.Flag.Generalize, "--no-generalize" not in sys.argv)
    rng = random.Random(2024)
    total = sum(kl.sum(render_crop(random_settings(rng))).item() for _ in range(30))
    for launch in kl.kernel_history():
        if launch["reason"] is not None:
            ms = launch["codegen_ms"] + launch["compile_ms"]
            print(f"{launch['source']} {launch['hash']} ({ms:.1f} ms): {launch['reason']}")
    cache = kl.cache_stats()
    print(f"30 iterations (sum of pixels {total:.3f}): {cache.compiles} compiled "
          f"({cache.generalizations} generalized), {cache.memory_hits} memory hits, {cache.disk_hits} disk hits")
    print("disk cache:", kl.disk_cache_dir() if cache.disk_enabled else cache.disk_problem)


if __name__ == "__main__":
    main()
