// check_grads(): tests the derivatives of a function of Float64 (or Float) arrays, vectors,
// matrices and tensors, in forward and reverse mode, against central finite differences
// (as JAX's check_grads). The template flattens the values into arrays and forwards to the
// runtime-typed core detail::check_grads() (src/ad/grad_check.cpp), which Python's
// kl.check_grads calls too.
//
// For a random direction u it compares J·u from forward mode with (f(x + h u) -
// f(x - h u)) / 2h lane by lane; for a random output weighting v it compares ⟨Jᵀ·v, u⟩
// from reverse mode with ⟨v, J·u⟩ of the finite differences; with both modes it also
// checks ⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩ between them. Arrays of other types (indices) pass through
// unchanged and are not compared. It returns a GradCheckResult (it throws only what `f`
// or Kiln throws, and ValueError when there is no float input or output), so a test writes
//   GradCheckResult r = check_grads(f, std::tuple(x, y));
//   EXPECT_TRUE(r.ok) << r.message;
#pragma once

#include <kiln/autodiff.h>
#include <kiln/detail/control_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

namespace kiln {

/// Which derivatives check_grads() tests (a bitmask: Both = Forward | Reverse).
enum class GradMode : uint8_t { Forward = 1, Reverse = 2, Both = 3 };

struct GradCheckOptions {
  GradMode modes = GradMode::Both;
  /// Finite-difference step: the inputs move by ±eps·u, and |u_i| <= max(1, |x_i|), so the
  /// step is relative to each lane's magnitude. Default 1e-6, or 1e-3 when an input is a
  /// Float (float32) array.
  std::optional<double> eps;
  /// A check passes when |derivative - reference| <= atol + rtol * scale; the scale is
  /// |reference| for a lane of J·u, and the sum of the magnitudes of the terms for an
  /// inner product (cancellation in the sum does not make the test stricter). Defaults
  /// 1e-5 and 1e-8, or 1e-2 and 1e-2 when an input is a Float array.
  std::optional<double> rtol;
  std::optional<double> atol;
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

namespace detail {

/// f over the flat list of a check's input arrays, returning its output arrays.
using GradCheckFn = std::function<Values(const Values&)>;
/// The check over flat lists: the Float and Float64 inputs are perturbed and differentiated,
/// other inputs pass through; the Float and Float64 outputs are compared.
GradCheckResult check_grads(const GradCheckFn& f, const Values& inputs, const GradCheckOptions& options);

namespace grad_check {
/// The arrays `value` is made of.
template <typename T> Values arrays_of(const T& value) {
  Values out;
  for_each_array(value, [&](const auto& array) { out.push_back(Handle::borrow(array.operand())); });
  return out;
}
/// A copy of `like` made of `arrays`.
template <typename T> T with_arrays(const T& like, const Values& arrays) {
  T result = like;
  size_t k = 0;
  for_each_array(result,
                 [&](auto& array) { array = std::decay_t<decltype(array)>::steal(Handle(arrays.at(k++)).take()); });
  return result;
}
/// f(inputs), or f(inputs...) when f takes the tuple's elements.
template <typename F, typename In> auto call(F& f, const In& inputs) {
  if constexpr (std::is_invocable_v<F&, const In&>)
    return f(inputs);
  else
    return std::apply(f, inputs);
}
}  // namespace grad_check

}  // namespace detail

/// Checks the derivatives of `f` at `inputs` (an array, vector, matrix or tensor, or a
/// std::tuple of them; f takes the tuple or its elements and returns any of these).
template <typename F, typename In>
GradCheckResult check_grads(F f, const In& inputs, const GradCheckOptions& options = {}) {
  using namespace detail::grad_check;
  detail::GradCheckFn flat = [&](const detail::Values& arrays) {
    return arrays_of(call(f, with_arrays(inputs, arrays)));
  };
  return detail::check_grads(flat, arrays_of(inputs), options);
}

}  // namespace kiln
