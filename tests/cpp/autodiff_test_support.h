// Helpers shared by the AD tests (test_autodiff_rules.cpp, test_autodiff.cpp): a fixture
// that fails a test which leaves AD nodes or edges alive, reproducible input lanes in a
// given domain, and running a check on every backend of the mode x backend table.
#pragma once

#include <kiln/grad_check.h>
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "op_test_support.h"

namespace kiln::test {

/// Every AD test derives from this: when the test's arrays are gone, the AD graph must be
/// back to the nodes and edges it had before (no leaked node, edge or postponed gradient).
class AutodiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nodes_before_ = detail::ad_node_count();
    edges_before_ = detail::ad_edge_count();
  }
  void TearDown() override {
    EXPECT_EQ(detail::ad_node_count(), nodes_before_) << "AD nodes leaked by this test";
    EXPECT_EQ(detail::ad_edge_count(), edges_before_) << "AD edges leaked by this test";
  }

 private:
  size_t nodes_before_ = 0, edges_before_ = 0;
};

/// Where input lanes lie: [lo, hi], and with alternating signs when `alternate`
/// (lanes in ±[lo, hi], away from 0).
struct Domain {
  double lo = -1, hi = 1;
  bool alternate = false;
};

/// `n` distinct values in `domain`: a golden-ratio sequence started at `phase`, so two
/// inputs with phases 0.5 apart never come within a quarter of the domain of each other.
inline std::vector<double> domain_values(size_t n, Domain domain, double phase) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    double t = std::fmod(phase + 0.6180339887498949 * double(i), 1.0);
    double x = domain.lo + (domain.hi - domain.lo) * t;
    out[i] = domain.alternate && i % 2 ? -x : x;
  }
  return out;
}
inline Float64 domain_array(size_t n, Domain domain, double phase) {
  return Float64::from(domain_values(n, domain, phase));
}

inline std::vector<double> host(const Float64& a) { return a.to_vector(); }

/// Runs `check` once per entry of kModeRuns (control-flow mode and backend), tracing the
/// run's name.
inline void for_each_run(const std::function<void()>& check) {
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    struct Restore {
      bool symbolic = flag(Flag::Symbolic);
      ~Restore() { set_flag(Flag::Symbolic, symbolic); }
    } restore;
    set_flag(Flag::Symbolic, run.mode == ControlMode::Symbolic);
    run_on(run.interpreter, check);
  }
}

/// EXPECT_TRUE on a check_grads() result, with its message.
#define KILN_EXPECT_GRADS(...)                       \
  do {                                               \
    ::kiln::GradCheckResult result_ = (__VA_ARGS__); \
    EXPECT_TRUE(result_.ok) << result_.message;      \
  } while (0)

/// Expects `statement` to throw `Error` with a message that contains `needle`.
template <typename Error, typename F> void expect_error(F&& statement, const std::string& needle) {
  try {
    statement();
    ADD_FAILURE() << "no exception; expected one naming \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace kiln::test
