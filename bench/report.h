// The rows kiln_bench measures and the two ways it prints them: an aligned text table and
// JSON (--json).
#pragma once

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace bench {

inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

/// What a row is judged against.
enum class Goal {
  None,          ///< informational
  RatioAtLeast,  ///< baseline_s / kiln_s >= goal_value
  KilnAtMost,    ///< kiln_s <= goal_value (in the row's unit)
};

/// What a row's two values measure. The fields keep their names (kiln_s, baseline_s) for
/// every unit, so the JSON reads the same; "unit" says what they hold.
enum class Unit {
  Seconds,
  Bytes,  ///< e.g. peak memory
  Count,  ///< e.g. kernels compiled
};

struct Row {
  std::string name;
  double kiln_s = kNone;      ///< Kiln's time (median), seconds
  double baseline_s = kNone;  ///< the baseline's time, seconds; NaN when there is none
  Goal goal = Goal::None;
  double goal_value = 0;      ///< a ratio, or for KilnAtMost a value in `unit`
  std::string note;           ///< throughput, the baseline's name, how it was measured
  Unit unit = Unit::Seconds;  ///< what kiln_s and baseline_s hold

  double ratio() const { return baseline_s / kiln_s; }
  bool has_baseline() const { return !std::isnan(baseline_s); }
  /// "PASS", "MISS" or "" (no goal).
  std::string status() const;
  /// The goal as text: ">= 0.90x", "<= 5 ms", "<= 0", or "".
  std::string goal_text() const;
};

/// A value of `unit` as text: format_seconds(), "12.3 MB" or "3".
std::string format_value(double value, Unit unit);

/// Run-wide facts printed with the results (threads, packet width, sizes, ...).
using Facts = std::vector<std::pair<std::string, std::string>>;

void print_table(std::ostream& out, const Facts& facts, const std::vector<Row>& rows);
void print_json(std::ostream& out, const Facts& facts, const std::vector<Row>& rows);

/// "12.3 ms", "4.56 us", "1.20 s": three significant digits in a fitting unit.
std::string format_seconds(double s);

}  // namespace bench
