// The parameters a render differentiates: found by a traversal, swapped for fresh leaves
// through SceneParameters for the duration of a gradient render.
#include "core/gradient_parameters.h"

#include <kiln/autodiff.h>
#include <kiln/errors.h>

#include <type_traits>

namespace kiln::render {
namespace {

/// Calls f(array) for each Float array of `value`: a transform's are its matrix entries
/// (its inverse derives from them).
template <typename V, typename F> void for_each_float(V& value, F&& f) {
  std::visit(
      [&](auto& v) {
        if constexpr (requires { v.matrix(); })
          for (const Float& entry : v.matrix().entries) f(entry);
        else
          for_each_array(v, f);
      },
      value);
}

/// Whether parameter `ref` carries derivatives (the matrix of a transform).
bool carries_derivatives(const ParameterRef& ref) {
  return std::visit(
      [](auto* value) {
        if constexpr (requires { value->matrix(); })
          return grad_enabled(value->matrix());
        else if constexpr (requires { for_each_array(*value, [](const auto&) {}); })
          return grad_enabled(*value);
        else
          return false;
      },
      ref);
}

/// Raises a ValueError when parameter `key` carries derivatives that render() cannot give:
/// it is flagged non-differentiable. (Discontinuous parameters give their interior
/// derivatives; visibility terms need a projective integrator.)
void check_supported(const SceneParameters& params, const std::string& key) {
  if (params.flags(key) & param_flags::kNonDifferentiable)
    throw ValueError("kiln.render: render(): scene parameter '" + key +
                     "' carries derivatives, but it is not differentiable; assign it a value without them (kl.detach)");
}

}  // namespace

GradientParameters::Value GradientParameters::stored_value(const std::string& key) const {
  return std::visit(
      [&](auto* stored) -> Value {
        if constexpr (std::is_same_v<decltype(stored), Float*> || std::is_same_v<decltype(stored), Array3f*> ||
                      std::is_same_v<decltype(stored), TensorXf*> || std::is_same_v<decltype(stored), Transform4f*>)
          return *stored;
        else
          throw ValueError("kiln.render: render(): scene parameter '" + key + "' cannot carry derivatives");
      },
      params_.get(key));
}

GradientParameters::GradientParameters(Object& root) : params_(root) {
  for (const std::string& key : params_.keys()) {
    const ParameterRef& ref = params_.get(key);
    if (!carries_derivatives(ref)) continue;
    check_supported(params_, key);
    Parameter parameter{key, stored_value(key), {}};
    for_each_float(parameter.value, [&](const Float& array) { parameter.inputs.push_back(grad_enabled(array)); });
    parameters_.push_back(std::move(parameter));
  }
}

std::vector<Float> GradientParameters::inputs() const {
  std::vector<Float> arrays;
  for (const Parameter& parameter : parameters_) {
    size_t k = 0;
    for_each_float(parameter.value, [&](const Float& array) {
      if (parameter.inputs[k++]) arrays.push_back(array);
    });
  }
  return arrays;
}

GradientParameters::Value GradientParameters::with_fresh_leaves(const Parameter& parameter,
                                                                const std::vector<Float>& values, size_t& next,
                                                                std::vector<Float>& leaves) {
  size_t k = 0;
  auto refresh = [&](Float& array) {
    if (!parameter.inputs[k++]) return;
    array = detach(values.at(next++));
    enable_grad(array);
    leaves.push_back(array);
  };
  Value value = parameter.value;
  if (Transform4f* transform = std::get_if<Transform4f>(&value)) {
    Matrix4f matrix = transform->matrix();
    for (Float& entry : matrix.entries) refresh(entry);
    *transform = Transform4f(matrix);  // the inverse derived from the leaves
  } else {
    std::visit(
        [&](auto& v) {
          if constexpr (!requires { v.matrix(); }) for_each_array(v, refresh);
        },
        value);
  }
  return value;
}

void GradientParameters::assign(const std::vector<Value>& values) {
  for (size_t i = 0; i < parameters_.size(); ++i)
    std::visit([&](const auto& value) { params_.set(parameters_[i].key, value); }, values[i]);
  params_.update();
}

void GradientParameters::with_leaves(const std::vector<Float>& values,
                                     const std::function<void(const std::vector<Float>&)>& body) {
  std::vector<Value> held, fresh;
  std::vector<Float> leaves;
  size_t next = 0;
  for (const Parameter& parameter : parameters_) {
    held.push_back(stored_value(parameter.key));
    fresh.push_back(with_fresh_leaves(parameter, values, next, leaves));
  }
  auto restore = [&] {
    GradScope suspended = suspend_grad();
    assign(held);
  };
  try {
    assign(fresh);
    body(leaves);
  } catch (...) {
    try {
      restore();
    } catch (...) {
      // The body's error is the one to report; a restore that fails as well leaves the
      // scene with the leaves' values, which are the primal render's.
    }
    throw;
  }
  restore();
}

}  // namespace kiln::render
