// The one wall-clock timer: intervals in milliseconds for kernel history, compile times and
// library calls.
#pragma once

#include <chrono>

namespace kiln::detail {

/// Starts when made; lap_ms() returns the milliseconds since the start or the previous lap.
class Stopwatch {
 public:
  /// Milliseconds since the start, without starting a new lap.
  double elapsed_ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }
  /// Milliseconds since the start or the previous lap; the next lap starts now.
  double lap_ms() {
    Clock::time_point now = Clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace kiln::detail
