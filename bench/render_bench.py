"""kiln.render against Mitsuba 3.9 (variant llvm_ad_rgb) on the same scenes, spp, seed and
thread count, each measurement in a process of its own (so kernel caches and JIT state are
per process).

Scenes (examples/scenes/render_scenes.py): `cornell`, the Cornell box of the render tests at
256 x 256, 64 spp; `mesh`, a 131k-triangle bumpy torus in rough gold, a glass sphere and a
checkered floor under an environment map, at 512 x 512, 16 spp; `caustic`, the particle
tracer (`ptracer`: light paths splatted into the film) on the render tests' caustic scene at
256 x 256, 16 light paths per pixel. Each in symbolic mode (one
megakernel: Kiln's default; Mitsuba's too) and evaluated mode (wavefront: the integrator's
`"mode": "evaluated"` for Kiln; for Mitsuba the flags SymbolicLoops and SymbolicCalls off).

For each scene, mode and system, two processes share a fresh kernel cache directory
(KILN_CACHE_DIR; DRJIT_CACHE_DIR for Mitsuba); before each, the script touches and frees
4 GB so that every process finds free memory in the same state (settle_memory):
  cold     the first image (scene load + first render, everything compiled), then warm
           renders: the median of a few, samples per second; the process's peak RSS
           (ru_maxrss) and, for Kiln, memory_stats().peak_bytes; kernels compiled and their
           compile time; kernels launched per warm render and their operations (Kiln:
           kernel_history()'s `ops`; Mitsuba: dr.kernel_history()'s `operation_count`)
  second   the first image of a second process: kernels come from the disk cache
Story 1 (the Cornell box, symbolic mode, fresh cache): 30 renders, each after changing the
film size, crop offset and size, the field of view and the camera through traverse() and
update(); the kernels compiled in the first two iterations and in the rest, and the time.

Ratios are "Kiln vs Mitsuba" with > 1 meaning Kiln is ahead: Mitsuba's time / Kiln's time,
Kiln's samples/s / Mitsuba's, Mitsuba's peak memory / Kiln's. The goals of issue 17 are
checked where they apply: warm render >= 1.2x, cold first image >= 1.0x, second process
>= 3x, no kernel compiled after the story's first two iterations.

Mitsuba comes from $KILN_BENCH_MITSUBA_PYTHON (an interpreter with mitsuba 3.9.1), this
interpreter, or build/mitsuba-venv, which is created with pip (mitsuba==3.9.1,
drjit==1.5.0) when missing; Dr.Jit needs $DRJIT_LIBLLVM_PATH, else the newest
/usr/lib/llvm-*/lib/libLLVM*.so* is used. Without Mitsuba the table says why and shows
Kiln's figures alone.

    python bench/render_bench.py [--json] [--quick] [--threads N] [--no-mitsuba]

--quick: 64 x 64 and 96 x 96 at 8 and 4 spp, 2 warm renders, a story of 8 small renders.
"""

import argparse
import functools
import glob
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "scenes"))

import render_scenes  # noqa: E402  (NumPy only: the Mitsuba process imports it too)

MITSUBA_VERSION, DRJIT_VERSION = "3.9.1", "1.5.0"
MITSUBA_VENV = ROOT / "build" / "mitsuba-venv"
ASSETS = render_scenes.DEFAULT_ASSETS
RESULT_MARK = "RENDER_BENCH_RESULT "
MODES = ("symbolic", "evaluated")
SCENES = ("cornell", "mesh", "caustic")
FULL = {"cornell": (256, 64), "mesh": (512, 16), "caustic": (256, 16), "repeats": 3, "story": 30, "story_spp": 4,
        "story_film": (128, 256)}
QUICK = {"cornell": (64, 8), "mesh": (96, 4), "caustic": (64, 4), "repeats": 2, "story": 8, "story_spp": 2,
         "story_film": (32, 64)}
SETTLE_BYTES = 4 << 30  # more than the largest measured process touches
WARM_UP_ITERATIONS = 2  # story 1: compilations are allowed in the first two iterations only


# ----------------------------------------------------------------------------- the two systems


