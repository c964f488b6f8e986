"""Benchmarks of the Python package, as ratios against baselines run in the same script.

  tracing   Python tracing overhead per operation on a 1,000-op expression over a
            16-element array (Kiln vs Dr.Jit's LLVM backend, and NumPy's eager per-op cost)
  fused     a 10-op fused float32 expression over 10^7 elements: Kiln vs NumPy, and vs
            Dr.Jit's LLVM backend side by side (results checked against NumPy first)

    python bench/python_bench.py [--json] [--quick]

Ratio = baseline time / Kiln time (> 1: Kiln is faster). Dr.Jit rows appear when `drjit`
is importable. Each system runs in a block of its own (warm-up, then the median of the
timed runs), after a pause that lets the previous one's worker threads go to sleep.
"""

import json
import statistics
import sys
import time

import numpy as np

import kiln as kl

try:
    import drjit as dr
    import drjit.llvm as drl
except ImportError:  # the Dr.Jit rows are optional
    dr = None

QUICK = "--quick" in sys.argv
TRACE_OPS = 1000
FUSED_SIZE = 10**6 if QUICK else 10**7
REPEATS = 5 if QUICK else 15


def median_seconds(run, repeats=REPEATS):
    # Each system is timed in a block of its own after a pause: on a small machine the
    # worker threads that one runtime keeps spinning after a launch (Dr.Jit's pool, oneTBB's)
    # would otherwise take the cores from the next one.
    time.sleep(0.3)
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


def tracing_rows():
    rows = []
    tiny = np.linspace(0, 0.25, 16, dtype=np.float32)  # keeps every sqrt argument positive
    x = kl.Float(tiny)
    kiln_s = median_seconds(lambda: trace_chain(x, kl.sqrt))
    rows.append(("tracing: Kiln", kiln_s / TRACE_OPS * 1e6, "us/op", None))
    numpy_s = median_seconds(lambda: trace_chain(tiny, np.sqrt))
    rows.append(("tracing: NumPy eager (computes, 16 elements)", numpy_s / TRACE_OPS * 1e6, "us/op", numpy_s / kiln_s))
    if dr:
        dx = drl.Float(tiny)
        dr_s = median_seconds(lambda: trace_chain(dx, dr.sqrt))
        rows.append(("tracing: Dr.Jit LLVM", dr_s / TRACE_OPS * 1e6, "us/op", dr_s / kiln_s))
    return rows


def fused_rows():
    rows = []
    data = np.linspace(-2, 2, FUSED_SIZE, dtype=np.float32)
    reference = fused_expression(data, np.sqrt, np.abs)
    x = kl.Float(data)

    def kiln_run():
        y = fused_expression(x, kl.sqrt, kl.abs)
        kl.eval(y)
        return y

    np.testing.assert_allclose(kiln_run().numpy(), reference, rtol=2e-6, atol=1e-6)
    launches = kl.kernel_history(clear=True)
    kiln_run()
    last = kl.kernel_history()[-1]
    assert last["ops"] == 10, f"the expression should be one 10-op kernel, got {last['ops']} ops"
    del launches

    kiln_s = median_seconds(kiln_run)
    numpy_s = median_seconds(lambda: fused_expression(data, np.sqrt, np.abs))
    label = f"fused 10 ops, {FUSED_SIZE:.0e} f32"
    rows.append((f"{label}: Kiln", kiln_s * 1e3, "ms", None))
    rows.append((f"{label}: NumPy", numpy_s * 1e3, "ms", numpy_s / kiln_s))
    if dr:
        dx = drl.Float(data)

        def drjit_run():
            y = fused_expression(dx, dr.sqrt, dr.abs)
            dr.eval(y)
            dr.sync_thread()  # Dr.Jit launches asynchronously: wait for the result
            return y

        np.testing.assert_allclose(np.array(drjit_run()), reference, rtol=2e-6, atol=1e-6)
        dr_s = median_seconds(drjit_run)
        rows.append((f"{label}: Dr.Jit {dr.__version__} LLVM", dr_s * 1e3, "ms", dr_s / kiln_s))
    return rows


def main():
    rows = tracing_rows() + fused_rows()
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
