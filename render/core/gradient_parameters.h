// The scene parameters a render differentiates with respect to, and the swap that gives a
// gradient render fresh leaves in their place through SceneParameters::set + update().
//
// What an implementation guarantees:
// - inputs() are the Float arrays that carry derivatives, in a fixed order (an Array3f gives
//   its components that carry them, a transform its matrix entries that do).
// - with_leaves() sets each parameter to a copy of its value whose arrays in inputs() are
//   fresh leaves, and calls update(): what owners derive in parameters_changed() (joined
//   mesh arrays, a transform's inverse) is derived from the leaves and carries their
//   derivatives; what a plugin keeps detached for sampling (an envmap's distribution, a
//   plastic's lobe weight) stays detached, as each plugin documents. Afterwards, also when
//   the body throws, the values the parameters held come back (and update() again, with
//   derivatives suspended).
#pragma once

#include <kiln/render/parameters.h>

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::render {

class GradientParameters {
 public:
  /// Traverses `root` (which must outlive this object). Throws ValueError naming a
  /// parameter that carries derivatives render() cannot give (flagged non-differentiable).
  explicit GradientParameters(Object& root);

  bool empty() const { return parameters_.empty(); }
  /// The arrays that carry derivatives (the render's inputs).
  std::vector<Float> inputs() const;

  /// Runs body(leaves) while the parameters hold fresh leaves with values `values` (one per
  /// input), and restores them afterwards.
  void with_leaves(const std::vector<Float>& values, const std::function<void(const std::vector<Float>&)>& body);

 private:
  /// A parameter value render() can differentiate.
  using Value = std::variant<Float, Array3f, TensorXf, Transform4f>;
  struct Parameter {
    std::string key;
    Value value;               ///< as the render saw it
    std::vector<bool> inputs;  ///< per Float array of `value`: whether it is one of inputs()
  };

  /// `value` with its arrays marked in `parameter.inputs` replaced by fresh leaves holding
  /// the next of `values` (from `next`), which are appended to `leaves`.
  static Value with_fresh_leaves(const Parameter& parameter, const std::vector<Float>& values, size_t& next,
                                 std::vector<Float>& leaves);
  /// What parameter `key` holds now.
  Value stored_value(const std::string& key) const;
  /// Sets every parameter to `values` (in parameters_ order), then update().
  void assign(const std::vector<Value>& values);

  SceneParameters params_;
  std::vector<Parameter> parameters_;
};

}  // namespace kiln::render
