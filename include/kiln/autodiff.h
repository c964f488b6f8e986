// Automatic differentiation, forward and reverse, over Kiln arrays, vectors and matrices:
// enable_grad / grad / set_grad / backward / forward, gradient scopes, and CustomOp for
// operations whose derivatives the user writes. Derivatives are ordinary traced code,
// fused into kernels like everything else (src/ad/; docs/architecture.md, "Automatic
// differentiation").
#pragma once

#include <kiln/matrix.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kiln {

/// for_each_array() over tuples of arrays, vectors and matrices (CustomOp's inputs).
template <typename... Ts, typename F> void for_each_array(std::tuple<Ts...>& tuple, F&& f) {
  std::apply([&](auto&... parts) { (for_each_array(parts, f), ...); }, tuple);
}
template <typename... Ts, typename F> void for_each_array(const std::tuple<Ts...>& tuple, F&& f) {
  std::apply([&](const auto&... parts) { (for_each_array(parts, f), ...); }, tuple);
}
/// for_each_array() over a std::vector of arrays, vectors or matrices (the inputs of a
/// CustomOp whose number of inputs is known only when it runs).
template <typename T, typename F> void for_each_array(std::vector<T>& values, F&& f) {
  for (T& value : values) for_each_array(value, f);
}
template <typename T, typename F> void for_each_array(const std::vector<T>& values, F&& f) {
  for (const T& value : values) for_each_array(value, f);
}

/// Marks arrays (or every component of vectors and matrices) as inputs that gradients
/// flow to. An array that already carries derivatives is left as it is.
template <typename... Ts> void enable_grad(Ts&... values) {
  (for_each_array(values,
                  [](auto& array) {
                    if (!array.ad_index()) array.reset_ad(detail::ad_enable(array.index()));
                  }),
   ...);
}
/// The value without its derivatives (same node, no AD node).
template <typename T> T detach(const T& value) {
  T result = value;
  for_each_array(result, [](auto& array) { array.reset_ad(0); });
  return result;
}
/// Zeros of `value`'s size carrying `value`'s derivatives (the same AD nodes): traversals
/// through the result reach what `value` depends on, and evaluating it never computes
/// `value`. For work whose derivatives are wanted but whose values are not (a gradient
/// render whose image only carries a traversal); ops whose derivatives use this operand's
/// value see zeros.
template <typename T> T derivatives_without_values(const T& value) {
  T result = value;
  for_each_array(result, [](auto& array) {
    using A = std::decay_t<decltype(array)>;
    detail::AdIndex ad = array.ad_index();
    if (ad) detail::ad_inc_ref(ad);
    array = zeros<A>(array.size());
    array.reset_ad(ad);
  });
  return result;
}
/// True when every component of `value` is zeros known while tracing, as
/// derivatives_without_values() gives: work on its values can be skipped, its derivatives
/// kept.
template <typename T> bool values_known_zero(const T& value) {
  bool zero = true;
  for_each_array(value, [&](const auto& array) { zero &= detail::node_is_zero(array.index()); });
  return zero;
}
/// True when `value` (any component of it) carries derivatives.
template <typename T> bool grad_enabled(const T& value) {
  bool any = false;
  for_each_array(value, [&](const auto& array) { any |= array.ad_index() != 0; });
  return any;
}

namespace detail {
template <typename A> void check_float(const A& array, const char* what) {
  if constexpr (!std::is_floating_point_v<typename std::decay_t<A>::Value>)
    throw TypeError(std::string("kiln: ") + what + "(): the array is of type " + type_name(array.Type) +
                    "; only Float and Float64 arrays have gradients");
}
}  // namespace detail

/// The gradient accumulated for `value` (zeros when there is none).
template <typename T> T grad(const T& value) {
  T result = value;
  for_each_array(result, [](auto& array) {
    using A = std::decay_t<decltype(array)>;
    detail::check_float(array, "grad");
    detail::Index g = array.ad_index() ? detail::ad_grad(array.ad_index()) : 0;
    array = g ? A::steal(g) : zeros<A>(array.size());
  });
  return result;
}

namespace detail {
/// Calls f(array of a, index of the matching array of b) for each array of a.
template <typename T, typename F> void for_each_pair(const T& a, const T& b, F&& f) {
  std::vector<Index> second;
  for_each_array(b, [&](const auto& array) { second.push_back(array.index()); });
  size_t k = 0;
  for_each_array(a, [&](const auto& array) { f(array, second[k++]); });
}
template <typename A> AdIndex require_grad(const A& array, const char* what) {
  check_float(array, what);
  if (!array.ad_index())
    throw ValueError(std::string("kiln: ") + what +
                     "(): the array does not carry derivatives; call "
                     "enable_grad() on it (or on an input it is computed from) first");
  return array.ad_index();
}
/// Sets the gradients of `value`'s arrays to `seed`'s and returns their AD nodes; seeds of
/// arrays that appear more than once (a vector with a shared component) add up.
template <typename T> std::vector<AdIndex> seed_grads(const T& value, const T& seed, const char* what) {
  std::vector<AdIndex> nodes;
  for_each_pair(value, seed, [&](const auto& array, const auto& s) {
    AdIndex ad = require_grad(array, what);
    if (std::find(nodes.begin(), nodes.end(), ad) == nodes.end())
      ad_set_grad(ad, s);
    else
      ad_accumulate_grad(ad, s);
    nodes.push_back(ad);
  });
  return nodes;
}
}  // namespace detail

