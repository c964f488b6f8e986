// Automatic differentiation (autodiff.h): per array, vector and matrix type the functions
// of autodiff.h; runtime-typed cores over lists of arrays for traversals with several
// sources or targets and for check_grads (grad_check.h), which kiln/autodiff.py calls after
// flattening Python containers; the gradient scopes; and the bridge that lets a Python
// object compute a CustomOp's derivatives. Exceptions raised by Python callbacks pass
// through the C++ core unchanged.
#include "binding.h"

#include <kiln/grad_check.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <unordered_set>

namespace kiln::python {
namespace {

/// Calls f(std::type_identity<T>{}) for every array, vector, matrix and tensor type.
template <typename F> void for_each_value_type(F&& f) {
  for_each_array_type(f);
  for_each_type<CompositeTypes>(f);
  for_each_type<TensorTypes>(f);
}

/// Calls f(array) with the C++ array behind `value`, one of the seven array types;
/// TypeError naming `what` otherwise, ValueError for an array without a value.
template <typename F> void visit_array(nb::handle value, const char* what, F&& f) {
  bool found = false;
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    if (found || !nb::isinstance<A>(value)) return;
    found = true;
    const A& array = nb::cast<const A&>(value);
    if (!array.valid())
      throw ValueError(std::string("kiln: ") + what + ": an array has no value (default-constructed); assign it first");
    f(array);
  });
  if (!found)
    throw TypeError(std::string("kiln: ") + what + ": expected a Kiln array (kl.Float, kl.Float64, ...), got " +
                    nb::type_name(value.type()).c_str());
}

detail::Index index_of(nb::handle value, const char* what) {
  detail::Index index = 0;
  visit_array(value, what, [&](const auto& array) { index = array.index(); });
  return index;
}

/// The AD node of `value`, which must be a float array carrying derivatives (as autodiff.h checks).
detail::AdIndex ad_of(nb::handle value, const char* what) {
  detail::AdIndex ad = 0;
  visit_array(value, what, [&](const auto& array) { ad = detail::require_grad(array, what); });
  return ad;
}

/// The Python array object of the class matching the node's type, taking over both
/// references (None for an empty value).
nb::object array_object(detail::AdValue value) {
  if (!value.value) return nb::none();
  VarType type = detail::node_type(value.value);
  nb::object out;
  for_each_array_type([&](auto array_type) {
    using A = typename decltype(array_type)::type;
    if (!out.is_valid() && A::Type == type) out = nb::cast(A::steal(value));
  });
  return out;
}

/// Sets `seeds[k]` as the gradient of `values[k]` and returns their AD nodes; the seeds
/// of a value given more than once add up (as autodiff.h's seed_grads()).
std::vector<detail::AdIndex> seeded(nb::list values, nb::list seeds, const char* what) {
  if (values.size() != seeds.size())
    throw ValueError(std::string("kiln: ") + what + ": " + std::to_string(values.size()) + " values but " +
                     std::to_string(seeds.size()) + " seeds");
  std::vector<detail::AdIndex> nodes;
  for (size_t k = 0; k < values.size(); ++k) {
    detail::AdIndex ad = ad_of(values[k], what);
    detail::Index seed = index_of(seeds[k], what);
    if (std::find(nodes.begin(), nodes.end(), ad) == nodes.end())
      detail::ad_set_grad(ad, seed);
    else
      detail::ad_accumulate_grad(ad, seed);
    nodes.push_back(ad);
  }
  return nodes;
}

class PythonCustomOp;
/// The live Python CustomOps (guarded by the GIL), so that _release_custom_ops() can drop
/// their Python objects at exit.
std::unordered_set<PythonCustomOp*>& live_python_ops() {
  static auto* ops = new std::unordered_set<PythonCustomOp*>();  // never destroyed, like the AD graph
  return *ops;
}

