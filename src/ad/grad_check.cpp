// The one implementation of check_grads() (grad_check.h): derivatives of a function over
// flat lists of arrays against central finite differences in float64, in forward and
// reverse mode. The C++ template and Python's kl.check_grads flatten their values and
// forward here.
#include <kiln/errors.h>
#include <kiln/grad_check.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

/// The lanes of each float array, on the host in float64.
using Lanes = std::vector<std::vector<double>>;

bool is_float(const Handle& value) {
  VarType type = node_type(value.index());
  return type == VarType::Float32 || type == VarType::Float64;
}

/// The lanes of a float array, a one-lane array broadcast to `size` lanes when given.
std::vector<double> lanes_of(Index index, size_t size = 0) {
  size_t n = node_size(index);
  std::vector<double> out(n);
  const void* host = data(index);
  if (node_type(index) == VarType::Float64)
    std::memcpy(out.data(), host, n * sizeof(double));
  else
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<const float*>(host)[i];
  if (size && n == 1) out.assign(size, out[0]);
  return out;
}
/// A new array of `type` (Float32 or Float64) holding `values`.
Handle array_of(VarType type, const std::vector<double>& values) {
  if (type == VarType::Float64) return Handle::steal(make_copy(type, values.data(), values.size()));
  std::vector<float> narrow(values.begin(), values.end());
  return Handle::steal(make_copy(type, narrow.data(), narrow.size()));
}

/// a + t·b, array by array and lane by lane.
Lanes axpy(const Lanes& a, double t, const Lanes& b) {
  Lanes out = a;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].size(); ++i) out[k][i] += t * b[k][i];
  return out;
}
/// Uniform values in [-1, 1] shaped like `shape`, times max(1, |shape_i|) when `relative`.
Lanes random_like(const Lanes& shape, std::mt19937_64& rng, bool relative) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Lanes out = shape;
  for (auto& array : out)
    for (double& x : array) x = uniform(rng) * (relative ? std::fmax(1.0, std::fabs(x)) : 1.0);
  return out;
}
/// ⟨a, b⟩, and the sum of the magnitudes of its terms.
std::pair<double, double> inner(const Lanes& a, const Lanes& b) {
  double sum = 0, magnitude = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].size(); ++i) {
      sum += a[k][i] * b[k][i];
      magnitude += std::fabs(a[k][i] * b[k][i]);
    }
  return {sum, magnitude};
}

/// The options with their defaults filled in: tolerances for float64 unless a float input
/// is a Float (float32) array.
struct Tolerances {
  double eps, rtol, atol;
  uint64_t seed;
};
Tolerances resolve(const GradCheckOptions& options, bool single_precision) {
  return {options.eps.value_or(single_precision ? 1e-3 : 1e-6), options.rtol.value_or(single_precision ? 1e-2 : 1e-5),
          options.atol.value_or(single_precision ? 1e-2 : 1e-8), options.seed};
}

/// Collects the failures of one check_grads() call.
struct Report {
  Tolerances tolerances;
  GradCheckResult result;
  void compare(const std::string& what, const char* got_name, double got, const char* want_name, double want,
               double scale) {
    if (std::fabs(got - want) <= tolerances.atol + tolerances.rtol * scale) return;  // false for NaN
    std::ostringstream line;
    line << std::setprecision(12) << "check_grads: " << what << ": " << got_name << " = " << got << ", " << want_name
         << " = " << want << ", |difference| = " << std::fabs(got - want) << std::setprecision(6) << " > atol "
         << tolerances.atol << " + rtol " << tolerances.rtol << " * " << scale << " (eps " << tolerances.eps
         << ", seed " << tolerances.seed << ")\n";
    result.ok = false;
    result.message += line.str();
  }
};

