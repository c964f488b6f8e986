"""Benchmarks of the Python package, as ratios against baselines run in the same script.

  tracing   Python tracing overhead per operation on a 1,000-op expression over a
            16-element array (Kiln vs Dr.Jit's LLVM backend, and NumPy's eager per-op cost)
  fused     a 10-op fused float32 expression over 10^7 elements: Kiln vs NumPy, and vs
            Dr.Jit's LLVM backend side by side (results checked against NumPy first)

    python bench/python_bench.py [--json] [--quick]

Ratio = baseline time / Kiln time (> 1: Kiln is faster). Dr.Jit rows appear when `drjit`
is importable. Each system is measured in a phase of its own: Kiln, then NumPy, then
Dr.Jit (imported only then), each figure the median of the timed runs after a warm-up,
so that no runtime's worker threads compete with another's for the two cores.
"""

import importlib.util
import json
import statistics
import sys
import time

import numpy as np

import kiln as kl

QUICK = "--quick" in sys.argv
TRACE_OPS = 1000
FUSED_SIZE = 10**6 if QUICK else 10**7
REPEATS = 5 if QUICK else 15
TINY = np.linspace(0, 0.25, 16, dtype=np.float32)  # keeps every sqrt argument positive
DATA = np.linspace(-2, 2, FUSED_SIZE, dtype=np.float32)
REFERENCE = None  # the fused expression by NumPy, to check the others against


def median_seconds(run, repeats=REPEATS):
    time.sleep(0.3)  # let the previous phase's worker threads go to sleep
    run()  # warm-up: compilation, caches, first-touch of memory
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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


def kiln_phase():
    result = measure(kl.Float, kl.sqrt, kl.abs, kl.eval, lambda y: y.numpy())
    assert kl.kernel_history()[-1]["ops"] == 10, "the expression should be one 10-op kernel"
    return result


def numpy_phase():
    return median_seconds(lambda: trace_chain(TINY, np.sqrt)), median_seconds(
        lambda: fused_expression(DATA, np.sqrt, np.abs))


def drjit_phase():
    import drjit as dr
    import drjit.llvm as drl

    def evaluate(y):
        dr.eval(y)
        dr.sync_thread()  # Dr.Jit launches asynchronously: wait for the result

    return (*measure(drl.Float, dr.sqrt, dr.abs, evaluate, np.array), dr.__version__)


def main():
    global REFERENCE
    REFERENCE = fused_expression(DATA, np.sqrt, np.abs)
    kiln_trace, kiln_fused = kiln_phase()
    numpy_trace, numpy_fused = numpy_phase()
    label = f"fused 10 ops, {FUSED_SIZE:.0e} f32"
    rows = [("tracing: Kiln", kiln_trace / TRACE_OPS * 1e6, "us/op", None),
            ("tracing: NumPy eager (computes, 16 elements)", numpy_trace / TRACE_OPS * 1e6, "us/op",
             numpy_trace / kiln_trace)]
    fused = [(f"{label}: Kiln", kiln_fused * 1e3, "ms", None),
             (f"{label}: NumPy", numpy_fused * 1e3, "ms", numpy_fused / kiln_fused)]
    if importlib.util.find_spec("drjit"):  # the Dr.Jit rows are optional
        drjit_trace, drjit_fused, version = drjit_phase()
        rows.append((f"tracing: Dr.Jit {version} LLVM", drjit_trace / TRACE_OPS * 1e6, "us/op", drjit_trace / kiln_trace))
        fused.append((f"{label}: Dr.Jit {version} LLVM", drjit_fused * 1e3, "ms", drjit_fused / kiln_fused))
    rows += fused
    if "--json" in sys.argv:
        print(json.dumps([{"benchmark": name, "value": value, "unit": unit, "ratio": ratio}
                          for name, value, unit, ratio in rows], indent=1))
        return
    print(f"{'benchmark':58} {'value':>10}  unit   baseline/Kiln")
    for name, value, unit, ratio in rows:
        print(f"{name:58} {value:10.3f}  {unit:5}  {'' if ratio is None else f'{ratio:.2f}x'}")
    print(f"(packet width {kl.packet_width()}; Kiln runs on all cores through oneTBB, NumPy on one)")


if __name__ == "__main__":
    main()
