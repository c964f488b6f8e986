"""Benchmarks of the Python package, as ratios against baselines run in the same script.

  tracing   Python tracing overhead per operation on a 1,000-op expression over a
            16-element array (Kiln vs Dr.Jit's LLVM backend, and NumPy's eager per-op cost)
  fused     a 10-op fused float32 expression over 10^7 elements: Kiln vs NumPy, and vs
            Dr.Jit's LLVM backend side by side (results checked against NumPy first)
  path      the path tracer of bench/path_workload.h over 2^20 lanes (2^16 with --quick),
            written once below for both libraries: while_loop over up to 16 bounces with
            Russian roulette, and per bounce a call of the lane's material (diffuse, glossy,
            emitter) -- kl.dispatch() over a kl.Registry, dr.switch() for Dr.Jit -- in
            symbolic and in evaluated mode (Dr.Jit's evaluated loop with compress=True, as
            Kiln's runs over the active lanes only). A render is trace + evaluation of the
            radiance; Kiln's peak is memory_stats().peak_bytes of a warm render after
            reset_peak_memory(). Reported, not asserted: the lanes where Kiln's two modes
            differ in any bit (0 expected; a warning on stderr otherwise), and Kiln's radiance
            sum vs Dr.Jit's (same PCG32 streams and operations; equal unless rounding differs)

    python bench/python_bench.py [--json] [--quick]
    python bench/python_bench.py --drjit-cuda   the path tracer on Dr.Jit's CUDA backend only,
                                                one JSON line (the device check runs it)

Ratio = baseline time / Kiln time (> 1: Kiln is faster); for the path tracer's Kiln evaluated
rows, evaluated / symbolic (time and peak memory). Dr.Jit rows appear when `drjit`
is importable. Each system is measured in a phase of its own: Kiln, then NumPy, then
Dr.Jit (imported only then), each figure the median of the timed runs after a warm-up,
so that no runtime's worker threads compete with another's for the two cores.
"""

import importlib.util
import json
import sys
from types import SimpleNamespace

import numpy as np

import timing

try:
    import kiln as kl
except ImportError:  # --drjit-cuda runs Dr.Jit alone (the device check's GPU machine has no Kiln for its Python)
    kl = None

QUICK = "--quick" in sys.argv
TRACE_OPS = 1000
FUSED_SIZE = 10**6 if QUICK else 10**7
REPEATS = 5 if QUICK else 15
TINY = np.linspace(0, 0.25, 16, dtype=np.float32)  # keeps every sqrt argument positive
DATA = np.linspace(-2, 2, FUSED_SIZE, dtype=np.float32)
REFERENCE = None  # the fused expression by NumPy, to check the others against
PATH_LANES = 2**16 if QUICK else 2**20
PATH_REPEATS = 3 if QUICK else 7
PATH_MODES = ("symbolic", "evaluated")


def median_seconds(run, repeats=REPEATS):
    return timing.median_seconds(run, repeats)


