"""A path tracer written in Python on kiln.render's scene interfaces, as Mitsuba users write
integrators (Mitsuba's prb.py): scene.ray_intersect, si.bsdf() and its sample / eval_pdf,
scene.sample_emitter_direction, si.emitter(scene).eval, the camera samples of a render and
the film; and the same tracer as a plugin (PathIntegrator, a kr.SamplingIntegrator). It makes the same random decisions as the C++ `path`
integrator in the same order, so with the same seed the two images agree to float rounding;
and it is differentiable like any Kiln code (kl.backward through the loop).

    python examples/python_integrator.py [--spp 16] [--max-depth 6] [--out build/python_integrator.png]
"""

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

import kiln as kl
import kiln.render as kr

ROOT = Path(__file__).resolve().parent.parent


def mis_weight(pdf_a, pdf_b):
    """The power heuristic, a sampling choice without derivatives (0 where not finite)."""
    a, b = kl.detach(pdf_a), kl.detach(pdf_b)
    weight = a * a / (a * a + b * b)
    return kl.select(kl.isfinite(weight), weight, kl.Float(0.0))


def next_2d(rng):
    x = rng.next_float32()
    return kl.Array2f(x, rng.next_float32())


@dataclasses.dataclass
class PathState:
    """One path per lane: the ray to trace next and what the path has gathered so far."""

    o: kl.Array3f
    d: kl.Array3f
    maxt: kl.Float
    throughput: kl.Array3f
    result: kl.Array3f
    eta: kl.Float
    depth: kl.UInt32
    valid: kl.Bool
    prev_p: kl.Array3f
    prev_bsdf_pdf: kl.Float
    prev_bsdf_delta: kl.Bool
    active: kl.Bool
    rng: kl.PCG32
    lane: kl.UInt32


def bounce(scene, s, max_depth, rr_depth, recorder=None):
    """One path vertex: emission found by the last BSDF sample, emitter sampling and a BSDF
    sample (weighted by multiple importance sampling), then Russian roulette. With a
    `recorder` (a kl.Recorder of RECORD_FIELDS), one record per lane that hit a surface."""
    ctx = kr.BSDFContext()
    si = scene.ray_intersect(kr.Ray3f(s.o, s.d, s.maxt), s.active)
    hit = si.is_valid()

    found = scene.hit_direction_sample(si, s.prev_p)
    emitter_pdf = kl.select(s.prev_bsdf_delta, kl.Float(0.0),
                            scene.pdf_emitter_direction(s.prev_p, found, ~s.prev_bsdf_delta))
    emitted = si.emitter(scene).eval(si, s.active & (s.prev_bsdf_pdf > 0.0))
    result = s.result + s.throughput * emitted * mis_weight(s.prev_bsdf_pdf, emitter_pdf)

    continuing = s.active & hit & (s.depth + 1 < max_depth)
    valid = s.valid | (s.active & hit & (found.emitter != 0))

    bsdf = si.bsdf()
    smooth = (bsdf.flags(si) & kr.BSDFFlags.Smooth) != 0
    sample_emitter = continuing & smooth
    rng = s.rng
    ds, emitter_weight = scene.sample_emitter_direction(si, next_2d(rng), True, sample_emitter)
    sample_emitter = sample_emitter & (ds.pdf != 0.0)
    wo = si.to_local(ds.d)

    sample1 = rng.next_float32()
    sample2 = next_2d(rng)
    bsdf_value, bsdf_pdf = bsdf.eval_pdf(ctx, si, wo, continuing)
    bs, bsdf_weight = bsdf.sample(ctx, si, sample1, sample2, continuing)
    emitter_mis = kl.select(ds.delta, kl.Float(1.0), mis_weight(ds.pdf, bsdf_pdf))
    result = kl.select(sample_emitter, result + s.throughput * bsdf_value * emitter_weight * emitter_mis, result)

    if recorder is not None:
        recorder.append(s.active & hit, lane=s.lane, depth=s.depth, p=si.p, n=si.sh_frame.n,
                        wi=si.to_world(si.wi), throughput=kl.detach(s.throughput))
    ray = si.spawn_ray(si.to_world(kl.detach(bs.wo)))
    throughput = s.throughput * bsdf_weight
    eta = s.eta * bs.eta
    valid = valid | (s.active & hit & ((bs.sampled_type & kr.BSDFFlags.Null) == 0))

    depth = kl.select(hit, s.depth + 1, s.depth)
    throughput_max = kl.detach(kl.max(kl.max(throughput.x, throughput.y), throughput.z))
    rr_probability = kl.min(throughput_max * kl.detach(eta * eta), kl.Float(0.95))
    rr_active = depth >= rr_depth
    rr_continue = rng.next_float32() < rr_probability
    throughput = throughput * kl.select(rr_active & (rr_probability > 0.0), 1.0 / rr_probability, kl.Float(1.0))
    active = continuing & (~rr_active | rr_continue) & (throughput_max != 0.0)
    maxt = ray.maxt + kl.zeros(kl.Float, kl.width(s.maxt))
    delta = (bs.sampled_type & kr.BSDFFlags.Delta) != 0
    return PathState(ray.o, ray.d, maxt, throughput, result, eta, depth, valid, si.p, bs.pdf, delta, active, rng, s.lane)


