"""Rays per second of kiln.render's two ray tracers on the CPU, measured in the same process:
Embree 3 called from kernels through host calls (a scene's accel "embree", the CPU default)
and the Kiln BVH, traversed by Kiln code fused into the kernel (accel "kiln", the portable
path that runs on GPUs too).

Queries: closest hit (scene.ray_intersect_preliminary) and any hit (scene.ray_test, shadow
rays) for primary rays (the sensor's, through RAYS film positions) and diffuse bounces
(cosine-weighted directions from where the primary rays hit), on the Cornell box and the
131k-triangle mesh scene (examples/scenes/render_scenes.py). Each figure is the median of
REPEATS evaluations after a warm-up that compiled the kernel. Then one render of each scene
(kr.render, 128 x 128, 16 spp, symbolic mode) with each tracer: what the portable path
costs inside the path tracer. Ratios are Kiln / Embree in rays per second (> 1: the Kiln
BVH is faster), Embree / Kiln in render time.

    python bench/accel_bench.py [--json] [--quick]
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

import kiln as kl
import kiln.render as kr
from timing import median_seconds

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "scenes"))
import render_scenes  # noqa: E402

QUICK = "--quick" in sys.argv
RAYS = 1 << (16 if QUICK else 20)
REPEATS = 3 if QUICK else 5
RENDER_SIZE, RENDER_SPP = (64, 4) if QUICK else (128, 16)


def to_ray(o, d):
    columns = [kl.Float(np.ascontiguousarray(a[:, k], np.float32)) for a in (o, d) for k in range(3)]
    ray = kr.Ray3f(kl.Array3f(*columns[:3]), kl.Array3f(*columns[3:]))
    kl.eval(ray.o, ray.d)
    return ray


def ray_sets(scene):
    """Primary rays and diffuse bounces (NumPy origins and directions) from the sensor."""
    rng = np.random.default_rng(1)
    position = kl.Array2f(kl.Float(rng.random(RAYS, np.float32)), kl.Float(rng.random(RAYS, np.float32)))
    ray, _ = scene.sensors()[0].sample_ray(position)
    o, d = np.asarray(ray.o).copy(), np.asarray(ray.d).copy()
    si = scene.ray_intersect(ray)
    valid = np.asarray(si.is_valid())
    p, n = np.asarray(si.p)[valid], np.asarray(si.n)[valid]
    n *= -np.sign(np.sum(n * d[valid], axis=1, keepdims=True))
    t = np.cross(n, rng.normal(size=n.shape))
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    b = np.cross(n, t)
    r, phi = np.sqrt(rng.random(len(p))), 2 * np.pi * rng.random(len(p))
    bounce = t * (r * np.cos(phi))[:, None] + b * (r * np.sin(phi))[:, None] + n * np.sqrt(1 - r * r)[:, None]
    origin = p + n * 1e-4 * (1 + np.abs(p).max(axis=1, keepdims=True))
    return {"primary": to_ray(o, d), "diffuse": to_ray(origin, bounce)}


def seconds(run):
    return median_seconds(run, REPEATS, settle=0)


def closest(scene, ray):
    def run():
        hit = scene.ray_intersect_preliminary(ray)
        kl.eval(hit.t, hit.prim_uv, hit.prim_index, hit.shape_index)
    return run


def shadow(scene, ray):
    return lambda: kl.eval(scene.ray_test(ray))


def measure(name, scene_dict):
    rows = []
    scenes = {accel: kr.load_dict({**scene_dict, "accel": accel}) for accel in ("embree", "kiln")}
    for kind, ray in ray_sets(scenes["embree"]).items():
        count = len(np.asarray(ray.o.x))
        for query, make in (("closest", closest), ("any", shadow)):
            rate = {accel: count / seconds(make(scene, ray)) for accel, scene in scenes.items()}
            rows.append({"scene": name, "rays": kind, "query": query, "count": count, "embree": rate["embree"],
                         "kiln": rate["kiln"], "ratio": rate["kiln"] / rate["embree"]})
    return rows


def render_row(name, scene_dict):
    times = {}
    for accel in ("embree", "kiln"):
        scene = kr.load_dict({**scene_dict, "accel": accel})
        times[accel] = seconds(lambda: kl.eval(kr.render(scene, spp=RENDER_SPP)))
    return {"scene": name, "embree_s": times["embree"], "kiln_s": times["kiln"],
            "ratio": times["embree"] / times["kiln"]}


def main():
    with tempfile.TemporaryDirectory() as assets:
        render_scenes.write_assets(assets)
        scene_dicts = {"cornell": render_scenes.cornell_box(RENDER_SIZE, RENDER_SIZE),
                       "mesh": render_scenes.mesh_scene(assets, RENDER_SIZE, RENDER_SIZE)}
        rays = [row for name, d in scene_dicts.items() for row in measure(name, d)]
        renders = [render_row(name, d) for name, d in scene_dicts.items()]
    if "--json" in sys.argv:
        print(json.dumps({"rays": rays, "renders": renders}, indent=2))
        return
    print("Ray tracing on the CPU (all cores): Embree through host calls vs the Kiln BVH in Kiln code")
    print(f"{'scene':8} {'rays':8} {'query':8} {'count':>8} {'Embree Mrays/s':>15} {'Kiln Mrays/s':>13} "
          f"{'Kiln/Embree':>12}")
    for r in rays:
        print(f"{r['scene']:8} {r['rays']:8} {r['query']:8} {r['count']:>8} {r['embree'] / 1e6:>15.2f} "
              f"{r['kiln'] / 1e6:>13.2f} {r['ratio']:>11.2f}x")
    print(f"\nkr.render, {RENDER_SIZE} x {RENDER_SIZE}, {RENDER_SPP} spp (median of {REPEATS} after a warm-up)")
    print(f"{'scene':8} {'Embree s':>10} {'Kiln s':>10} {'Embree/Kiln':>12}")
    for r in renders:
        print(f"{r['scene']:8} {r['embree_s']:>10.3f} {r['kiln_s']:>10.3f} {r['ratio']:>11.2f}x")


if __name__ == "__main__":
    main()