class Kiln:
    """kiln.render behind the interface the measurements use (its worker threads follow
    the process's CPU affinity, which child() sets)."""

    def __init__(self, threads):
        import kiln as kl
        import kiln.render as kr
        self.kl, self.kr = kl, kr
        kl.kernel_history(clear=True)

    def load(self, scene, mode):
        scene["integrator"]["mode"] = mode
        return self.kr.load_dict(scene)

    def render(self, scene, spp, seed):
        import numpy as np
        return np.asarray(self.kr.render(scene, spp=spp, seed=seed))

    def launches(self):
        """The kernels launched since the last call: (compiled, from disk, ops, compile ms) each."""
        return [{"compiled": launch["source"] in ("compiled", "generalized"), "disk": launch["source"] == "disk",
                 "ops": launch["ops"], "compile_ms": launch["codegen_ms"] + launch["compile_ms"]}
                for launch in self.kl.kernel_history(clear=True) if launch["source"] != "library"]

    def peak_bytes(self):
        return self.kl.memory_stats().peak_bytes

    def traverse(self, scene):
        return self.kr.traverse(scene)

    def set_film(self, params, film):
        for key, value in film.items():
            params[key] = value
        params.update()


class Mitsuba:
    """Mitsuba 3 (llvm_ad_rgb) behind the same interface; Dr.Jit's kernel history is on."""

    def __init__(self, threads):
        import drjit as dr
        import mitsuba as mi
        mi.set_variant("llvm_ad_rgb")
        dr.set_thread_count(threads)
        dr.set_flag(dr.JitFlag.KernelHistory, True)
        self.dr, self.mi = dr, mi

    def load(self, scene, mode):
        self.dr.set_flag(self.dr.JitFlag.SymbolicLoops, mode == "symbolic")
        self.dr.set_flag(self.dr.JitFlag.SymbolicCalls, mode == "symbolic")
        return self.mi.load_dict(render_scenes.for_mitsuba(scene, self.mi))

    def render(self, scene, spp, seed):
        import numpy as np
        return np.array(self.mi.render(scene, spp=spp, seed=seed))

    def launches(self):
        """As Kiln.launches(); dr.kernel_history() empties the history as it returns it."""
        return [{"compiled": not (launch["cache_hit"] or launch["cache_disk"]), "disk": bool(launch["cache_disk"]),
                 "ops": launch["operation_count"], "compile_ms": launch["codegen_time"] + launch["backend_time"]}
                for launch in self.dr.kernel_history() if launch["type"] == self.dr.KernelType.JIT]

    def peak_bytes(self):
        return None

    def traverse(self, scene):
        return self.mi.traverse(scene)

    def set_film(self, params, film):
        for key, value in film.items():
            params[key] = self.mi.ScalarTransform4f(value) if key == "sensor.to_world" else value
        params.update()


# ----------------------------------------------------------------------------- child processes


def scene_dict(name, size, assets):
    if name == "cornell":
        return render_scenes.cornell_box(size, size)
    if name == "caustic":
        return render_scenes.caustic_scene(size, size)
    return render_scenes.mesh_scene(assets, size, size)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def kernel_summary(launches):
    return {"kernels": len(launches), "compiled": sum(launch["compiled"] for launch in launches),
            "disk": sum(launch["disk"] for launch in launches), "ops": sum(launch["ops"] for launch in launches),
            "largest_ops": max((launch["ops"] for launch in launches), default=0),
            "compile_ms": sum(launch["compile_ms"] for launch in launches if launch["compiled"])}


