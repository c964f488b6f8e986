"""Differentiable rendering: kiln.render against Mitsuba 3.9 (variant llvm_ad_rgb), one
optimization iteration (render + loss + backward + Adam) with `prb`, on the same scenes, spp,
seeds and thread count, each measurement in a process of its own (issue 18).

The harness is render_bench.py's (imported from it): the two systems, a fresh kernel cache
directory per process (KILN_CACHE_DIR; DRJIT_CACHE_DIR for Mitsuba), memory settled before
each process, Mitsuba from build/mitsuba-venv (created when missing), the table and its
ratios ("Kiln vs Mitsuba", > 1 where Kiln is ahead).

A first process (Kiln, not measured) writes the assets and renders the targets, so that both
systems fit the same images and no measured process renders anything else:
  iteration   `cornell` (the Cornell box of the render tests) and `mesh` (render_scenes.py's
              torus, glass sphere and checkered floor under a sky), both 128 x 128 with the
              integrator replaced by prb (max_depth 6), 16 spp. The parameters: the Cornell
              box's red and green walls (`left`/`right.bsdf.reflectance.value`), the mesh
              scene's two floor colours (`floor.bsdf.reflectance.color0`/`color1.value`),
              and (`mesh_shape`, issue 30) the mesh scene's torus vertex positions, raised
              by 0.02 (393k coordinates; interior derivatives, Mitsuba's prb's as Kiln's; the
              values shown are the vertices' mean height), and the same vertices with
              `direct_projective` (`mesh_direct_projective`) and `prb_projective` (max_depth 6,
              `mesh_prb_projective`): interior and visibility terms, each system's octree
              guiding (the default) trained every iteration,
              each started away from its true value (START); the target: the scene with its
              true values at 256 spp. Per iteration i: image = render(scene, params, spp,
              seed=i), loss = mean squared difference to the target, backward, an Adam step
              (lr 0.02; 0.002 for the vertices), the values put back into the scene, and the
              loss and the new values read back to the host (so that all the work is done
              inside the iteration, for
              both systems). Measured: scene load; the first iteration (everything compiled);
              the median of the iterations after the first two (warm); kernels compiled in
              iterations 1, 2 and after; the process's peak RSS (ru_maxrss) and Kiln's
              memory_stats().peak_bytes; the first and last loss, and the values after the
              last step. Symbolic mode (one megakernel, both systems' default) and evaluated
              mode (Kiln: the integrator's "mode": "evaluated"; Mitsuba: the flag
              SymbolicLoops off, SymbolicCalls left on: with both off, Mitsuba 3.9.1's prb
              aborts in its first render).
  story       story 1 as examples/inverse_crop.py runs it: the vase of
              examples/scenes/vase_scene.py, its albedo texture (`vase.bsdf.reflectance.data`:
              a kl.Float of h * w * 3 in Kiln, a TensorXf (h, w, 3) in Mitsuba) started at 0.5,
              30 iterations of inverse_crop.iterations_plan (a view of 8, a film of 64-128
              pixels, a crop window in it): each sets `sensor.to_world`, `sensor.film.size`,
              `sensor.film.crop_offset` and `sensor.film.crop_size` through traverse() (both
              systems have the four keys; Mitsuba needs no rebuild), renders the crop with prb
              (max_depth 3) at 8 spp, and takes an Adam step (lr 0.02, constant) on the
              texels against the reference of that view (rendered by Kiln at 64 spp) averaged
              down to the film size and cropped, as inverse_crop.py does; the texels are
              clamped to [0, 1] after each step. Measured: the total time, kernels compiled
              in iterations 1-2 and after, the first and last loss.

Goals (issue 18): warm iteration >= 1.5x Mitsuba's speed, peak memory <= Mitsuba's, no
kernel compiled after the warm-up, story 1 >= 5x faster in total.

    python bench/render_grad_bench.py [--json] [--quick] [--threads N] [--no-mitsuba]

--threads defaults to 2 (or fewer CPUs where the process has fewer). --quick: 32 x 32 at 4
spp, 4 iterations, a story of 6 iterations on films of 24-48 pixels: a smoke run.
"""

import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import render_bench as rb  # puts examples/scenes on sys.path

import render_scenes  # NumPy only, as vase_scene: the Mitsuba process imports both
import vase_scene