/// A CustomOp whose derivatives a Python object computes: `bridge.forward_grads(list)` and
/// `bridge.backward_grads(list)` take and return lists of plain arrays, None where there is
/// no gradient (kiln/autodiff.py's _CustomBridge, which calls the user's kl.CustomOp).
class PythonCustomOp final : public detail::CustomCallbacks {
 public:
  PythonCustomOp(nb::object bridge, std::string name) : bridge_(std::move(bridge)), name_(std::move(name)) {
    live_python_ops().insert(this);
  }
  ~PythonCustomOp() override {
    if (!Py_IsInitialized()) {  // after exit: leave the object to the OS
      (void)bridge_.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    live_python_ops().erase(this);
    bridge_.reset();
  }
  std::string name() const override { return name_; }
  std::vector<detail::Index> forward_grads(const std::vector<detail::Index>& grads) override {
    return call("forward_grads", grads);
  }
  std::vector<detail::Index> backward_grads(const std::vector<detail::Index>& grads) override {
    return call("backward_grads", grads);
  }
  /// Drops the Python object (at exit). An AD node that outlives the interpreter's
  /// modules would otherwise keep it, and through its class often the __main__ module
  /// whose globals hold the outputs: a cycle Python's collector cannot see.
  void release() { nb::object dropped = std::move(bridge_); }  // (freeing it may free this op)

 private:
  std::vector<detail::Index> call(const char* method, const std::vector<detail::Index>& grads) {
    nb::gil_scoped_acquire gil;
    std::string what = name_ + "." + (method[0] == 'f' ? "forward" : "backward") + "()";
    if (!bridge_.is_valid())
      throw ValueError("kiln: " + what + ": the Python CustomOp was released at interpreter exit");
    nb::list args;
    for (detail::Index g : grads) {
      if (g) detail::inc_ref(g);
      args.append(array_object({g, 0}));
    }
    nb::object result = bridge_.attr(method)(args);
    std::vector<detail::Handle> owned;
    for (nb::handle item : result)
      owned.push_back(item.is_none() ? detail::Handle() : detail::Handle::borrow(index_of(item, what.c_str())));
    std::vector<detail::Index> out;
    for (detail::Handle& h : owned) out.push_back(h.release());
    return out;
  }

  nb::object bridge_;
  std::string name_;
};

template <typename T> void bind_value_autodiff(nb::module_& m) {
  m.def(
      "enable_grad", [](T& value) { enable_grad(value); }, nb::arg("value"),
      "Marks `value` (in place) as an input that gradients flow to (Float / Float64 only).");
  m.def(
      "grad", [](const T& value) { return grad(value); }, nb::arg("value"),
      "The gradient accumulated for `value` (zeros when there is none).");
  m.def(
      "set_grad", [](const T& value, const T& g) { set_grad(value, g); }, nb::arg("value"), nb::arg("grad"),
      "Replaces the gradient of `value` (which must carry derivatives).");
  m.def(
      "accumulate_grad", [](const T& value, const T& g) { accumulate_grad(value, g); }, nb::arg("value"),
      nb::arg("grad"), "Adds to the gradient of `value`.");
  m.def("clear_grad", [](const T& value) { clear_grad(value); }, nb::arg("value"), "Clears the gradient of `value`.");
  m.def(
      "detach", [](const T& value) { return detach(value); }, nb::arg("value"),
      "The same value without its derivatives.");
  m.def(
      "grad_enabled", [](const T& value) { return grad_enabled(value); }, nb::arg("value"),
      "True when `value` (any component of it) carries derivatives.");
  m.def(
      "backward_from", [](const T& y, const T& seed, bool retain) { backward_from(y, seed, retain); }, nb::arg("y"),
      nb::arg("seed"), nb::arg("retain_graph") = false,
      "Reverse mode from `y` with gradient `seed`: adjoints accumulate on the inputs.");
  m.def("forward", [](const T& x) { forward(x); }, nb::arg("x"), "Forward mode from `x` with tangent 1.");
  m.def(
      "forward_from", [](const T& x, const T& seed) { forward_from(x, seed); }, nb::arg("x"), nb::arg("seed"),
      "Forward mode from `x` with tangent `seed`.");
  m.def(
      "forward_to", [](const T& y) { return forward_to(y); }, nb::arg("y"),
      "Forward mode into `y` from every node with a gradient set; returns y's tangent.");
  if constexpr (is_array_v<T>)
    m.def(
        "backward", [](const T& y, bool retain) { backward(y, retain); }, nb::arg("y"), nb::arg("retain_graph") = false,
        "Reverse mode from a one-lane `y` (a loss).");
}

}  // namespace

