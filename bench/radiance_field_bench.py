"""A radiance field optimization step: kiln.render against Mitsuba 3.9 (llvm_ad_rgb) running
the same integrator source, written once against Mitsuba's Python API (issue 29: Mitsuba
users' scripts run with two imports changed).

The integrator is an emission-absorption ray marcher over two 3D textures (a density and 27
spherical-harmonic coefficients, degree 2), written as the radiance field tutorial writes
one: an `ad.integrators.common.RBIntegrator` whose sample() calls `dr.backward_from` at every step of its
`@dr.syntax` loop (Kiln runs those through kl.deferred_backward). Per grid resolution (16,
32, 64), each system in a process of its own (render_bench.py's harness: fresh kernel
caches, memory settled, Mitsuba from build/mitsuba-venv): a ray batch of 128 x 128 pixels of
one 128 x 128 camera, then ITERATIONS of render (1 spp), L1 loss to a constant target,
backward, Adam step (lr 0.05) and params.update(opt), the loss read back each time.
Measured: the first iteration (compilation included), the median warm iteration (after
two), the process's peak RSS, and the first and last losses (both systems start from the
same grids; their random numbers differ, so the losses agree within noise).

    python bench/radiance_field_bench.py [--json] [--quick] [--threads N] [--no-mitsuba]

Ratios: Mitsuba's time / Kiln's, Mitsuba's memory / Kiln's (> 1 where Kiln is ahead).
"""

import json
import os
import resource
import statistics
import sys
import time

import render_bench as harness

RESOLUTIONS = (16, 32, 64)
QUICK_RESOLUTIONS = (8, 16)
ITERATIONS, QUICK_ITERATIONS = 8, 4
FILM = 128


dr = mi = None  # the system's modules (Dr.Jit and Mitsuba, or Kiln), set by measure(): globals,
# because Dr.Jit's @dr.syntax compiles the rewritten method in the module's namespace