/// What one call of f used and returned: its float inputs and its float outputs.
struct Call {
  Values float_inputs, float_outputs;
};
/// Runs f on the inputs with the float ones (at `floats`) replaced by new arrays holding
/// `values` (carrying derivatives when `differentiable`).
Call call(const GradCheckFn& f, const Values& inputs, const std::vector<size_t>& floats, const Lanes& values,
          bool differentiable) {
  Values args = inputs;
  Call out;
  for (size_t k = 0; k < floats.size(); ++k) {
    Handle fresh = array_of(node_type(inputs[floats[k]].index()), values[k]);
    if (differentiable) {
      Index index = fresh.release();
      fresh = Handle::steal(AdValue{index, ad_enable(index)});
    }
    args[floats[k]] = fresh;
    out.float_inputs.push_back(fresh);
  }
  for (Handle& value : f(args))
    if (is_float(value)) out.float_outputs.push_back(std::move(value));
  if (out.float_outputs.empty()) throw ValueError("kiln: check_grads(): f returned no Float or Float64 array");
  return out;
}
/// The lanes of each of `values`.
Lanes lanes_of(const Values& values) {
  Lanes out;
  for (const Handle& value : values) out.push_back(lanes_of(value.index()));
  return out;
}
/// The gradients of `values` (zeros where there is none), `like`'s lanes each.
Lanes grads_of(const Values& values, const Lanes& like) {
  Lanes out;
  for (size_t k = 0; k < values.size(); ++k) {
    Handle g = Handle::steal(values[k].ad() ? ad_grad(values[k].ad()) : 0);
    out.push_back(g ? lanes_of(g.index(), like[k].size()) : std::vector<double>(like[k].size(), 0.0));
  }
  return out;
}
/// Sets the gradients of `values` that carry derivatives to `seeds` and returns their AD
/// nodes; seeds of an AD node that appears more than once add up.
std::vector<AdIndex> seed(const Values& values, const Lanes& seeds) {
  std::vector<AdIndex> nodes;
  for (size_t k = 0; k < values.size(); ++k) {
    AdIndex ad = values[k].ad();
    if (!ad) continue;
    Handle s = array_of(node_type(values[k].index()), seeds[k]);
    if (std::find(nodes.begin(), nodes.end(), ad) == nodes.end())
      ad_set_grad(ad, s.index());
    else
      ad_accumulate_grad(ad, s.index());
    nodes.push_back(ad);
  }
  return nodes;
}

}  // namespace

GradCheckResult check_grads(const GradCheckFn& f, const Values& inputs, const GradCheckOptions& options) {
  ad_check_traversal_allowed("check_grads()");
  std::vector<size_t> floats;
  bool single_precision = false;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (is_float(inputs[k])) {
      floats.push_back(k);
      single_precision |= node_type(inputs[k].index()) == VarType::Float32;
    }
  if (floats.empty())
    throw ValueError("kiln: check_grads(): the inputs hold no Float or Float64 array to differentiate");
  Report report{resolve(options, single_precision), {}};
  double eps = report.tolerances.eps;
  auto wants = [&](GradMode mode) { return (uint8_t(options.modes) & uint8_t(mode)) == uint8_t(mode); };

  std::mt19937_64 rng(options.seed);
  Lanes x;
  for (size_t k : floats) x.push_back(lanes_of(inputs[k].index()));
  Lanes u = random_like(x, rng, /*relative=*/true);
  Lanes y_plus = lanes_of(call(f, inputs, floats, axpy(x, eps, u), false).float_outputs);
  Lanes y_minus = lanes_of(call(f, inputs, floats, axpy(x, -eps, u), false).float_outputs);
  Lanes jvp_fd = axpy(y_plus, -1.0, y_minus);
  for (auto& array : jvp_fd)
    for (double& d : array) d /= 2 * eps;
  Lanes v = random_like(jvp_fd, rng, /*relative=*/false);

  Lanes jvp, vjp;
  if (wants(GradMode::Forward)) {
    Call forward = call(f, inputs, floats, x, true);
    std::vector<AdIndex> sources = seed(forward.float_inputs, u);
    ad_forward(sources.data(), sources.size());
    jvp = grads_of(forward.float_outputs, jvp_fd);
    for (size_t k = 0; k < jvp.size(); ++k)
      for (size_t i = 0; i < jvp[k].size(); ++i)
        report.compare("forward mode, output " + std::to_string(k) + " lane " + std::to_string(i), "J·u", jvp[k][i],
                       "finite differences", jvp_fd[k][i], std::fabs(jvp_fd[k][i]));
  }
  if (wants(GradMode::Reverse)) {
    Call reverse = call(f, inputs, floats, x, true);
    std::vector<AdIndex> targets = seed(reverse.float_outputs, v);  // outputs without derivatives: no seed
    ad_backward(targets.data(), targets.size(), /*retain_graph=*/false);
    vjp = grads_of(reverse.float_inputs, x);
    auto [reverse_sum, reverse_terms] = inner(vjp, u);
    auto [fd, fd_terms] = inner(v, jvp_fd);
    report.compare("reverse mode", "<J^T·v, u>", reverse_sum, "<v, J·u> of finite differences", fd,
                   std::fmax(reverse_terms, fd_terms));
  }
  if (wants(GradMode::Both)) {
    auto [forward_sum, forward_terms] = inner(jvp, v);
    auto [reverse_sum, reverse_terms] = inner(vjp, u);
    report.compare("forward vs reverse mode", "<J·u, v>", forward_sum, "<u, J^T·v>", reverse_sum,
                   std::fmax(forward_terms, reverse_terms));
  }
  return report.result;
}

}  // namespace kiln::detail