void bind_autodiff(nb::module_& m) {
  for_each_value_type([&](auto type) { bind_value_autodiff<typename decltype(type)::type>(m); });

  m.def(
      "_check_traversal_allowed", [](const std::string& what) { detail::ad_check_traversal_allowed(what.c_str()); },
      nb::arg("what"), "Raises when a loop, branch or call is tracing its functions (traversals start outside).");
  m.def(
      "_backward_from",
      [](nb::list ys, nb::list seeds, bool retain) {
        std::vector<detail::AdIndex> targets = seeded(ys, seeds, "backward_from()");
        detail::ad_backward(targets.data(), targets.size(), retain);
      },
      nb::arg("ys"), nb::arg("seeds"), nb::arg("retain_graph"),
      "Core of kiln.backward_from over lists of arrays: one traversal from every y.");
  m.def(
      "_forward_from",
      [](nb::list xs, nb::list seeds) {
        std::vector<detail::AdIndex> sources = seeded(xs, seeds, "forward_from()");
        detail::ad_forward(sources.data(), sources.size());
      },
      nb::arg("xs"), nb::arg("seeds"), "Core of kiln.forward_from over lists of arrays.");
  m.def(
      "_forward_to",
      [](nb::list ys) {
        std::vector<detail::AdIndex> targets;
        for (nb::handle y : ys) targets.push_back(ad_of(y, "forward_to()"));
        detail::ad_forward_to(targets.data(), targets.size());
        nb::list out;
        for (detail::AdIndex ad : targets) {
          detail::Index g = detail::ad_grad(ad);
          out.append(g ? array_object({g, 0}) : nb::none());
        }
        return out;
      },
      nb::arg("ys"), "Core of kiln.forward_to over a list of arrays: their tangents (None: zero).");
  m.def(
      "_backward_to",
      [](nb::list xs, bool retain) {
        std::vector<detail::AdIndex> sources;
        for (nb::handle x : xs) sources.push_back(ad_of(x, "backward_to()"));
        detail::ad_backward_to(sources.data(), sources.size(), retain);
      },
      nb::arg("xs"), nb::arg("retain_graph"),
      "Core of kiln.backward_to over a list of arrays: adjoints from every node computed from them.");

  m.def(
      "_check_grads",
      [](nb::callable fn, nb::handle inputs, bool forward, bool reverse, std::optional<double> eps,
         std::optional<double> rtol, std::optional<double> atol, uint64_t seed) {
        GradCheckOptions options;
        options.modes =
            GradMode((forward ? uint8_t(GradMode::Forward) : 0) | (reverse ? uint8_t(GradMode::Reverse) : 0));
        options.eps = eps;
        options.rtol = rtol;
        options.atol = atol;
        options.seed = seed;
        GradCheckResult result =
            detail::check_grads(body_function(fn, "check_grads(): f"), to_values(inputs, "check_grads()"), options);
        return std::make_pair(result.ok, result.message);
      },
      nb::arg("fn"), nb::arg("inputs"), nb::arg("forward"), nb::arg("reverse"), nb::arg("eps").none(),
      nb::arg("rtol").none(), nb::arg("atol").none(), nb::arg("seed"),
      "Core of kiln.check_grads (grad_check.h) over a list of arrays and a function of such lists: "
      "(ok, one line per failed check).");

  nb::class_<TraversalStats>(m, "TraversalStats", "What the last forward or reverse traversal visited.")
      .def_ro("nodes", &TraversalStats::nodes, "AD nodes on the requested paths.")
      .def_ro("edges", &TraversalStats::edges, "Edges between them.")
      .def("__repr__", [](const TraversalStats& s) {
        return "TraversalStats(nodes=" + std::to_string(s.nodes) + ", edges=" + std::to_string(s.edges) + ")";
      });
  m.def("last_traversal", &last_traversal, "What the last traversal visited (requested paths only).");

  m.def("_push_recording", &detail::ad_push_recording, nb::arg("enabled"),
        "Enters a suspend_grad (False) / resume_grad (True) scope.");
  m.def("_pop_recording", &detail::ad_pop_recording, "Leaves the innermost suspend_grad / resume_grad scope.");
  m.def("_push_isolation", [] { detail::ad_push_isolation(); }, "Enters an isolate_grad scope.");
  m.def("_pop_isolation", &detail::ad_pop_isolation, nb::arg("propagate") = true,
        "Leaves the innermost isolate_grad scope (propagates what reached its boundary, unless propagate=False).");
  m.def("_grad_recording", &detail::ad_recording, "Whether operations record derivatives now.");
  m.def(
      "_ad_counts", [] { return std::make_pair(detail::ad_node_count(), detail::ad_edge_count()); },
      "(live AD nodes, live AD edges), for leak checks.");
  m.def(
      "_diff_op_names",
      [] {
        std::vector<std::string> names;
        for (size_t k = 0; k < kDiffOpCount; ++k) names.push_back(diff_op_name(DiffOp(k)));
        return names;
      },
      "The names of KILN_DIFF_TABLE (every operation with a derivative rule).");

  m.def(
      "_custom",
      [](nb::object bridge, const std::string& name, nb::list inputs, nb::list outputs) {
        std::vector<detail::AdOperand> operands;
        for (nb::handle in : inputs)
          visit_array(in, "custom()", [&](const auto& a) { operands.push_back(a.operand()); });
        std::vector<detail::Index> values;
        for (nb::handle out : outputs) values.push_back(index_of(out, "custom(): eval()"));
        std::vector<detail::AdValue> connected =
            detail::ad_custom(std::make_shared<PythonCustomOp>(std::move(bridge), name), operands, values);
        nb::list result;
        for (detail::AdValue& value : connected) result.append(array_object(value));
        return result;
      },
      nb::arg("bridge"), nb::arg("name"), nb::arg("inputs"), nb::arg("outputs"),
      "Core of kiln.custom: connects `outputs` (computed from `inputs` with gradients "
      "suspended) to the inputs through bridge.forward_grads / bridge.backward_grads.");
  m.def(
      "_release_custom_ops",
      [] {
        // Releasing one may free others (their outputs' AD nodes): work on a copy.
        std::vector<PythonCustomOp*> ops(live_python_ops().begin(), live_python_ops().end());
        for (PythonCustomOp* op : ops)
          if (live_python_ops().count(op)) op->release();
      },
      "Drops the Python objects of every live CustomOp (kiln registers it with atexit).");
}

}  // namespace kiln::python
