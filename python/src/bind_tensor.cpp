// kiln.TensorXf / TensorXd / TensorXu / TensorXi / TensorXb (tensor.h): construction from a
// flat array and a shape or from a NumPy array, shape queries, reshape/slice/transpose/
// broadcast, broadcasting operators, reductions along an axis, the math functions, cumsum,
// concatenate and matmul. Indexing syntax, NumPy export and repr are plain Python
// (kiln/tensor.py).
#include "host_values.h"

#include <nanobind/operators.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <source_location>

namespace kiln::python {
namespace {

template <typename X> X scalar_tensor(typename X::Value value) {
  return X(Array<typename X::Value>(value, std::source_location()), Shape{});
}

nb::tuple shape_tuple(const Shape& shape) {
  nb::list out;
  for (size_t d : shape) out.append(d);
  return nb::tuple(out);
}

/// Binds `fn` for tensor ∘ scalar, tensor ∘ tensor, tensor ∘ NumPy array and the reflections.
template <typename X, typename F>
void bind_tensor_binary(nb::class_<X>& cls, const char* name, const char* rname, F fn) {
  using S = PythonScalar<typename X::Value>;
  cls.def(
         name, [=](const X& a, S b) { return fn(a, scalar_tensor<X>(b)); }, nb::is_operator())
      .def(
          name, [=](const X& a, const X& b) { return fn(a, b); }, nb::is_operator())
      .def(
          name, [=](const X& a, const NumpyOperand& b) { return fn(a, b.as<X>()); }, nb::is_operator())
      .def(
          rname, [=](const X& a, S b) { return fn(scalar_tensor<X>(b), a); }, nb::is_operator())
      .def(rname, [=](const X& a, const NumpyOperand& b) { return fn(b.as<X>(), a); }, nb::is_operator());
  // A flat array operand is a tensor of one axis, as in Dr.Jit (`mi.Float(0) + dr.mean(image)`,
  // a shape-() tensor, broadcasts to a tensor).
  using A = typename X::ArrayType;
  cls.def(
         name, [=](const X& a, const A& b) { return fn(a, X(b)); }, nb::is_operator())
      .def(rname, [=](const X& a, const A& b) { return fn(X(b), a); }, nb::is_operator());
}
#define KILN_BIND_TENSOR_BINARY(name, rname, symbol) \
  bind_tensor_binary(cls, name, rname, [](const X& a, const X& b) { return a symbol b; });

#define KILN_BIND_TENSOR_COMPARISON(name, symbol)                                               \
  cls.def(                                                                                      \
         name, [](const X& a, S b) { return a symbol scalar_tensor<X>(b); }, nb::is_operator()) \
      .def(                                                                                     \
          name, [](const X& a, const X& b) { return a symbol b; }, nb::is_operator())           \
      .def(name, [](const X& a, const NumpyOperand& b) { return a symbol b.as<X>(); }, nb::is_operator());

/// The value of a one-element tensor (any number of axes, as NumPy's item()); more elements
/// raise `Error` (NumPy's choice: ValueError for bool(), TypeError for float() and int()).
template <typename Error, typename X> typename X::Value only_element(const X& t, const char* call, const char* hint) {
  if (t.size() != 1)
    throw Error(std::string("kiln: ") + call + ": the tensor of shape " + detail::shape_string(t.shape()) + " has " +
                std::to_string(t.size()) + " elements, so " + hint);
  return t.array().item();
}

template <typename X> void bind_tensor_type(nb::module_& m, const char* name, const char* doc) {
  using T = typename X::Value;
  using A = Array<T>;
  using S = PythonScalar<T>;
  nb::class_<X> cls(m, name, doc);
  cls.def(nb::init<>(), "An empty tensor (assign one before use).")
      .def(nb::init<const X&>(), nb::arg("tensor"),
           "The same tensor (its array and derivatives shared, as kl.Float(x) does for arrays; not a copy "
           "through NumPy).")
      .def(nb::init<A, Shape>(), nb::arg("array"), nb::arg("shape"),
           "`array` (flat, row-major) viewed with `shape`; a one-element array fills the shape.")
      .def(nb::init<A>(), nb::arg("array"), "A 1-D tensor over `array`.")
      .def_prop_ro(
          "shape", [](const X& t) { return shape_tuple(t.shape()); }, "Extent of each axis.")
      .def_prop_ro("ndim", &X::ndim, "Number of axes.")
      .def_prop_ro(
          "array", [](const X& t) { return t.array(); }, "The flat array (row-major), no copy.")
      .def("size", &X::size, "Number of elements.")
      .def(
          "assign",
          [](X& self, const X& other) {
            if (self.shape() != other.shape())
              throw SizeError("kiln: Tensor.assign(): shape " + detail::shape_string(other.shape()) +
                              " given for a tensor of shape " + detail::shape_string(self.shape()));
            self = other;
          },
          nb::arg("other"),
          "Makes this tensor refer to `other` (same shape), derivatives included: an in-place update "
          "(optimizers).")
      .def("__len__",
           [](const X& t) {
             if (t.ndim() == 0) throw TypeError("kiln: len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def(
          "reshape", [](const X& t, const std::vector<int64_t>& shape) { return t.reshape(shape); }, nb::arg("shape"),
          "The same elements with another shape (one extent may be -1).")
      .def("slice", &X::slice, nb::arg("axis"), nb::arg("start"), nb::arg("stop"), nb::arg("step") = 1,
           "Entries start:stop:step along `axis` (Python slice semantics).")
      .def(
          "index", [](const X& t, int64_t i) { return t[i]; }, nb::arg("i"),
          "Entry `i` of the leading axis, without that axis.")
      .def("broadcast_to", &X::broadcast_to, nb::arg("shape"), "Repeated along axes of extent 1 to `shape`.")
      .def(
          "transpose",
          [](const X& t, std::optional<std::vector<size_t>> axes) { return axes ? t.transpose(*axes) : t.transpose(); },
          nb::arg("axes") = nb::none(), "Axes permuted (axis i of the result is axes[i]); reversed when None.");
  std::string what = std::string(name) + "(array)";
  cls.def(
      "__init__",
      [what](X* self, const AnyHostValues& values) {
        new (self) X(host_values<A>(values, what), Shape(values.shape_ptr(), values.shape_ptr() + values.ndim()));
      },
      nb::arg("values"),
      (std::string("An evaluated copy of a NumPy array (any number of axes).") + kConversionRule).c_str());
  cls.def(
         "item", [](const X& t) { return only_element<ValueError>(t, "item()", "it has no single value"); },
         "The value of a one-element tensor (any shape, 0-d included).")
      .def("__bool__",
           [](const X& t) {
             return bool(
                 only_element<ValueError>(t, "bool()", "its truth value is ambiguous; use kl.any() or kl.all()"));
           })
      .def("__float__",
           [](const X& t) {
             return double(only_element<TypeError>(t, "float()", "it is not one number; index it first"));
           })
      .def("__int__", [](const X& t) {
        return python_int(only_element<TypeError>(t, "int()", "it is not one number; index it first"));
      });

  KILN_BIND_TENSOR_COMPARISON("__eq__", ==)
  KILN_BIND_TENSOR_COMPARISON("__ne__", !=)
  KILN_BIND_TENSOR_COMPARISON("__lt__", <)
  KILN_BIND_TENSOR_COMPARISON("__le__", <=)
  KILN_BIND_TENSOR_COMPARISON("__gt__", >)
  KILN_BIND_TENSOR_COMPARISON("__ge__", >=)
  if constexpr (std::is_same_v<T, bool>) {
    KILN_BIND_TENSOR_BINARY("__and__", "__rand__", &)
    KILN_BIND_TENSOR_BINARY("__or__", "__ror__", |)
    cls.def("__invert__", [](const X& a) { return !a; });
  } else {
    KILN_BIND_TENSOR_BINARY("__add__", "__radd__", +)
    KILN_BIND_TENSOR_BINARY("__sub__", "__rsub__", -)
    KILN_BIND_TENSOR_BINARY("__mul__", "__rmul__", *)
    if constexpr (std::is_floating_point_v<T>) {
      KILN_BIND_TENSOR_BINARY("__truediv__", "__rtruediv__", /)
      bind_tensor_binary(cls, "__floordiv__", "__rfloordiv__", floor_divide<X>);
      bind_tensor_binary(cls, "__mod__", "__rmod__", [](const X& a, const X& b) {
        return detail::broadcasting(a, b, "Tensor %", floor_remainder<A>);
      });
    } else {
      auto refuse = [name](const X&, nb::handle) -> X { throw no_true_division(name); };
      cls.def("__truediv__", refuse, nb::is_operator()).def("__rtruediv__", refuse, nb::is_operator());
      KILN_BIND_TENSOR_BINARY("__floordiv__", "__rfloordiv__", /)
      KILN_BIND_TENSOR_BINARY("__mod__", "__rmod__", %)
    }
    cls.def("__neg__", [](const X& a) { return -a; })
        .def("__abs__", [](const X& a) { return abs(a); })
        .def(
            "sum", [](const X& t, std::optional<int64_t> axis) { return axis ? sum(t, *axis) : sum(t); },
            nb::arg("axis") = nb::none(), "Sums along `axis` (which disappears), or of every element (0-d).")
        .def(
            "mean", [](const X& t, std::optional<int64_t> axis) { return axis ? mean(t, *axis) : mean(t); },
            nb::arg("axis") = nb::none(), "Means along `axis` (which disappears), or of every element (0-d).");
    m.def(
        "concatenate", [](const std::vector<X>& parts, int64_t axis) { return concatenate(parts, axis); },
        nb::arg("tensors"), nb::arg("axis") = 0, "The tensors joined along `axis`.");
    m.def("min", [](const X& a, const X& b) { return min(a, b); }, "Elementwise minimum (broadcasting).");
    m.def("max", [](const X& a, const X& b) { return max(a, b); }, "Elementwise maximum (broadcasting).");
    m.def(
        "select", [](const TensorXb& mask, const X& t, const X& f) { return select(mask, t, f); }, nb::arg("mask"),
        nb::arg("t"), nb::arg("f"), "Elementwise mask ? t : f (broadcasting).");
  }
  if constexpr (std::is_floating_point_v<T>) {
    cls.def(
           "__matmul__", [](const X& a, const X& b) { return matmul(a, b); }, nb::is_operator())
        .def(
            "__pow__", [](const X& a, S b) { return pow(a, scalar_tensor<X>(b)); }, nb::is_operator())
        .def("__pow__", [](const X& a, const X& b) { return pow(a, b); }, nb::is_operator());
    m.def(
        "matmul", [](const X& a, const X& b) { return matmul(a, b); }, nb::arg("a"), nb::arg("b"),
        "The matrix product of a (..., k) and b (k, n) through OpenBLAS: an evaluation boundary (operands "
        "evaluated, result materialized, a 'library' entry in kernel_history()).");
    m.def(
        "cumsum", [](const X& t, bool exclusive) { return cumsum(t, exclusive); }, nb::arg("tensor"),
        nb::arg("exclusive") = false,
        "Running sums along the last axis, accumulated in double precision (exclusive: leaving out each "
        "entry's own value).");
#define KILN_BIND_TENSOR_MATH(fn) m.def(#fn, [](const X& t) { return fn(t); }, "Elementwise " #fn " of a tensor.")
    KILN_BIND_TENSOR_MATH(abs);
    m.def(
        "sum", [](const X& t, std::optional<int64_t> axis) { return axis ? sum(t, *axis) : sum(t); }, nb::arg("x"),
        nb::arg("axis") = nb::none(), "A tensor's sums along `axis`, or of every entry (0-d): x.sum(axis).");
    m.def(
        "mean", [](const X& t, std::optional<int64_t> axis) { return axis ? mean(t, *axis) : mean(t); }, nb::arg("x"),
        nb::arg("axis") = nb::none(), "A tensor's means along `axis`, or of every entry (0-d): x.mean(axis).");
    m.def("square", [](const X& t) { return t * t; }, nb::arg("x"), "Elementwise t * t of a tensor.");
    m.def(
        "shape", [](const X& t) { return shape_tuple(t.shape()); }, nb::arg("x"),
        "A tensor's extent along each axis (Dr.Jit's shape: x.shape).");
    m.def(
        "clip", [](const X& t, S lo, S hi) { return min(max(t, scalar_tensor<X>(lo)), scalar_tensor<X>(hi)); },
        nb::arg("x"), nb::arg("lo"), nb::arg("hi"), "A tensor's entries limited to [lo, hi].");
    KILN_BIND_TENSOR_MATH(sqrt);
    KILN_BIND_TENSOR_MATH(rcp);
    KILN_BIND_TENSOR_MATH(rsqrt);
    KILN_BIND_TENSOR_MATH(floor);
    KILN_BIND_TENSOR_MATH(ceil);
    KILN_BIND_TENSOR_MATH(round);
    KILN_BIND_TENSOR_MATH(trunc);
    KILN_BIND_TENSOR_MATH(exp);
    KILN_BIND_TENSOR_MATH(exp2);
    KILN_BIND_TENSOR_MATH(log);
    KILN_BIND_TENSOR_MATH(log2);
    KILN_BIND_TENSOR_MATH(sin);
    KILN_BIND_TENSOR_MATH(cos);
    KILN_BIND_TENSOR_MATH(tan);
    KILN_BIND_TENSOR_MATH(asin);
    KILN_BIND_TENSOR_MATH(acos);
    KILN_BIND_TENSOR_MATH(atan);
    KILN_BIND_TENSOR_MATH(sinh);
    KILN_BIND_TENSOR_MATH(cosh);
    KILN_BIND_TENSOR_MATH(tanh);
    KILN_BIND_TENSOR_MATH(erf);
    KILN_BIND_TENSOR_MATH(cbrt);
#undef KILN_BIND_TENSOR_MATH
  }
}
#undef KILN_BIND_TENSOR_BINARY
#undef KILN_BIND_TENSOR_COMPARISON

}  // namespace

void bind_tensor(nb::module_& m) {
  bind_tensor_type<TensorXf>(m, "TensorXf", "An n-d tensor of 32-bit floats over a flat kl.Float (row-major).");
  bind_tensor_type<TensorXd>(m, "TensorXd", "An n-d tensor of 64-bit floats over a flat kl.Float64 (row-major).");
  bind_tensor_type<TensorXu>(m, "TensorXu", "An n-d tensor of 32-bit unsigned integers over a flat kl.UInt32.");
  bind_tensor_type<TensorXi>(m, "TensorXi", "An n-d tensor of 32-bit signed integers over a flat kl.Int32.");
  bind_tensor_type<TensorXb>(m, "TensorXb", "An n-d tensor of booleans over a flat kl.Bool (comparison results).");
}

}  // namespace kiln::python