RECORD_FIELDS = {"lane": kl.UInt32, "depth": kl.UInt32, "p": kl.Array3f, "n": kl.Array3f, "wi": kl.Array3f,
                 "throughput": kl.Array3f}


def trace(scene, rng, ray, max_depth=6, rr_depth=5, mode=None, recorder=None):
    """(radiance, valid, rng) of the paths starting with the camera rays `ray`, one per lane
    (lane: the sample's index in a render, pixel * spp + sample, for `recorder`)."""
    lanes = kl.width(ray.o.x)
    zeros3 = kl.Array3f(kl.zeros(kl.Float, lanes), kl.zeros(kl.Float, lanes), kl.zeros(kl.Float, lanes))
    start = PathState(ray.o, ray.d, ray.maxt + kl.zeros(kl.Float, lanes), zeros3 + 1.0, zeros3,
                      kl.full(kl.Float, 1.0, lanes), kl.zeros(kl.UInt32, lanes),
                      kl.full(kl.Bool, scene.environment != 0, lanes), zeros3, kl.full(kl.Float, 1.0, lanes),
                      kl.full(kl.Bool, True, lanes), kl.full(kl.Bool, max_depth > 0, lanes), rng,
                      kl.arange(kl.UInt32, lanes))
    end = kl.while_loop(start, lambda s: s.active, lambda s: bounce(scene, s, max_depth, rr_depth, recorder), mode=mode,
                        name="python_path", max_iterations=max(max_depth, 1))
    return kl.select(end.valid, end.result, kl.Array3f(0.0, 0.0, 0.0)), end.valid, end.rng


def render(scene, spp, seed=0, max_depth=6, rr_depth=5, mode=None, sensor=0, recorder=None):
    """The image of `scene` (its first sensor) traced by the Python path tracer above, from
    the camera samples the C++ integrators trace (kr.camera_samples: sample positions, the
    film's filter). `recorder`, a kl.Recorder(RECORD_FIELDS, capacity), gets one record per
    vertex."""
    sensor = scene.sensors()[sensor]
    film = sensor.film()
    samples = kr.camera_samples(sensor, seed, spp)
    radiance, valid, _ = trace(scene, samples.rng, samples.ray, max_depth, rr_depth, mode, recorder)
    radiance = radiance * samples.weight
    values = [radiance.x, radiance.y, radiance.z]
    if film.has_alpha():
        values.append(kl.select(valid, kl.Float(1.0), kl.Float(0.0)))
    return kr.develop_samples(film, samples, values)


class PathIntegrator(kr.SamplingIntegrator):
    """The same path tracer as a plugin, as Mitsuba users write one: after
    kr.register_integrator("python_path", PathIntegrator), a scene's {'type': 'python_path',
    'max_depth': 6} renders with kr.render like a C++ integrator (the render loop, film and
    derivatives are the C++ ones; sample() is called for the camera rays)."""

    def __init__(self, props):
        kr.SamplingIntegrator.__init__(self, props)
        self.max_depth = props.get("max_depth", 6)
        self.rr_depth = props.get("rr_depth", 5)

    def sample(self, scene, sampler, ray, medium=None, active=True):
        radiance, valid, sampler.rng = trace(scene, sampler.rng, ray, self.max_depth, self.rr_depth)
        return radiance, valid, []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spp", type=int, default=16)
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "python_integrator.png")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "render"))
    import scenes

    description = scenes.cornell_box(scenes.DATA_DIR)
    description["integrator"] = {"type": "path", "max_depth": args.max_depth}
    scene = kr.load_dict(description)
    ours = np.asarray(render(scene, args.spp, seed=3, max_depth=args.max_depth))
    theirs = np.asarray(kr.render(scene, spp=args.spp, seed=3))
    difference = np.abs(ours - theirs).max()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    kr.write_image(kl.TensorXf(np.ascontiguousarray(np.concatenate([ours, theirs], axis=1))), str(args.out))
    print(f"Python path tracer against the C++ path integrator, {args.spp} spp, max_depth {args.max_depth}: "
          f"largest difference {difference:.2e} (image mean {theirs.mean():.4f}); wrote {args.out}")
    if difference > 1e-4 * max(1.0, float(np.abs(theirs).max())):
        sys.exit("the Python path tracer does not match the C++ path integrator")


if __name__ == "__main__":
    main()