/// Replaces the gradient of `value` (which must carry derivatives).
template <typename T> void set_grad(const T& value, const T& gradient) {
  detail::for_each_pair(value, gradient, [](const auto& array, const auto& g) {
    detail::ad_set_grad(detail::require_grad(array, "set_grad"), g);
  });
}
/// Adds to the gradient of `value`.
template <typename T> void accumulate_grad(const T& value, const T& gradient) {
  detail::for_each_pair(value, gradient, [](const auto& array, const auto& g) {
    detail::ad_accumulate_grad(detail::require_grad(array, "accumulate_grad"), g);
  });
}
/// Clears the gradient of `value`.
template <typename T> void clear_grad(const T& value) {
  for_each_array(value, [](const auto& array) {
    if (array.ad_index()) detail::ad_set_grad(array.ad_index(), 0);
  });
}

/// Reverse mode from `y`, whose gradient is `seed` (one lane, or as many as y): adjoints
/// accumulate on the inputs (grad(x)). Visits only what connects y to inputs with
/// gradients enabled. Frees that part of the graph unless `retain_graph`.
template <typename T> void backward_from(const T& y, const T& seed, bool retain_graph = false) {
  detail::ad_check_traversal_allowed("backward_from()");
  std::vector<detail::AdIndex> targets = detail::seed_grads(y, seed, "backward_from");
  detail::ad_backward(targets.data(), targets.size(), retain_graph);
}
/// Reverse mode from a one-lane `y` (a loss); use backward_from() for wider outputs.
template <ArrayScalar S> void backward(const Array<S>& y, bool retain_graph = false) {
  detail::ad_check_traversal_allowed("backward()");
  detail::require_grad(y, "backward");
  if (y.size() != 1)
    throw SizeError("kiln: backward(): y has " + std::to_string(y.size()) +
                    " lanes; backward() needs a one-lane value such as a loss. Reduce it (sum(y)) "
                    "or pass the seed yourself: backward_from(y, seed)");
  backward_from(y, Array<S>(S(1), {}), retain_graph);
}

/// Reverse mode into `x` from every node computed from it that has a gradient set
/// (set_grad()); returns x's adjoint (the mirror of forward_to()). Visits only paths that
/// start at x; other inputs get nothing. Frees those paths unless `retain_graph`.
template <typename T> T backward_to(const T& x, bool retain_graph = false) {
  std::vector<detail::AdIndex> sources;
  for_each_array(x, [&](const auto& array) { sources.push_back(detail::require_grad(array, "backward_to")); });
  detail::ad_backward_to(sources.data(), sources.size(), retain_graph);
  return grad(x);
}

/// Forward mode from `x` with tangent `seed`: tangents reach everything computed from x
/// (read them with grad()).
template <typename T> void forward_from(const T& x, const T& seed) {
  detail::ad_check_traversal_allowed("forward_from()");
  std::vector<detail::AdIndex> sources = detail::seed_grads(x, seed, "forward_from");
  detail::ad_forward(sources.data(), sources.size());
}
/// Forward mode from `x` with tangent 1 on every lane.
template <typename T> void forward(const T& x) {
  detail::ad_check_traversal_allowed("forward()");
  T ones = x;
  for_each_array(ones, [](auto& array) {
    using A = std::decay_t<decltype(array)>;
    detail::check_float(array, "forward");
    array = full<A>(typename A::Value(1), array.size());
  });
  forward_from(x, ones);
}
/// Forward mode into `y` from every node on the way that has a gradient set
/// (set_grad()); returns y's tangent. Visits only paths that end in y.
template <typename T> T forward_to(const T& y) {
  detail::ad_check_traversal_allowed("forward_to()");
  std::vector<detail::AdIndex> targets;
  for_each_array(y, [&](const auto& array) { targets.push_back(detail::require_grad(array, "forward_to")); });
  detail::ad_forward_to(targets.data(), targets.size());
  return grad(y);
}

/// What the last traversal visited (nodes and edges on the requested paths only).
inline TraversalStats last_traversal() { return detail::ad_last_traversal(); }

/// Scopes. While a suspend_grad() scope lives, operations record no derivatives;
/// resume_grad() turns recording back on inside it; isolate_grad() makes traversals
/// started inside stop at nodes created before it and finishes them when it ends (only
/// when it ends normally: left by an exception, it drops them, so it never throws while
/// the exception unwinds).
class [[nodiscard]] GradScope {
 public:
  enum class Kind { Suspend, Resume, Isolate };
  explicit GradScope(Kind kind) : kind_(kind), exceptions_(std::uncaught_exceptions()) {
    if (kind_ == Kind::Isolate)
      detail::ad_push_isolation();
    else
      detail::ad_push_recording(kind_ == Kind::Resume);
  }
  GradScope(const GradScope&) = delete;
  GradScope& operator=(const GradScope&) = delete;
  ~GradScope() noexcept(false) {
    if (kind_ == Kind::Isolate)
      detail::ad_pop_isolation(/*propagate=*/std::uncaught_exceptions() == exceptions_);
    else
      detail::ad_pop_recording();
  }