def measure_renders(system, spec):
    """The first image (load + render) and the warm renders of one scene in one mode."""
    rss_start = rss_bytes()
    start = time.perf_counter()
    scene = system.load(scene_dict(spec["scene"], spec["size"], spec["assets"]), spec["mode"])
    load = time.perf_counter() - start
    image = system.render(scene, spec["spp"], 0)
    first = time.perf_counter() - start
    cold = kernel_summary(system.launches())
    warm_times, warm = [], None
    for _ in range(spec["repeats"]):
        start = time.perf_counter()
        system.render(scene, spec["spp"], 0)
        warm_times.append(time.perf_counter() - start)
        warm = kernel_summary(system.launches())
    return {"load_s": load, "first_s": first, "first_kernels": cold, "image_mean": float(image.mean()),
            "warm_s": statistics.median(warm_times) if warm_times else None, "warm_kernels": warm,
            "rss_start_bytes": rss_start, "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "peak_bytes": system.peak_bytes()}


def measure_story(system, spec):
    """Story 1: every iteration changes the film and camera, then renders; kernels per iteration."""
    smallest = spec["film_range"][0]
    scene = system.load(render_scenes.cornell_box(smallest, smallest), "symbolic")
    params = system.traverse(scene)
    system.launches()
    iterations = []
    start = time.perf_counter()
    for i, film in enumerate(render_scenes.story_films(spec["iterations"], spec["film_range"])):
        begin = time.perf_counter()
        system.set_film(params, film)
        image = system.render(scene, spec["spp"], i)
        expected = tuple(reversed(film["sensor.film.crop_size"]))
        assert image.shape[:2] == expected, f"iteration {i}: image {image.shape}, crop {expected}"
        iterations.append({"seconds": time.perf_counter() - begin, **kernel_summary(system.launches())})
    return {"total_s": time.perf_counter() - start, "iterations": iterations}


def child(spec, systems, measures):
    """Runs one measurement in this process, `measures[spec["task"]]` with the system
    `systems[spec["system"]]` (a class), and prints its result as the last line."""
    threads = sorted(os.sched_getaffinity(0))[:spec["threads"]]
    os.sched_setaffinity(0, threads)  # before any runtime starts its worker threads
    system = systems[spec["system"]](len(threads))
    print(RESULT_MARK + json.dumps(measures[spec["task"]](system, spec)))


# ----------------------------------------------------------------------------- Mitsuba's interpreter


def libllvm():
    """The libLLVM Dr.Jit loads: $DRJIT_LIBLLVM_PATH, else the newest Debian one."""
    if os.environ.get("DRJIT_LIBLLVM_PATH"):
        return os.environ["DRJIT_LIBLLVM_PATH"]

    def version(path):
        return int(re.search(r"llvm-(\d+)", path).group(1))

    found = sorted(glob.glob("/usr/lib/llvm-*/lib/libLLVM*.so*"), key=version, reverse=True)
    return found[0] if found else None


def mitsuba_env(cache):
    return dict(os.environ, DRJIT_LIBLLVM_PATH=libllvm() or "", DRJIT_CACHE_DIR=cache)


def mitsuba_works(python):
    check = (f"import mitsuba as mi, drjit as dr; mi.set_variant('llvm_ad_rgb'); "
             f"assert mi.__version__ == '{MITSUBA_VERSION}', mi.__version__")
    with tempfile.TemporaryDirectory() as cache:
        try:
            run = subprocess.run([python, "-c", check], env=mitsuba_env(cache), capture_output=True, text=True,
                                 timeout=300)
        except (OSError, subprocess.TimeoutExpired) as error:
            return str(error)
    return None if run.returncode == 0 else (run.stderr.strip().splitlines() or ["failed"])[-1]


def find_mitsuba():
    """(interpreter, None) with a working Mitsuba 3.9.1, or (None, why there is none)."""
    if libllvm() is None:
        return None, "no libLLVM for Dr.Jit (set DRJIT_LIBLLVM_PATH)"
    venv_python = MITSUBA_VENV / "bin" / "python"
    candidates = [os.environ.get("KILN_BENCH_MITSUBA_PYTHON"), sys.executable, str(venv_python)]
    for python in candidates:
        if python and Path(python).exists() and mitsuba_works(python) is None:
            return python, None
    print(f"render_bench: installing mitsuba=={MITSUBA_VERSION} drjit=={DRJIT_VERSION} into {MITSUBA_VENV} ...",
          file=sys.stderr, flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(MITSUBA_VENV)], check=True, capture_output=True, text=True)
        subprocess.run([str(venv_python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        f"mitsuba=={MITSUBA_VERSION}", f"drjit=={DRJIT_VERSION}", "numpy"],
                       check=True, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as error:
        detail = getattr(error, "stderr", None) or str(error)
        return None, f"could not install it into {MITSUBA_VENV}: {detail.strip().splitlines()[-1]}"
    problem = mitsuba_works(str(venv_python))
    return (str(venv_python), None) if problem is None else (None, f"installed but not working: {problem}")


# ----------------------------------------------------------------------------- the parent


def settle_memory():
    """Touches and frees SETTLE_BYTES of memory, so that each measured process finds the
    machine's free pages in the same state. On the virtual machines this runs on, pages
    that no process has touched lately take several times longer to fault in than pages
    another process just freed: Kiln's cold evaluated Cornell render (3 GB) took 7.2 s on
    its own and 4.0 s right after this, with the system time falling from 7 s to 0.6 s.
    Without it, each system's first image would depend on what ran before it. A process of
    its own does it: a child forked from a parent with a high peak inherits that peak
    into its ru_maxrss."""
    subprocess.run([sys.executable, "-c", f"import numpy; numpy.ones({SETTLE_BYTES // 8})"], check=True)


def run_child(system, spec, cache, python, script=__file__):
    """One measurement in a new process running `script --child`; its result dict, or {"error": ...}."""
    settle_memory()
    spec = dict(spec, system=system)
    env = mitsuba_env(cache) if system == "mitsuba" else dict(os.environ, KILN_CACHE_DIR=cache)
    proc = subprocess.run([python, script, "--child", json.dumps(spec)], capture_output=True, text=True, env=env)
    for line in reversed(proc.stdout.splitlines()):
        # The mark may follow a log line's colour reset (Mitsuba's warnings end without a newline).
        if RESULT_MARK in line:
            return json.loads(line[line.index(RESULT_MARK) + len(RESULT_MARK):])
    return {"error": (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]}


def measure_all(config, args, mitsuba_python):
    """{system: {"renders": {(scene, mode): {"cold", "second"}}, "story": ...}} for each system run."""
    systems = {"kiln": sys.executable, "mitsuba": mitsuba_python}
    results = {system: {"renders": {}} for system, python in systems.items() if python}
    for scene in SCENES:
        size, spp = config[scene]
        for mode in MODES:
            spec = {"task": "renders", "scene": scene, "size": size, "spp": spp, "mode": mode,
                    "repeats": config["repeats"], "threads": args.threads, "assets": str(ASSETS)}
            for system in results:
                with tempfile.TemporaryDirectory(prefix="render-bench-cache-") as cache:
                    cold = run_child(system, spec, cache, systems[system])
                    second = run_child(system, dict(spec, repeats=0), cache, systems[system])
                results[system]["renders"][scene, mode] = {"cold": cold, "second": second}
    story = {"task": "story", "iterations": config["story"], "spp": config["story_spp"],
             "film_range": config["story_film"], "threads": args.threads}
    for system in results:
        with tempfile.TemporaryDirectory(prefix="render-bench-cache-") as cache:
            results[system]["story"] = run_child(system, story, cache, systems[system])
    return results


class Row:
    """One line of the table: Kiln's and Mitsuba's values, and how they compare."""

    def __init__(self, name, unit, kiln, mitsuba=None, better=None, goal=None, note=""):
        """`better`: "lower" or "higher" for a figure to compare (the ratio puts Kiln's
        advantage above 1), None for one that is only shown (counts, image means)."""
        self.name, self.unit, self.kiln, self.mitsuba, self.goal, self.note = name, unit, kiln, mitsuba, goal, note
        self.ratio = None
        if better and kiln is not None and mitsuba is not None and kiln > 0 and mitsuba > 0:
            self.ratio = kiln / mitsuba if better == "higher" else mitsuba / kiln

    def verdict(self):
        if self.goal == "zero":
            return None if self.kiln is None else ("goal met" if self.kiln == 0 else "GOAL MISSED")
        if self.goal is None or self.ratio is None:
            return None
        return f"goal >= {self.goal:g}x " + ("met" if self.ratio >= self.goal else "MISSED")

    def json(self):
        return {"benchmark": self.name, "unit": self.unit, "kiln": self.kiln, "mitsuba": self.mitsuba,
                "ratio": self.ratio, "goal": self.verdict(), "note": self.note}


def first_error(runs):
    """The error of the first failed process among `runs` ({name: result}), if any."""
    return next((run["error"] for run in (runs or {}).values() if "error" in run), None)


def without_failures(label, kiln, mitsuba):
    """(rows, kiln, mitsuba): a row naming each system whose processes failed among `kiln`
    and `mitsuba` ({name: result} each; mitsuba None without Mitsuba), and the two with a
    failed one replaced by None. Where Kiln failed there is nothing to compare: its row alone."""
    kiln_error, mitsuba_error = first_error(kiln), first_error(mitsuba)
    if kiln_error:
        return [Row(f"{label}: Kiln failed", "", None, note=kiln_error)], None, None
    if mitsuba_error:
        return [Row(f"{label}: Mitsuba failed", "", None, note=mitsuba_error)], kiln, None
    return [], kiln, mitsuba


def values_at(runs, run, *path, scale=None):
    """Kiln's and Mitsuba's value at `path` in runs[system][run] (None where absent; a
    system's results may be None)."""
    values = []
    for system in ("kiln", "mitsuba"):
        value = (runs[system] or {}).get(run)
        for key in path:
            value = (value or {}).get(key)
        values.append(value if value is None or scale is None else value * scale)
    return values


def render_rows(label, kiln, mitsuba, pixels):
    """The rows of one scene in one mode; `mitsuba` is None without Mitsuba."""
    rows, kiln, mitsuba = without_failures(label, kiln, mitsuba)
    if kiln is None:
        return rows
    pair = functools.partial(values_at, {"kiln": kiln, "mitsuba": mitsuba})
    warm_s = pair("cold", "warm_s")
    samples = [None if s is None else pixels / s / 1e6 for s in warm_s]
    largest = pair("cold", "warm_kernels", "largest_ops")
    rss_start = pair("cold", "rss_start_bytes", scale=1e-6)
    return rows + [
        Row(f"{label}: cold process, first image", "s", *pair("cold", "first_s"), "lower", goal=1.0,
            note="scene load + first render, every kernel compiled"),
        Row(f"{label}: cold process, kernels compiled", "", *pair("cold", "first_kernels", "compiled")),
        Row(f"{label}: cold process, compile time", "ms", *pair("cold", "first_kernels", "compile_ms"), "lower"),
        Row(f"{label}: second process, first image", "s", *pair("second", "first_s"), "lower", goal=3.0,
            note="the same, kernels from the disk cache the first process filled"),
        Row(f"{label}: second process, kernels from disk", "", *pair("second", "first_kernels", "disk")),
        Row(f"{label}: second process, kernels compiled", "", *pair("second", "first_kernels", "compiled")),
        Row(f"{label}: scene load", "s", *pair("cold", "load_s"), "lower", note="part of the first image"),
        Row(f"{label}: warm render", "s", *warm_s, "lower", goal=1.2, note="median of the warm renders"),
        Row(f"{label}: samples/s", "M/s", *samples, "higher"),
        Row(f"{label}: kernels per warm render", "", *pair("cold", "warm_kernels", "kernels")),
        Row(f"{label}: operations per warm render", "", *pair("cold", "warm_kernels", "ops"),
            note=f"largest kernel: Kiln {largest[0]}" + ("" if largest[1] is None else f", Mitsuba {largest[1]}")),
        Row(f"{label}: peak RSS of the process", "MB", *pair("cold", "rss_peak_bytes", scale=1e-6), "lower",
            note=f"after import: Kiln {rss_start[0]:.0f} MB" +
                 ("" if rss_start[1] is None else f", Mitsuba {rss_start[1]:.0f} MB")),
        Row(f"{label}: Kiln memory_stats peak", "MB", kiln["cold"]["peak_bytes"] / 1e6, note="arrays only"),
        Row(f"{label}: image mean", "", *pair("cold", "image_mean"), note="the same estimate within noise"),
    ]


def story_rows(kiln, mitsuba, iterations, name="story 1", total_goal=None,
               total_note="traverse/update + render, all iterations"):
    """Story 1's rows: kernels compiled during and after the warm-up, total time."""
    label = f"{name}, {iterations} iterations"
    rows, kiln, mitsuba = without_failures(label, {"story": kiln}, mitsuba and {"story": mitsuba})
    if kiln is None:
        return rows
    results = (kiln["story"], mitsuba and mitsuba["story"])

    def compiled(part):
        return [None if r is None else sum(i["compiled"] for i in r["iterations"][part]) for r in results]

    per_iteration = [None if r is None else [i["compiled"] for i in r["iterations"]] for r in results]
    warm_up, rest = slice(0, WARM_UP_ITERATIONS), slice(WARM_UP_ITERATIONS, None)
    return rows + [
        Row(f"{label}: kernels compiled, iterations 1-{WARM_UP_ITERATIONS}", "", *compiled(warm_up)),
        Row(f"{label}: kernels compiled, iterations {WARM_UP_ITERATIONS + 1}-{iterations}", "", *compiled(rest),
            goal="zero", note=f"per iteration: Kiln {per_iteration[0]}" +
                              ("" if per_iteration[1] is None else f", Mitsuba {per_iteration[1]}")),
        Row(f"{label}: total time", "s", *[None if r is None else r["total_s"] for r in results], "lower",
            goal=total_goal, note=total_note),
    ]


def shown(value):
    if value is None:
        return "-"
    return f"{value:.0f}" if isinstance(value, int) or abs(value) >= 1000 else f"{value:.3g}"


def print_table(rows, header):
    width = max(len(row.name) for row in rows)
    print(header)
    print(f"{'benchmark':{width}} {'Kiln':>9} {'Mitsuba':>9}  {'unit':4}  {'Kiln vs Mitsuba':15}  goal")
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        print(f"{row.name:{width}} {shown(row.kiln):>9} {shown(row.mitsuba):>9}  {row.unit:4}  {ratio:>15}  "
              f"{row.verdict() or ''}".rstrip())
        if row.note:
            print(f"{'':4}{row.note}")


def parse_args(doc, name, threads):
    """The options of a render benchmark (`doc`: its docstring, `name`: its name in messages,
    `threads`: the default of --threads)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--quick", action="store_true", help="small images, a short story: a smoke run")
    parser.add_argument("--threads", type=int, default=threads, help="threads of each system")
    parser.add_argument("--no-mitsuba", action="store_true", help="Kiln alone")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, unknown = parser.parse_known_args()  # `make bench` passes BENCH_ARGS to every benchmark
    if unknown:
        print(f"{name}: ignoring {' '.join(unknown)} (not an option of this benchmark)", file=sys.stderr)
    if not args.child and (args.threads < 1 or args.threads > len(os.sched_getaffinity(0))):
        parser.error(f"--threads must be between 1 and {len(os.sched_getaffinity(0))}")
    return args


def report(rows, args, mitsuba_python, load_before, title):
    """Prints the rows as JSON (--json) or as a table under `title` and the load average."""
    load = (load_before, os.getloadavg()[0])
    if args.json:
        print(json.dumps({"threads": args.threads, "mitsuba": mitsuba_python is not None, "load_average": load,
                          "rows": [row.json() for row in rows]}, indent=1))
        return
    print_table(rows, f"{title}; load average {load[0]:.1f} before, {load[1]:.1f} after\n"
                      "Kiln vs Mitsuba: > 1 where Kiln is ahead (Mitsuba's time / Kiln's, Kiln's samples/s / "
                      "Mitsuba's, Mitsuba's memory / Kiln's)")


def main():
    args = parse_args(__doc__, "render_bench", len(os.sched_getaffinity(0)))
    if args.child:
        child(json.loads(args.child), {"kiln": Kiln, "mitsuba": Mitsuba},
              {"renders": measure_renders, "story": measure_story})
        return
    config = QUICK if args.quick else FULL
    load_before = os.getloadavg()[0]  # other work on the machine skews every figure: shown in the header
    render_scenes.write_assets(ASSETS)
    mitsuba_python, why = (None, "--no-mitsuba") if args.no_mitsuba else find_mitsuba()
    results = measure_all(config, args, mitsuba_python)
    kiln, mitsuba = results["kiln"], results.get("mitsuba")
    rows = [] if mitsuba else [Row(f"Mitsuba unavailable: {why}", "", None)]
    for scene in SCENES:
        size, spp = config[scene]
        for mode in MODES:
            rows += render_rows(f"{scene} {size}x{size} {spp}spp {mode}", kiln["renders"][scene, mode],
                                mitsuba and mitsuba["renders"][scene, mode], size * size * spp)
    rows += story_rows(kiln["story"], mitsuba and mitsuba["story"], config["story"])
    report(rows, args, mitsuba_python, load_before,
           f"kiln.render vs Mitsuba {MITSUBA_VERSION} llvm_ad_rgb, {args.threads} threads each, each system in "
           f"processes of its own (mesh: {render_scenes.torus_triangles()} triangles)")


if __name__ == "__main__":
    main()