def trace_chain(x, sqrt):
    """1,000 operations, none of them folded: * + - / and sqrt in turn."""
    y = x
    for i in range(TRACE_OPS // 5):
        y = sqrt(((y * 1.0001 + 0.5) - x) / 1.5)
    return y


def fused_expression(x, sqrt, abs_):
    """10 operations: 2 + 2 + 2 + 2 + 2."""
    a = x * 1.5 + 0.25
    b = a * a - x
    c = b / (a + 3.0)
    d = sqrt(abs_(c))
    return d * 2.0 - a


def measure(array_type, sqrt, abs_, evaluate, to_numpy):
    """(tracing seconds for the chain, seconds for the fused expression) of one array library."""
    x = array_type(TINY)
    tracing = median_seconds(lambda: trace_chain(x, sqrt))
    big = array_type(DATA)

    def run():
        y = fused_expression(big, sqrt, abs_)
        evaluate(y)
        return y

    np.testing.assert_allclose(to_numpy(run()), REFERENCE, rtol=2e-6, atol=1e-6)
    return tracing, median_seconds(run)


# ---------------------------------------------------------------------------------------
# The path tracer of bench/path_workload.h, once for both libraries: `lib` holds the array
# types and functions (kiln_lib(), drjit_lib()). As there, only + - * /, sqrt, abs,
# comparisons and selects (sin and exp approximated), so both libraries can round alike.

MAX_BOUNCES, ROULETTE_START = 16, 3
DIFFUSE, GLOSSY, EMITTER = 1, 2, 3  # Registry ids, in registration order (dr.switch: id - 1)
PCG32_DEFAULT_STATE = 0x853C49E6748FEA9B


def dot3(a, b):
    return a.x * b.x + a.y * b.y + a.z * b.z


def normalize3(lib, a):
    inverse = 1.0 / lib.sqrt(dot3(a, a))
    return lib.Array3f(a.x * inverse, a.y * inverse, a.z * inverse)


def min_of(lib, a, b):  # written as selects, as in path_workload.h (ties between zeros)
    return lib.select(a < b, a, b)


def max_of(lib, a, b):
    return lib.select(a > b, a, b)


def sin_approx(lib, x):
    """sin(x) for x in [-pi, pi]: a parabola with one correction step."""
    y = x * 1.27323954 - x * lib.abs(x) * 0.405284735
    return (y * lib.abs(y) - y) * 0.225 + y


def cos_approx(lib, x):
    shifted = x + 1.57079633
    return sin_approx(lib, lib.select(shifted > 3.14159265, shifted - 6.28318531, shifted))


def exp_approx(x):
    """exp(x) as (1 + x/256)^256: eight squarings."""
    y = x * 0.00390625 + 1.0
    for _ in range(8):
        y = y * y
    return y


class Diffuse:
    """Lambertian: a cosine-weighted direction around -direction, the throughput tinted."""

    def __init__(self, albedo):
        self.albedo = albedo

    def bounce(self, lib, rng, throughput, radiance, direction):
        u1, u2 = rng.next_float32(), rng.next_float32()
        nx, ny, nz = -direction.x, -direction.y, -direction.z
        sign = lib.select(nz >= 0.0, lib.Float(1.0), lib.Float(-1.0))
        a = -1.0 / (sign + nz)
        b = nx * ny * a
        tx, ty, tz = 1.0 + sign * nx * nx * a, sign * b, -sign * nx  # Duff et al. 2017
        bx, by, bz = b, sign + ny * ny * a, -ny
        r = lib.sqrt(u1)
        phi = u2 * 6.28318531 - 3.14159265
        lx, ly, lz = r * cos_approx(lib, phi), r * sin_approx(lib, phi), lib.sqrt(max_of(lib, 1.0 - u1, lib.Float(0.0)))
        direction = normalize3(lib, lib.Array3f(tx * lx + bx * ly + nx * lz, ty * lx + by * ly + ny * lz,
                                                tz * lx + bz * ly + nz * lz))
        albedo = self.albedo
        throughput = lib.Array3f(throughput.x * albedo * 0.9, throughput.y * albedo * 0.7, throughput.z * albedo * 0.5)
        return rng, throughput, radiance, direction, lib.Bool(True)


class Glossy:
    """The mirror direction jittered by the roughness, weighted by Schlick's Fresnel term."""

    def __init__(self, roughness):
        self.roughness = roughness

    def bounce(self, lib, rng, throughput, radiance, direction):
        u1, u2, u3 = rng.next_float32(), rng.next_float32(), rng.next_float32()
        rough = self.roughness
        direction = normalize3(lib, lib.Array3f(direction.x + (u1 * 2.0 - 1.0) * rough,
                                                direction.y + (u2 * 2.0 - 1.0) * rough,
                                                -direction.z + (u3 * 2.0 - 1.0) * rough))
        c = lib.abs(direction.z)
        k = 1.0 - c
        k2 = k * k
        fresnel = k2 * k2 * k * 0.96 + 0.04
        weight = (fresnel * 0.5 + 0.5) * exp_approx((c - 1.0) * 2.0)
        throughput = lib.Array3f(throughput.x * weight * 0.8, throughput.y * weight * 0.85,
                                 throughput.z * weight * 0.95)
        return rng, throughput, radiance, direction, lib.Bool(True)


class Emitter:
    """Adds throughput * strength * tint to the radiance; the path ends."""

    def __init__(self, strength):
        self.strength = strength

    def bounce(self, lib, rng, throughput, radiance, direction):
        s = self.strength
        radiance = lib.Array3f(radiance.x + throughput.x * s * 1.0, radiance.y + throughput.y * s * 0.85,
                               radiance.z + throughput.z * s * 0.6)
        return rng, throughput, radiance, direction, lib.Bool(False)


MATERIALS = (Diffuse(0.7), Glossy(0.3), Emitter(4.0))  # ids DIFFUSE, GLOSSY, EMITTER


def draw_material(lib, u):
    """10% emitter, 45% diffuse, 45% glossy."""
    return lib.select(u < 0.1, lib.UInt32(EMITTER), lib.select(u < 0.55, lib.UInt32(DIFFUSE), lib.UInt32(GLOSSY)))


def roulette(lib, throughput, u, depth):
    """(the throughput divided by the survival probability, whether the path survives)."""
    p = lib.select(depth < ROULETTE_START, lib.Float(1.0),
                   min_of(lib, max_of(lib, max_of(lib, throughput.x, throughput.y), throughput.z), lib.Float(0.95)))
    return lib.Array3f(throughput.x / p, throughput.y / p, throughput.z / p), u < p


def pixel_coordinate(lib, p):
    return (lib.to_float(p) + 0.5) * 0.001953125 - 1.0


def make_start(lib, n):
    """(generator, direction, material, n) of every path, evaluated: shared by both modes."""
    lane = lib.arange(lib.UInt32, n)
    rng = lib.pcg32(n)
    direction = normalize3(lib, lib.Array3f(pixel_coordinate(lib, lane & 1023), pixel_coordinate(lib, lane >> 10),
                                            lib.full(lib.Float, 1.0, n)))
    material = draw_material(lib, rng.next_float32())
    lib.evaluate(rng.state, rng.inc, direction, material)
    return rng, direction, material, n


def render(lib, start, mode):
    """The radiance of every path (not evaluated: in symbolic mode, not computed yet)."""
    rng, direction, material, n = start
    one, zero = lib.full(lib.Float, 1.0, n), lib.full(lib.Float, 0.0, n)
    state = (rng, lib.Array3f(one, one, one), lib.Array3f(zero, zero, zero), direction, material,
             lib.full(lib.UInt32, 0, n), lib.full(lib.Bool, True, n))

    def bounce(rng, throughput, radiance, direction, material, depth, active):
        rng, throughput, radiance, direction, alive = lib.call(material, (rng, throughput, radiance, direction), mode)
        throughput, survive = roulette(lib, throughput, rng.next_float32(), depth)
        depth = depth + 1
        material = draw_material(lib, rng.next_float32())
        return rng, throughput, radiance, direction, material, depth, alive & survive & (depth < MAX_BOUNCES)

    return lib.while_loop(state, lambda *state: state[-1], bounce, mode)[2]


def path_image(lib, radiance):
    """The radiance as a (3, lanes) float32 NumPy array."""
    return np.stack([np.asarray(lib.numpy(c), dtype=np.float32) for c in (radiance.x, radiance.y, radiance.z)])


def kiln_lib():
    registry = kl.Registry()
    for material in MATERIALS:
        registry.add(material)
    lib = SimpleNamespace(Float=kl.Float, UInt32=kl.UInt32, Bool=kl.Bool, Array3f=kl.Array3f, select=kl.select,
                          sqrt=kl.sqrt, abs=kl.abs, full=kl.full, arange=kl.arange, pcg32=kl.PCG32,
                          to_float=lambda u: kl.cast(kl.Float, u), evaluate=kl.eval, numpy=lambda a: a.numpy())
    lib.while_loop = lambda state, cond, body, mode: kl.while_loop(state, cond, body, mode=mode, name="bounce")
    lib.call = lambda ids, args, mode: kl.dispatch(registry, ids, lambda m, *a: m.bounce(lib, *a), *args,
                                                   mode=mode, name="material")
    return lib


def drjit_lib(dr, drl):
    def evaluate(*arrays):
        dr.eval(*arrays)
        dr.sync_thread()

    def pcg32(n):  # Dr.Jit adds arange(n) to initstate as well as to initseq: undo the former
        return drl.PCG32(n, dr.full(drl.UInt64, PCG32_DEFAULT_STATE, n) - dr.arange(drl.UInt64, n))

    lib = SimpleNamespace(Float=drl.Float, UInt32=drl.UInt32, Bool=drl.Bool, Array3f=drl.Array3f, select=dr.select,
                          sqrt=dr.sqrt, abs=dr.abs, full=dr.full, arange=dr.arange, pcg32=pcg32, to_float=drl.Float,
                          evaluate=evaluate, numpy=np.array)
    targets = [lambda *args, m=m: m.bounce(lib, *args) for m in MATERIALS]

    def call(ids, args, mode):
        with dr.scoped_set_flag(dr.JitFlag.SymbolicCalls, mode == "symbolic"):
            return dr.switch(ids - 1, targets, *args)

    lib.while_loop = lambda state, cond, body, mode: dr.while_loop(state, cond, body, mode=mode, label="bounce",
                                                                   compress=mode == "evaluated")
    lib.call = call
    return lib


def measure_path(lib, start):
    """{mode: (median seconds of a render, its radiance as a (3, lanes) array)}."""
    results = {}
    for mode in PATH_MODES:
        def run():
            radiance = render(lib, start, mode)
            lib.evaluate(radiance.x, radiance.y, radiance.z)
            return radiance

        results[mode] = (median_seconds(run, PATH_REPEATS), path_image(lib, run()))
    return results


def kiln_phase():
    result = measure(kl.Float, kl.sqrt, kl.abs, kl.eval, lambda y: y.numpy())
    assert kl.kernel_history()[-1]["ops"] == 10, "the expression should be one 10-op kernel"
    return (*result, kiln_path())


def kiln_path():
    """The path tracer's {mode: (seconds, radiance)}, {mode: peak bytes of a warm render}
    and the bytes of the start state (in use during every render)."""
    lib = kiln_lib()
    in_use = kl.memory_stats().current_bytes
    start = make_start(lib, PATH_LANES)
    start_bytes = kl.memory_stats().current_bytes - in_use
    results = measure_path(lib, start)
    peaks = {}
    for mode in PATH_MODES:
        kl.reset_peak_memory()
        kl.eval(render(lib, start, mode))
        peaks[mode] = kl.memory_stats().peak_bytes
    return results, peaks, start_bytes


def numpy_phase():
    return median_seconds(lambda: trace_chain(TINY, np.sqrt)), median_seconds(
        lambda: fused_expression(DATA, np.sqrt, np.abs))


def drjit_phase():
    """None when Dr.Jit cannot be imported."""
    try:
        import drjit as dr
        import drjit.llvm as drl
    except ImportError:
        return None

    def evaluate(y):
        dr.eval(y)
        dr.sync_thread()  # Dr.Jit launches asynchronously: wait for the result

    fused = measure(drl.Float, dr.sqrt, dr.abs, evaluate, np.array)
    lib = drjit_lib(dr, drl)
    return (*fused, measure_path(lib, make_start(lib, PATH_LANES)), dr.__version__)


def lanes_differing(a, b):
    """How many lanes of two (3, lanes) float32 images differ in any bit."""
    return int(np.count_nonzero((a.view(np.uint32) != b.view(np.uint32)).any(axis=0)))


def path_rows(kiln_path, drjit_path, version):
    """The path tracer's rows; `drjit_path` is None without Dr.Jit."""
    results, peaks, start_bytes = kiln_path
    label = f"path tracer 2^{PATH_LANES.bit_length() - 1} lanes"
    (symbolic, image), (evaluated, evaluated_image) = results["symbolic"], results["evaluated"]
    differing = lanes_differing(image, evaluated_image)
    if differing:
        print(f"WARNING: Kiln's symbolic and evaluated radiance differ in {differing} of {PATH_LANES} lanes",
              file=sys.stderr)
    rows = [(f"{label}: Kiln symbolic", symbolic * 1e3, "ms", None, f"median of {PATH_REPEATS}"),
            (f"{label}: Kiln evaluated", evaluated * 1e3, "ms", evaluated / symbolic, "ratio: evaluated/symbolic")]
    if drjit_path is not None:
        (drjit_symbolic, drjit_image), (drjit_evaluated, _) = drjit_path["symbolic"], drjit_path["evaluated"]
        rows += [(f"{label}: Dr.Jit {version} LLVM symbolic", drjit_symbolic * 1e3, "ms", drjit_symbolic / symbolic,
                  "dr.while_loop + dr.switch"),
                 (f"{label}: Dr.Jit {version} LLVM evaluated", drjit_evaluated * 1e3, "ms",
                  drjit_evaluated / evaluated, "compress=True")]
    rows += [(f"{label}: Kiln symbolic peak memory", peaks["symbolic"] / 1e6, "MB", None,
              f"memory_stats().peak_bytes; {start_bytes / 1e6:.1f} MB of it the start state"),
             (f"{label}: Kiln evaluated peak memory", peaks["evaluated"] / 1e6, "MB",
              peaks["evaluated"] / peaks["symbolic"], "ratio: evaluated/symbolic"),
             (f"{label}: Kiln modes, lanes differing", differing, "lanes", None,
              "bit-exact" if not differing else "MODES DISAGREE")]
    if drjit_path is not None:
        kiln_sum, drjit_sum = image.sum(dtype=np.float64), drjit_image.sum(dtype=np.float64)
        differ = lanes_differing(image, drjit_image)
        rows.append((f"{label}: Kiln vs Dr.Jit radiance sum", abs(kiln_sum - drjit_sum) / abs(drjit_sum),
                     "rel", None, f"sums {kiln_sum:.9g} vs {drjit_sum:.9g}; " +
                     (f"{differ} lanes differ" if differ else "bit-exact")))
    return rows


def drjit_cuda_path():
    """--drjit-cuda: the path tracer on Dr.Jit's CUDA backend, as one JSON line (the device
    check compares it with `kiln_bench --only control` on the GPU)."""
    import drjit as dr
    import drjit.cuda as drc

    lib = drjit_lib(dr, drc)
    timed = measure_path(lib, make_start(lib, PATH_LANES))
    print(json.dumps({"drjit": dr.__version__, "lanes": PATH_LANES,
                      **{f"{mode}_s": seconds for mode, (seconds, _) in timed.items()}}))


def main():
    if "--drjit-cuda" in sys.argv:
        return drjit_cuda_path()
    global REFERENCE
    REFERENCE = fused_expression(DATA, np.sqrt, np.abs)
    kiln_trace, kiln_fused, kiln_path = kiln_phase()
    numpy_trace, numpy_fused = numpy_phase()
    label = f"fused 10 ops, {FUSED_SIZE:.0e} f32"
    rows = [("tracing: Kiln", kiln_trace / TRACE_OPS * 1e6, "us/op", None),
            ("tracing: NumPy eager (computes, 16 elements)", numpy_trace / TRACE_OPS * 1e6, "us/op",
             numpy_trace / kiln_trace)]
    fused = [(f"{label}: Kiln", kiln_fused * 1e3, "ms", None),
             (f"{label}: NumPy", numpy_fused * 1e3, "ms", numpy_fused / kiln_fused)]
    drjit = drjit_phase() if importlib.util.find_spec("drjit") else None  # the Dr.Jit rows are optional
    drjit_path = version = None
    if drjit is not None:
        drjit_trace, drjit_fused, drjit_path, version = drjit
        rows.append((f"tracing: Dr.Jit {version} LLVM", drjit_trace / TRACE_OPS * 1e6, "us/op", drjit_trace / kiln_trace))
        fused.append((f"{label}: Dr.Jit {version} LLVM", drjit_fused * 1e3, "ms", drjit_fused / kiln_fused))
    rows += fused + path_rows(kiln_path, drjit_path, version)
    if "--json" in sys.argv:
        print(json.dumps([{"benchmark": name, "value": value, "unit": unit, "ratio": ratio, **{"note": n for n in note}}
                          for name, value, unit, ratio, *note in rows], indent=1))
        return
    print(f"{'benchmark':58} {'value':>10}  unit   baseline/Kiln")
    for name, value, unit, ratio, *note in rows:
        shown = f"{value:10.3f}" if value == 0 or abs(value) >= 1e-3 else f"{value:10.2e}"
        print(f"{name:58} {shown}  {unit:5}  {'' if ratio is None else f'{ratio:.2f}x':8} {''.join(note)}".rstrip())
    print(f"(packet width {kl.packet_width()}; Kiln runs on all cores through oneTBB, NumPy on one)")


if __name__ == "__main__":
    main()