 private:
  Kind kind_;
  int exceptions_;  ///< exceptions in flight when the scope began
};
inline GradScope suspend_grad() { return GradScope(GradScope::Kind::Suspend); }
inline GradScope resume_grad() { return GradScope(GradScope::Kind::Resume); }
inline GradScope isolate_grad() { return GradScope(GradScope::Kind::Isolate); }

// ---- CustomOp -------------------------------------------------------------------------------

namespace detail {
/// The sizes of a tuple's arrays, to give missing gradients as zeros.
template <typename Tuple> std::vector<size_t> leaf_sizes(const Tuple& tuple) {
  std::vector<size_t> sizes;
  for_each_array(tuple, [&](const auto& a) { sizes.push_back(a.size()); });
  return sizes;
}
/// `tuple` without its arrays: what remains is its layout (the shapes of tensors).
template <typename Tuple> Tuple hollow(Tuple tuple) {
  for_each_array(tuple, [](auto& array) { array = std::decay_t<decltype(array)>(); });
  return tuple;
}
/// A tuple laid out like `like` (hollow) holding `grads`, zeros where a gradient is 0.
template <typename Tuple>
Tuple tuple_from_grads(const Tuple& like, const std::vector<Index>& grads, const std::vector<size_t>& sizes) {
  Tuple result = like;
  size_t k = 0;
  for_each_array(result, [&](auto& array) {
    using A = std::decay_t<decltype(array)>;
    array = grads.at(k) ? A::borrow(grads[k]) : zeros<A>(sizes.at(k));
    ++k;
  });
  return result;
}
template <typename Tuple> std::vector<Index> grads_from_tuple(const Tuple& tuple) {
  std::vector<Index> out;
  for_each_array(tuple, [&](const auto& array) {
    inc_ref(array.index());
    out.push_back(array.index());
  });
  return out;
}
}  // namespace detail

/// An operation with hand-written derivatives over tuples of arrays, vectors and
/// matrices. Subclass it, then call custom(std::make_shared<MyOp>(), inputs...):
/// `eval` runs with gradients suspended; `forward` maps input tangents to output
/// tangents, `backward` output adjoints to input adjoints (missing ones are zeros).
/// State saved in eval (e.g. the inputs) is kept until the outputs are freed.
template <typename In, typename Out> class CustomOp : public detail::CustomCallbacks {
 public:
  using Inputs = In;
  using Outputs = Out;
  virtual Outputs eval(const Inputs& inputs) = 0;
  virtual Outputs forward(const Inputs& grad_inputs) = 0;
  virtual Inputs backward(const Outputs& grad_outputs) = 0;

  std::vector<detail::Index> forward_grads(const std::vector<detail::Index>& g) final {
    return detail::grads_from_tuple(forward(detail::tuple_from_grads(input_layout_, g, input_sizes_)));
  }
  std::vector<detail::Index> backward_grads(const std::vector<detail::Index>& g) final {
    return detail::grads_from_tuple(backward(detail::tuple_from_grads(output_layout_, g, output_sizes_)));
  }
  /// Called by custom(): the layouts (tensor shapes) and sizes gradients are given in.
  void set_layout(const Inputs& inputs, const Outputs& outputs) {
    input_layout_ = detail::hollow(inputs);
    output_layout_ = detail::hollow(outputs);
    input_sizes_ = detail::leaf_sizes(inputs);
    output_sizes_ = detail::leaf_sizes(outputs);
  }

 private:
  Inputs input_layout_;
  Outputs output_layout_;
  std::vector<size_t> input_sizes_, output_sizes_;
};

/// Runs `op` on `args` (its Inputs) and returns its Outputs, connected to the inputs'
/// derivatives through op's forward/backward.
template <typename Op, typename... Args> auto custom(std::shared_ptr<Op> op, const Args&... args) {
  using Inputs = typename Op::Inputs;
  using Outputs = typename Op::Outputs;
  Inputs inputs{args...};
  Outputs outputs;
  {
    GradScope scope = suspend_grad();
    outputs = op->eval(detach(inputs));
  }
  op->set_layout(inputs, outputs);
  std::vector<detail::AdOperand> operands;
  for_each_array(inputs, [&](const auto& a) { operands.push_back(a.operand()); });
  std::vector<detail::Index> values;
  for_each_array(outputs, [&](const auto& a) { values.push_back(a.index()); });
  std::vector<detail::AdValue> connected = detail::ad_custom(op, operands, values);
  size_t k = 0;
  for_each_array(outputs, [&](auto& array) { array = std::decay_t<decltype(array)>::steal(connected[k++]); });
  return outputs;
}

}  // namespace kiln
