// check_grads(): tests the derivatives of a function of Float64 arrays, vectors and
// matrices, in forward and reverse mode, against central finite differences (as JAX's
// check_grads).
//
// For a random direction u it compares J·u from forward mode with (f(x + h u) -
// f(x - h u)) / 2h lane by lane; for a random output weighting v it compares ⟨Jᵀ·v, u⟩
// from reverse mode with ⟨v, J·u⟩ of the finite differences; with both modes it also
// checks ⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩ between them. It returns a GradCheckResult (it throws only
// what `f` or Kiln throws), so a test writes
//   GradCheckResult r = check_grads(f, std::tuple(x, y));
//   EXPECT_TRUE(r.ok) << r.message;
#pragma once

#include <kiln/autodiff.h>

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kiln {

/// Which derivatives check_grads() tests (a bitmask: Both = Forward | Reverse).
enum class GradMode : uint8_t { Forward = 1, Reverse = 2, Both = 3 };

struct GradCheckOptions {
  GradMode modes = GradMode::Both;
  /// Finite-difference step: the inputs move by ±eps·u, and |u_i| <= max(1, |x_i|), so the
  /// step is relative to each lane's magnitude.
  double eps = 1e-6;
  /// A check passes when |derivative - reference| <= atol + rtol * scale; the scale is
  /// |reference| for a lane of J·u, and the sum of the magnitudes of the terms for an
  /// inner product (cancellation in the sum does not make the test stricter).
  double rtol = 1e-5;
  double atol = 1e-8;
  /// Seed of the random directions u (inputs) and v (outputs): the same seed, the same check.
  uint64_t seed = 1;
};

/// The outcome: `message` has one line per failed check, naming the mode, the values
/// compared and the tolerance.
struct GradCheckResult {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
};

namespace detail::grad_check {

/// The lanes of each array a value is made of, on the host.
using Lanes = std::vector<std::vector<double>>;

template <typename T> Lanes values_of(const T& value) {
  Lanes out;
  for_each_array(value, [&](const auto& array) {
    static_assert(std::is_same_v<typename std::decay_t<decltype(array)>::Value, double>,
                  "check_grads(): inputs and outputs must be Float64 arrays (or vectors, matrices, tuples of them)");
    out.push_back(array.to_vector());
  });
  return out;
}
/// A copy of `like` whose arrays are new arrays (without derivatives) holding `values`.
template <typename T> T with_values(const T& like, const Lanes& values) {
  T result = like;
  size_t k = 0;
  for_each_array(result, [&](auto& array) { array = Float64::from(values[k++]); });
  return result;
}
/// a + t·b, array by array and lane by lane.
inline Lanes axpy(const Lanes& a, double t, const Lanes& b) {
  Lanes out = a;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].size(); ++i) out[k][i] += t * b[k][i];
  return out;
}
/// Uniform values in [-1, 1] shaped like `shape`, times max(1, |shape_i|) when `relative`.
inline Lanes random_like(const Lanes& shape, std::mt19937_64& rng, bool relative) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Lanes out = shape;
  for (auto& array : out)
    for (double& x : array) x = uniform(rng) * (relative ? std::fmax(1.0, std::fabs(x)) : 1.0);
  return out;
}
/// ⟨a, b⟩, and the sum of the magnitudes of its terms.
inline std::pair<double, double> inner(const Lanes& a, const Lanes& b) {
  double sum = 0, magnitude = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].size(); ++i) {
      sum += a[k][i] * b[k][i];
      magnitude += std::fabs(a[k][i] * b[k][i]);
    }
  return {sum, magnitude};
}
/// f(inputs), or f(inputs...) when f takes the tuple's elements.
template <typename F, typename In> auto call(F& f, const In& inputs) {
  if constexpr (std::is_invocable_v<F&, const In&>) return f(inputs);
  else return std::apply(f, inputs);
}

/// Collects the failures of one check_grads() call.
struct Report {
  const GradCheckOptions& options;
  GradCheckResult result;
  bool close(double got, double want, double scale) const {
    return std::fabs(got - want) <= options.atol + options.rtol * scale;  // false for NaN
  }
  void compare(const char* what, const char* got_name, double got, const char* want_name, double want,
               double scale) {
    if (close(got, want, scale)) return;
    std::ostringstream line;
    line << std::setprecision(12) << "check_grads: " << what << ": " << got_name << " = " << got << ", "
         << want_name << " = " << want << ", |difference| = " << std::fabs(got - want) << std::setprecision(6)
         << " > atol " << options.atol << " + rtol " << options.rtol << " * " << scale << " (eps " << options.eps
         << ", seed " << options.seed << ")\n";
    result.ok = false;
    result.message += line.str();
  }
};

}  // namespace detail::grad_check

/// Checks the derivatives of `f` at `inputs` (a Float64 array, vector or matrix, or a
/// std::tuple of them; f takes the tuple or its elements and returns any of these).
template <typename F, typename In>
GradCheckResult check_grads(F f, const In& inputs, const GradCheckOptions& options = {}) {
  using namespace detail::grad_check;
  auto wants = [&](GradMode mode) { return (uint8_t(options.modes) & uint8_t(mode)) == uint8_t(mode); };
  std::mt19937_64 rng(options.seed);
  Lanes x = values_of(inputs);
  Lanes u = random_like(x, rng, /*relative=*/true);
  Lanes y_plus = values_of(call(f, with_values(inputs, axpy(x, options.eps, u))));
  Lanes y_minus = values_of(call(f, with_values(inputs, axpy(x, -options.eps, u))));
  Lanes jvp_fd = axpy(y_plus, -1.0, y_minus);
  for (auto& array : jvp_fd)
    for (double& d : array) d /= 2 * options.eps;
  Lanes v = random_like(jvp_fd, rng, /*relative=*/false);
  Report report{options, {}};

  Lanes jvp, vjp;
  if (wants(GradMode::Forward)) {
    In xf = with_values(inputs, x);
    enable_grad(xf);
    auto y = call(f, xf);
    forward_from(xf, with_values(inputs, u));
    jvp = values_of(grad(y));
    for (size_t k = 0; k < jvp.size(); ++k)
      for (size_t i = 0; i < jvp[k].size(); ++i) {
        std::string where = "forward mode, output " + std::to_string(k) + " lane " + std::to_string(i);
        report.compare(where.c_str(), "J·u", jvp[k][i], "finite differences", jvp_fd[k][i], std::fabs(jvp_fd[k][i]));
      }
  }
  if (wants(GradMode::Reverse)) {
    In xr = with_values(inputs, x);
    enable_grad(xr);
    auto y = call(f, xr);
    enable_grad(y);  // outputs without derivatives get a leaf of their own: their seed goes nowhere
    backward_from(y, with_values(y, v));
    vjp = values_of(grad(xr));
    auto [reverse, reverse_terms] = inner(vjp, u);
    auto [fd, fd_terms] = inner(v, jvp_fd);
    report.compare("reverse mode", "<J^T·v, u>", reverse, "<v, J·u> of finite differences", fd,
                   std::fmax(reverse_terms, fd_terms));
  }
  if (wants(GradMode::Both)) {
    auto [forward, forward_terms] = inner(jvp, v);
    auto [reverse, reverse_terms] = inner(vjp, u);
    report.compare("forward vs reverse mode", "<J·u, v>", forward, "<u, J^T·v>", reverse,
                   std::fmax(forward_terms, reverse_terms));
  }
  return report.result;
}

}  // namespace kiln
