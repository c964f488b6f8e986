// Timing helpers for kiln_bench: each measurement is the median of several timed
// repetitions that follow untimed warm-up runs (see alternate() in main.cpp).
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

}  // namespace bench
