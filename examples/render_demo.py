"""Renders two scenes with kiln.render into PNG files of the current directory, with a progress
line per render: the kernels it launched (compiled, loaded from the disk cache, found in
memory), their operations, compile and run time.

- cornell_box.png: the Cornell box of the render tests (which agrees with Mitsuba 3), 256 x 256,
  64 samples per pixel.
- mesh_scene.png: a 131k-triangle torus in rough gold and a glass sphere under an environment
  map, 512 x 512, 32 samples per pixel (the mesh and the EXR are written to build/render-scenes
  first: examples/scenes/render_scenes.py).

    python examples/render_demo.py [--spp-scale 1.0]
"""

import argparse
import sys
import time
from pathlib import Path

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parent / "scenes"))

import render_scenes  # noqa: E402


def render(name, scene_dict, spp):
    """Loads and renders one scene, writes `name`, prints its progress line."""
    kl.kernel_history(clear=True)
    start = time.perf_counter()
    scene = kr.load_dict(scene_dict)
    image = kr.render(scene, spp=spp)
    kr.write_image(image, name)
    seconds = time.perf_counter() - start
    launches = kl.kernel_history(clear=True)
    count = {source: sum(launch["source"] == source for launch in launches)
             for source in ("compiled", "generalized", "disk", "memory")}
    compile_ms = sum(launch["codegen_ms"] + launch["compile_ms"] for launch in launches)
    run_ms = sum(launch["run_ms"] for launch in launches)
    height, width = image.shape[:2]
    print(f"{name}: {width}x{height}, {spp} spp: {len(launches)} kernels ({count['compiled'] + count['generalized']} "
          f"compiled, {count['disk']} from disk, {count['memory']} from memory), "
          f"{sum(launch['ops'] for launch in launches)} ops, compile {compile_ms:.0f} ms, run {run_ms:.0f} ms, "
          f"total {seconds:.1f} s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spp-scale", type=float, default=1.0, help="multiplies both scenes' samples per pixel")
    args = parser.parse_args()

    def spp(n):
        return max(1, round(n * args.spp_scale))

    render("cornell_box.png", render_scenes.cornell_box(256, 256), spp(64))
    assets = render_scenes.write_assets(render_scenes.DEFAULT_ASSETS)
    render("mesh_scene.png", render_scenes.mesh_scene(assets, 512, 512), spp(32))


if __name__ == "__main__":
    main()