def build(resolution):
    """The integrator class and the scene, for the system in `dr` and `mi`."""

    class RadianceField(mi.ad.integrators.common.RBIntegrator):
        def __init__(self, props=mi.Properties()):
            super().__init__(props)
            self.bbox = mi.ScalarBoundingBox3f([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
            self.res = resolution
            self.density = mi.Texture3f(dr.full(mi.TensorXf, 1.0, shape=(resolution,) * 3 + (1,)))
            self.sh = mi.Texture3f(dr.full(mi.TensorXf, 0.1, shape=(resolution,) * 3 + (27,)))

        def emission(self, p, d):
            color = mi.Spectrum(0)
            coefficients = self.sh.eval(p)
            for i, basis in enumerate(dr.sh_eval(d, 2)):
                color += basis * mi.Spectrum(coefficients[3 * i:3 * (i + 1)])
            return dr.clip(color, 0.0, 1.0)

        @dr.syntax
        def sample(self, mode, scene, sampler, ray, δL, state_in, active, **kwargs):
            primal = mode == dr.ADMode.Primal
            ray = mi.Ray3f(ray)
            hit, mint, maxt = self.bbox.ray_intersect(ray)
            active = mi.Bool(active) & hit
            step = mi.Float(1.0 / self.res)
            t = mi.Float(mint) + sampler.next_1d(active) * step
            L = mi.Spectrum(0.0 if primal else state_in)
            δL = mi.Spectrum(δL if δL is not None else 0)
            throughput = mi.Spectrum(1.0)
            while active:
                p = ray(t)
                with dr.resume_grad(when=not primal):
                    transmittance = dr.exp(-dr.maximum(self.density.eval(p)[0], 0.0) * step)
                    emitted = throughput * (1.0 - transmittance) * self.emission(p, ray.d)
                throughput *= transmittance
                L = L + emitted if primal else L - emitted
                with dr.resume_grad(when=not primal):
                    if not primal:
                        dr.backward_from(δL * (L * transmittance / dr.detach(transmittance) + emitted))
                t += step
                active &= (t < maxt) & dr.any(throughput != 0.0)
            return L if primal else δL, mi.Bool(True), [], L

        def traverse(self, cb):
            cb.put("density", self.density.tensor(), mi.ParamFlags.Differentiable)
            cb.put("sh", self.sh.tensor(), mi.ParamFlags.Differentiable)

        def parameters_changed(self, keys):
            self.density.update_inplace()
            self.sh.update_inplace()

    mi.register_integrator("bench_radiance_field", lambda props: RadianceField(props))
    scene = mi.load_dict({"type": "scene", "integrator": {"type": "bench_radiance_field"},
                          "emitter": {"type": "constant"}})
    sensor = mi.load_dict({
        "type": "perspective", "fov": 45,
        "to_world": mi.ScalarTransform4f().look_at(origin=[0.5, 0.5, 2.0], target=[0.5, 0.5, 0.5], up=[0, 1, 0]),
        "film": {"type": "hdrfilm", "width": FILM, "height": FILM, "filter": {"type": "box"},
                 "pixel_format": "rgb"}})
    return scene, sensor


def measure(system, spec):
    """One system's iterations at one grid resolution."""
    global dr, mi
    if system == "kiln":
        import kiln as dr
        import kiln.render as mi
    else:
        import drjit as dr
        import mitsuba as mi
        dr.set_thread_count(spec["threads"])
    mi.set_variant("llvm_ad_rgb")
    scene, sensor = build(spec["resolution"])
    params = mi.traverse(scene.integrator())
    opt = mi.ad.Adam(lr=0.05, params={"density": params["density"], "sh": params["sh"]})
    params.update(opt)
    target = dr.full(mi.TensorXf, 0.3, shape=(FILM, FILM, 3))
    seconds, losses = [], []
    for iteration in range(spec["iterations"]):
        begin = time.perf_counter()
        image = mi.render(scene, params=params, sensor=sensor, spp=1, seed=iteration)
        loss = dr.mean(dr.abs(image - target), axis=None)
        dr.backward(loss)
        opt.step()
        params.update(opt)
        losses.append(float(loss.array[0]))
        seconds.append(time.perf_counter() - begin)
    return {"first_s": seconds[0], "warm_s": statistics.median(seconds[2:]), "first_loss": losses[0],
            "last_loss": losses[-1],
            "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def child(spec):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:spec["threads"]])
    print(harness.RESULT_MARK + json.dumps(measure(spec["system"], spec)))


def rows_for(resolution, kiln, mitsuba):
    label = f"radiance field {resolution}^3"
    rows, kiln, mitsuba = harness.without_failures(label, {"run": kiln}, mitsuba and {"run": mitsuba})
    if kiln is None:
        return rows
    pair = lambda *path, scale=None: harness.values_at({"kiln": kiln, "mitsuba": mitsuba}, "run", *path, scale=scale)
    return rows + [
        harness.Row(f"{label}: first iteration", "s", *pair("first_s"), "lower", note="compilation included"),
        harness.Row(f"{label}: warm iteration", "s", *pair("warm_s"), "lower",
                    note="render + loss + backward + Adam, median after two"),
        harness.Row(f"{label}: peak RSS of the process", "MB", *pair("rss_peak_bytes", scale=1e-6), "lower"),
        harness.Row(f"{label}: first loss", "", *pair("first_loss"), note="the same grids and camera"),
        harness.Row(f"{label}: last loss", "", *pair("last_loss"),
                    note="the same descent; the random numbers differ, so within noise"),
    ]


def main():
    args = harness.parse_args(__doc__, "radiance_field_bench", min(2, len(os.sched_getaffinity(0))))
    if args.child:
        child(json.loads(args.child))
        return
    load_before = os.getloadavg()[0]
    mitsuba_python, why = (None, "--no-mitsuba") if args.no_mitsuba else harness.find_mitsuba()
    iterations = QUICK_ITERATIONS if args.quick else ITERATIONS
    rows = [] if mitsuba_python else [harness.Row(f"Mitsuba unavailable: {why}", "", None)]
    import tempfile
    for resolution in (QUICK_RESOLUTIONS if args.quick else RESOLUTIONS):
        spec = {"resolution": resolution, "iterations": iterations, "threads": args.threads}
        results = {}
        for system, python in (("kiln", sys.executable), ("mitsuba", mitsuba_python)):
            if python:
                with tempfile.TemporaryDirectory() as cache:
                    results[system] = harness.run_child(system, spec, cache, python, script=__file__)
        rows += rows_for(resolution, results["kiln"], results.get("mitsuba"))
    harness.report(rows, args, mitsuba_python, load_before,
                   f"radiance field step, kiln.render vs Mitsuba {harness.MITSUBA_VERSION} llvm_ad_rgb, "
                   f"{args.threads} threads each, {FILM}x{FILM} rays, processes of their own")


if __name__ == "__main__":
    main()