Row = rb.Row
FULL = {"scenes": {"cornell": (128, 16), "mesh": (128, 16), "mesh_shape": (128, 16), "mesh_direct_projective": (128, 16),
                   "mesh_prb_projective": (128, 16)}, "iterations": 8,
        "reference_spp": 256,
        "story": 30, "story_size": 128, "story_views": 8, "story_spp": 8, "story_reference_spp": 64}
QUICK = {"scenes": {"cornell": (32, 4), "mesh": (32, 4), "mesh_shape": (32, 4), "mesh_direct_projective": (32, 4),
                    "mesh_prb_projective": (32, 4)}, "iterations": 4,
         "reference_spp": 16,
         "story": 6, "story_size": 48, "story_views": 2, "story_spp": 2, "story_reference_spp": 8}
MAX_DEPTH = 6
LEARNING_RATE = 0.02
SHAPE_LEARNING_RATE = 0.002  # vertex positions: steps of about lr per iteration, against a 0.02 offset
REFERENCE_SEED = 1_000_000  # a seed no iteration uses
START = {  # the optimized parameters and their values at iteration 1 (true values in the comments)
    "cornell": {"left.bsdf.reflectance.value": [0.35, 0.35, 0.35],  # (0.63, 0.065, 0.05)
                "right.bsdf.reflectance.value": [0.35, 0.35, 0.35]},  # (0.14, 0.45, 0.091)
    "mesh": {"floor.bsdf.reflectance.color0.value": [0.45, 0.45, 0.45],  # (0.75, 0.72, 0.66)
             "floor.bsdf.reflectance.color1.value": [0.55, 0.55, 0.55]},  # (0.25, 0.28, 0.33)
    # Issue 30: the torus's 393k vertex coordinates, every vertex raised by 0.02 (a function
    # of the loaded positions); interior derivatives (prb's), as Mitsuba's prb gives.
    "mesh_shape": {"torus.vertex_positions": lambda positions: positions + np.tile([0, 0.02, 0], len(positions) // 3)},
}
# Issue 30: the same vertex positions with the projective integrators (interior and visibility terms).
START["mesh_direct_projective"] = START["mesh_prb_projective"] = START["mesh_shape"]
INTEGRATORS = {"mesh_direct_projective": {"type": "direct_projective"},
               "mesh_prb_projective": {"type": "prb_projective", "max_depth": MAX_DEPTH}}
GEOMETRY = {"mesh_shape", "mesh_direct_projective", "mesh_prb_projective"}  # optimized at SHAPE_LEARNING_RATE


# ----------------------------------------------------------------------------- the two systems


class Optimizing:
    """The optimization written once for both systems: Kiln's and Dr.Jit's array functions
    share their names (mean, square, backward, clip), and both renderers take Mitsuba's
    render(scene, params, spp=, seed=) and an Adam optimizer over scene keys. A subclass sets
    `ad` (kl or dr), `renderer` (kr or mi) and `Adam`, and converts NumPy values (`value`:
    an RGB triple or a bitmap's texels; `tensor`: an image)."""

    def optimizer(self, params, start, lr=LEARNING_RATE):
        """Sets each key of `start` to its NumPy value; an Adam over them, put into the scene."""
        for key, value in start.items():
            if callable(value):
                value = value(np.asarray(params[key], dtype=np.float64).ravel())
            params[key] = self.value(np.asarray(value, dtype=np.float32))
        params.update()
        opt = self.Adam(lr=lr)
        for key in start:
            opt[key] = params[key]
        params.update(opt)
        return opt

    def step(self, scene, params, opt, keys, spp, seed, target, clip):
        """One iteration; returns its loss, read on the host as are the new values of `keys`."""
        image = self.renderer.render(scene, params, spp=spp, seed=seed)
        loss = self.ad.mean(self.ad.square(image - target))
        self.ad.backward(loss)
        opt.step()
        for key in keys if clip else ():
            opt[key] = self.ad.clip(opt[key], 0.0, 1.0)
        params.update(opt)
        for key in keys:
            np.asarray(params[key])
        return float(np.asarray(loss).ravel()[0])


class Kiln(Optimizing, rb.Kiln):
    """kiln.render: render_bench's, with the optimization."""

    def __init__(self, threads):
        super().__init__(threads)
        self.ad, self.renderer, self.Adam = self.kl, self.kr, self.kr.Adam

    def value(self, array):
        return self.kl.Array3f(*array.tolist()) if array.shape == (3,) else self.kl.Float(array.ravel())

    def tensor(self, array):
        return self.kl.TensorXf(np.ascontiguousarray(array, dtype=np.float32))


class Mitsuba(Optimizing, rb.Mitsuba):
    """Mitsuba 3 (llvm_ad_rgb): render_bench's, with the optimization."""

    def __init__(self, threads):
        super().__init__(threads)
        self.ad, self.renderer, self.Adam = self.dr, self.mi, self.mi.ad.Adam

    def load(self, scene, mode):
        """As render_bench's, but evaluated mode keeps SymbolicCalls on: with both flags off,
        Mitsuba 3.9.1's prb aborts in its first render ("jit_assemble(): schedule contains
        variable ... of kind "bitcast" with incompatible size")."""
        loaded = super().load(scene, mode)
        self.dr.set_flag(self.dr.JitFlag.SymbolicCalls, True)
        return loaded

    def value(self, array):
        if array.shape == (3,):
            return self.mi.Color3f(*array.tolist())
        return self.mi.Float(array) if array.ndim == 1 else self.mi.TensorXf(array)

    def tensor(self, array):
        return self.mi.TensorXf(np.ascontiguousarray(array, dtype=np.float32))


# ----------------------------------------------------------------------------- child processes


def bench_scene(name, size):
    """The scene `name` (render_bench's; every `mesh_*` is its mesh scene) with its integrator."""
    scene = rb.scene_dict(name, size, rb.ASSETS)
    scene["integrator"] = dict(INTEGRATORS.get(name, {"type": "prb", "max_depth": MAX_DEPTH}))
    return scene


def story_film(view, film, offset, crop, views):
    """The traverse() changes of one story iteration (Mitsuba's keys and values)."""
    return {"sensor.to_world": vase_scene.view(view, views), "sensor.film.size": [film, film],
            "sensor.film.crop_offset": list(offset), "sensor.film.crop_size": list(crop)}


def prepare(system, spec):
    """(Kiln, not measured) Writes the assets, each scene's target (`<scene>.npy`) and story
    1's plan, starting texture and targets (`story.npz`) into spec["folder"]."""
    sys.path.insert(0, str(rb.ROOT / "examples"))
    import inverse_crop  # needs Kiln: only this process imports it

    folder = Path(spec["folder"])
    render_scenes.write_assets(rb.ASSETS)
    for name, size in spec["scenes"].items():
        scene = system.load(bench_scene(name, size), "symbolic")
        np.save(folder / f"{name}.npy", system.render(scene, spec["reference_spp"], REFERENCE_SEED))
    story = spec["story"]
    problem = inverse_crop.InverseCrop(folder / "vase", story["size"], story["views"], story["reference_spp"],
                                       LEARNING_RATE)  # writes the vase's assets, renders each view's reference
    plan = inverse_crop.iterations_plan(story["iterations"], story["size"], story["views"])
    targets = {f"target_{i}": inverse_crop.downsample(problem.references[view], film)[
        offset[1]:offset[1] + crop[1], offset[0]:offset[0] + crop[0]]
        for i, (view, film, offset, crop) in enumerate(plan)}
    np.savez(folder / "story.npz", plan=np.array([[view, film, *offset, *crop] for view, film, offset, crop in plan]),
             start=np.full(problem.truth.shape, inverse_crop.INITIAL_ALBEDO, dtype=np.float32), **targets)
    return {}


def optimize(system, scene, params, opt, keys, spp, steps, clip=False):
    """Runs one iteration per (traverse() changes or None, target) of `steps`, iteration i
    with seed i; per iteration its seconds, loss and kernels."""
    iterations = []
    for seed, (film, target) in enumerate(steps):
        begin = time.perf_counter()
        if film:
            system.set_film(params, film)
        loss = system.step(scene, params, opt, keys, spp, seed, target, clip)
        iterations.append({"seconds": time.perf_counter() - begin, "loss": loss,
                           **rb.kernel_summary(system.launches())})
    return iterations


def summary(values):
    """An RGB value as it is; vertex positions as the mean height (y) of the vertices."""
    return values.tolist() if len(values) == 3 else [float(values[1::3].mean())]


def measure_iterations(system, spec):
    """The optimization iterations of one scene in one mode."""
    rss_start = rb.rss_bytes()
    start = time.perf_counter()
    scene = system.load(bench_scene(spec["scene"], spec["size"]), spec["mode"])
    load = time.perf_counter() - start
    params = system.traverse(scene)
    target = system.tensor(np.load(Path(spec["folder"]) / f"{spec['scene']}.npy"))
    opt = system.optimizer(params, START[spec["scene"]], SHAPE_LEARNING_RATE if spec["scene"] in GEOMETRY
                           else LEARNING_RATE)
    system.launches()
    iterations = optimize(system, scene, params, opt, list(START[spec["scene"]]), spec["spp"],
                          [(None, target)] * spec["iterations"])
    return {"load_s": load, "iterations": iterations, "rss_start_bytes": rss_start,
            "values": [summary(np.asarray(params[key]).ravel()) for key in START[spec["scene"]]],
            "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "peak_bytes": system.peak_bytes()}


def measure_story(system, spec):
    """Story 1: every iteration a view, film and crop window, then an optimization step."""
    data = np.load(Path(spec["folder"]) / "story.npz")
    story = spec["story"]
    scene = system.load(vase_scene.vase_scene(Path(spec["folder"]) / "vase", story["size"], story["spp"]),
                        "symbolic")
    params = system.traverse(scene)
    opt = system.optimizer(params, {vase_scene.TEXTURE_KEY: data["start"]})
    steps = [(story_film(view, film, (x, y), (width, height), story["views"]), system.tensor(data[f"target_{i}"]))
             for i, (view, film, x, y, width, height) in enumerate(data["plan"].tolist())]
    system.launches()
    start = time.perf_counter()
    iterations = optimize(system, scene, params, opt, [vase_scene.TEXTURE_KEY], story["spp"], steps, clip=True)
    return {"total_s": time.perf_counter() - start, "iterations": iterations}


MEASURES = {"prepare": prepare, "iteration": measure_iterations, "story": measure_story}


# ----------------------------------------------------------------------------- the parent


def measure_all(config, args, mitsuba_python, folder):
    """{system: {"iteration": {(scene, mode): result}, "story": result}} for each system run."""
    systems = {"kiln": sys.executable, "mitsuba": mitsuba_python}
    story = {"iterations": config["story"], "size": config["story_size"], "views": config["story_views"],
             "spp": config["story_spp"], "reference_spp": config["story_reference_spp"]}
    common = {"threads": args.threads, "folder": folder, "story": story}
    with tempfile.TemporaryDirectory(prefix="render-grad-bench-cache-") as cache:
        prepared = rb.run_child("kiln", dict(common, task="prepare", reference_spp=config["reference_spp"],
                                             scenes={name: size for name, (size, _) in config["scenes"].items()}),
                                cache, sys.executable, __file__)
    if "error" in prepared:
        sys.exit(f"render_grad_bench: writing the assets and targets failed: {prepared['error']}")
    results = {system: {"iteration": {}} for system, python in systems.items() if python}
    for scene, (size, spp) in config["scenes"].items():
        for mode in rb.MODES:
            spec = dict(common, task="iteration", scene=scene, size=size, spp=spp, mode=mode,
                        iterations=config["iterations"])
            for system in results:
                with tempfile.TemporaryDirectory(prefix="render-grad-bench-cache-") as cache:
                    results[system]["iteration"][scene, mode] = rb.run_child(system, spec, cache, systems[system],
                                                                             __file__)
    for system in results:
        with tempfile.TemporaryDirectory(prefix="render-grad-bench-cache-") as cache:
            results[system]["story"] = rb.run_child(system, dict(common, task="story"), cache, systems[system],
                                                    __file__)
    return results


def loss_rows(label, kiln, mitsuba, note=""):
    """The first and last loss of each system (results with "iterations"; mitsuba may be None)."""
    def losses(index):
        return [None if r is None else r["iterations"][index]["loss"] for r in (kiln, mitsuba)]

    count = len(kiln["iterations"])
    return [Row(f"{label}: loss, iteration 1", "", *losses(0)),
            Row(f"{label}: loss, iteration {count}", "", *losses(-1),
                note="each system against the same targets; the two should fall alike" + note)]


def shown_values(result):
    """The optimized values after the last step, as `r g b; r g b`."""
    return "; ".join(" ".join(f"{x:.3f}" for x in value) for value in result["values"])


def iteration_rows(label, kiln, mitsuba):
    """The rows of one scene in one mode; `mitsuba` is None without Mitsuba."""
    rows, kiln, mitsuba = rb.without_failures(label, {"run": kiln}, mitsuba and {"run": mitsuba})
    if kiln is None:
        return rows
    results = (kiln["run"], mitsuba and mitsuba["run"])
    warm_up = rb.WARM_UP_ITERATIONS

    def each(summarize):
        return [None if r is None else summarize(r) for r in results]

    def compiled(part):
        return each(lambda r: sum(i["compiled"] for i in r["iterations"][part]))

    count = len(results[0]["iterations"])
    rss_start = each(lambda r: r["rss_start_bytes"] / 1e6)
    return rows + [
        Row(f"{label}: scene load", "s", *each(lambda r: r["load_s"]), "lower"),
        Row(f"{label}: first iteration", "s", *each(lambda r: r["iterations"][0]["seconds"]), "lower",
            note="render + loss + backward + Adam, every kernel compiled"),
        Row(f"{label}: kernels compiled, iteration 1", "", *compiled(slice(0, 1))),
        Row(f"{label}: kernels compiled, iteration 2", "", *compiled(slice(1, 2))),
        Row(f"{label}: compile time, iterations 1-{warm_up}", "ms",
            *each(lambda r: sum(i["compile_ms"] for i in r["iterations"][:warm_up])), "lower"),
        Row(f"{label}: warm iteration", "s",
            *each(lambda r: statistics.median(i["seconds"] for i in r["iterations"][warm_up:])), "lower", goal=1.5,
            note=f"median of iterations {warm_up + 1}-{count}"),
        Row(f"{label}: kernels compiled, iterations {warm_up + 1}-{count}", "", *compiled(slice(warm_up, None)),
            goal="zero"),
        Row(f"{label}: kernels per warm iteration", "", *each(lambda r: r["iterations"][-1]["kernels"])),
        Row(f"{label}: peak RSS of the process", "MB", *each(lambda r: r["rss_peak_bytes"] / 1e6), "lower",
            goal=1.0, note=f"after import: Kiln {rss_start[0]:.0f} MB" +
                           ("" if rss_start[1] is None else f", Mitsuba {rss_start[1]:.0f} MB")),
        Row(f"{label}: Kiln memory_stats peak", "MB", results[0]["peak_bytes"] / 1e6, note="arrays only"),
    ] + loss_rows(label, *results, note=f"\n    values after the last step: Kiln {shown_values(results[0])}" +
                  ("" if results[1] is None else f", Mitsuba {shown_values(results[1])}"))


def main():
    args = rb.parse_args(__doc__, "render_grad_bench", min(2, len(os.sched_getaffinity(0))))
    if args.child:
        rb.child(json.loads(args.child), {"kiln": Kiln, "mitsuba": Mitsuba}, MEASURES)
        return
    config = QUICK if args.quick else FULL
    load_before = os.getloadavg()[0]  # other work on the machine skews every figure: shown in the header
    mitsuba_python, why = (None, "--no-mitsuba") if args.no_mitsuba else rb.find_mitsuba()
    with tempfile.TemporaryDirectory(prefix="render-grad-bench-") as folder:
        results = measure_all(config, args, mitsuba_python, folder)
    kiln, mitsuba = results["kiln"], results.get("mitsuba")
    rows = [] if mitsuba else [Row(f"Mitsuba unavailable: {why}", "", None)]
    for scene, (size, spp) in config["scenes"].items():
        for mode in rb.MODES:
            rows += iteration_rows(f"{scene} {size}x{size} {spp}spp {mode}", kiln["iteration"][scene, mode],
                                   mitsuba and mitsuba["iteration"][scene, mode])
    name = "story 1 optimization"
    rows += rb.story_rows(kiln["story"], mitsuba and mitsuba["story"], config["story"], name, total_goal=5.0,
                          total_note="traverse/update + render + loss + backward + Adam, all iterations")
    if "error" not in kiln["story"] and not (mitsuba and "error" in mitsuba["story"]):
        rows += loss_rows(f"{name}, {config['story']} iterations", kiln["story"], mitsuba and mitsuba["story"])
    rb.report(rows, args, mitsuba_python, load_before,
              f"kiln.render vs Mitsuba {rb.MITSUBA_VERSION} llvm_ad_rgb: one optimization iteration with prb "
              f"(max_depth {MAX_DEPTH}), {args.threads} threads each, each system in processes of its own")


if __name__ == "__main__":
    main()
