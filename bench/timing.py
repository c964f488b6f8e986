"""The one timing rule of the Python benchmarks: the median of timed runs after a warm-up."""

import statistics
import time


def median_seconds(run, repeats, settle=0.3):
    """The median time of `repeats` calls of `run`, after `settle` seconds (the previous
    phase's worker threads go to sleep) and one untimed call (compilation, caches,
    first-touch of memory)."""
    time.sleep(settle)
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
