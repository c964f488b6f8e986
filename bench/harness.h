// Timing helpers for kiln_bench: each measurement is the median of several timed
// repetitions that follow untimed warm-up runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

/// Seconds `work()` takes.
template <typename Work> double time_once(Work&& work) {
  auto start = Clock::now();
  work();
  return seconds_between(start, Clock::now());
}

inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t mid = samples.size() / 2;
  return samples.size() % 2 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
}

/// Median of `reps` calls of `rep()` after `warmup` calls; `rep()` returns the seconds of
/// the part it times, so set-up that must not count (tracing, say) stays outside.
template <typename Rep> double median_of(int warmup, int reps, Rep&& rep) {
  for (int i = 0; i < warmup; ++i) rep();
  std::vector<double> samples;
  for (int i = 0; i < reps; ++i) samples.push_back(rep());
  return median(samples);
}

}  // namespace bench
