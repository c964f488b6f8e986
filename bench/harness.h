// Timing helpers for kiln_bench: each measurement is the median of several timed
// repetitions that follow untimed warm-up runs (see alternate()).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
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

/// Medians of `reps` rounds that each run every function once in turn (after `warmup`
/// untimed rounds), so a machine that gets busier slows all of them alike. Each function
/// returns the seconds it measured.
inline std::vector<double> alternate(int warmup, int reps, const std::vector<std::function<double()>>& runs) {
  std::vector<std::vector<double>> samples(runs.size());
  for (int round = 0; round < warmup + reps; ++round)
    for (size_t k = 0; k < runs.size(); ++k) {
      double s = runs[k]();
      if (round >= warmup) samples[k].push_back(s);
    }
  std::vector<double> medians;
  for (const auto& v : samples) medians.push_back(median(v));
  return medians;
}

}  // namespace bench
