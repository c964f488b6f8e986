// Construction and shape with Dr.Jit's names (construct.h): kl.ones, kl.zeros / full /
// ones / empty of vectors and matrices (kl.zeros(kl.Array3f, n)), kl.repeat, kl.tile,
// kl.meshgrid, kl.ravel / kl.unravel, kl.width and kl.shape; and _VALUE_CLASSES, the
// lists of value classes that the Python layer (kiln.tree, kiln.autodiff) reads.
#include "binding.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python {
namespace {

/// "xy" (false) or "ij" (true); anything else raises ValueError.
bool matrix_indexing(const std::string& indexing) {
  if (indexing == "xy") return false;
  if (indexing == "ij") return true;
  throw ValueError("kiln: meshgrid(): indexing must be 'xy' (the default, as NumPy) or 'ij', got '" + indexing + "'");
}

template <typename A> void bind_array_layout(nb::module_& m) {
  using T = typename A::Value;
  m.def(
      "ones", [](nb::type_object_t<A>, int64_t size) { return ones<A>(to_size(size, "ones")); }, nb::arg("type"),
      nb::arg("size") = 1, "`size` ones (a literal: no memory until evaluated).");
  m.def("width", [](const A& a) { return width(a); }, nb::arg("x"), "Number of lanes.");
  m.def(
      "shape", [](const A& a) { return nb::tuple(nb::cast(shape(a))); }, nb::arg("x"),
      "(n,) for an array of n lanes (Dr.Jit's shape).");
  m.def("ravel", [](const A& a) { return ravel(a); }, nb::arg("x"), "An array is already flat: returned as it is.");
  if constexpr (!std::is_same_v<T, bool>) {
    m.def(
        "repeat", [](const A& a, int64_t count) { return repeat(a, to_size(count, "repeat")); }, nb::arg("x"),
        nb::arg("count"), "Each element `count` times in a row: repeat([a, b], 2) = [a, a, b, b] (numpy.repeat).");
    m.def(
        "tile", [](const A& a, int64_t count) { return tile(a, to_size(count, "tile")); }, nb::arg("x"),
        nb::arg("count"), "The whole array `count` times: tile([a, b], 2) = [a, b, a, b] (numpy.tile).");
    m.def(
        "meshgrid",
        [](const A& x, const A& y, const std::string& indexing) {
          auto [gx, gy] = meshgrid(x, y, matrix_indexing(indexing));
          return nb::make_tuple(gx, gy);
        },
        nb::arg("x"), nb::arg("y"), nb::kw_only(), nb::arg("indexing") = "xy",
        "Coordinate arrays of the grid of x and y, flattened: 'xy' (default, as NumPy and Dr.Jit) "
        "varies x fastest, 'ij' varies y fastest.");
    m.def(
        "meshgrid",
        [](const A& x, const A& y, const A& z, const std::string& indexing) {
          auto [gx, gy, gz] = meshgrid(x, y, z, matrix_indexing(indexing));
          return nb::make_tuple(gx, gy, gz);
        },
        nb::arg("x"), nb::arg("y"), nb::arg("z"), nb::kw_only(), nb::arg("indexing") = "xy",
        "Coordinate arrays of the 3-D grid, flattened in NumPy's order ('xy': axes y, x, z from "
        "slowest to fastest; 'ij': x, y, z).");
  }
}

template <typename V> void bind_composite_layout(nb::module_& m) {
  using T = PythonScalar<typename V::Component::Value>;
  m.def(
      "full", [](nb::type_object_t<V>, T value, int64_t size) { return full<V>(value, to_size(size, "full")); },
      nb::arg("type"), nb::arg("value"), nb::arg("size") = 1, "Every component equal to `value`, `size` lanes.");
  m.def(
      "zeros", [](nb::type_object_t<V>, int64_t size) { return zeros<V>(to_size(size, "zeros")); }, nb::arg("type"),
      nb::arg("size") = 1, "Every component zero, `size` lanes.");
  m.def(
      "ones", [](nb::type_object_t<V>, int64_t size) { return ones<V>(to_size(size, "ones")); }, nb::arg("type"),
      nb::arg("size") = 1, "Every component one, `size` lanes (for matrices, not the identity: see identity()).");
  m.def(
      "empty", [](nb::type_object_t<V>, int64_t size) { return empty<V>(to_size(size, "empty")); }, nb::arg("type"),
      nb::arg("size") = 1, "Uninitialized components of `size` lanes (allocated now).");
  m.def("width", [](const V& v) { return width(v); }, nb::arg("x"), "Number of lanes.");
  m.def(
      "shape", [](const V& v) { return nb::tuple(nb::cast(shape(v))); }, nb::arg("x"),
      "Dr.Jit's shape: (N, n) for a vector, (N, N, n) for a matrix of n lanes.");
  m.def(
      "ravel", [](const V& v) { return ravel(v); }, nb::arg("x"),
      "The lanes back to back in one flat array (component j of lane i at K * i + j).");
  m.def(
      "unravel", [](nb::type_object_t<V>, const typename V::Component& flat) { return unravel<V>(flat); },
      nb::arg("type"), nb::arg("array"), "The inverse of ravel(): a `type` value from a flat array.");
}

}  // namespace

void bind_layout(nb::module_& m) {
  for_each_array_type([&](auto type) { bind_array_layout<typename decltype(type)::type>(m); });
  std::apply([&](auto... composites) { (bind_composite_layout<decltype(composites)>(m), ...); }, CompositeTypes{});
}

void bind_value_classes(nb::module_& m) {
  nb::list arrays, tensors, differentiable;
  nb::dict vectors, matrices;
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    arrays.append(nb::type<A>());
    if constexpr (is_float_array_v<A>) differentiable.append(nb::type<A>());
  });
  // (component class, number of arrays) of each vector and matrix class.
  auto add_composite = [&]<typename V>(std::type_identity<V>, nb::dict& table, size_t arrays_per_value) {
    table[nb::type<V>()] = nb::make_tuple(nb::type<typename V::Component>(), arrays_per_value);
    if constexpr (is_float_array_v<typename V::Component>) differentiable.append(nb::type<V>());
  };
  for_each_type<VectorTypes>([&](auto type) { add_composite(type, vectors, decltype(type)::type::Size); });
  for_each_type<MatrixTypes>([&](auto type) {
    using M = typename decltype(type)::type;
    add_composite(type, matrices, M::Size * M::Size);
  });
  for_each_type<TensorTypes>([&](auto type) {
    using T = typename decltype(type)::type;
    tensors.append(nb::type<T>());
    if constexpr (std::is_floating_point_v<typename T::Value>) differentiable.append(nb::type<T>());
  });
  nb::dict classes;
  classes["arrays"] = nb::tuple(arrays), classes["vectors"] = vectors, classes["matrices"] = matrices;
  classes["tensors"] = nb::tuple(tensors), classes["differentiable"] = nb::tuple(differentiable);
  m.attr("_VALUE_CLASSES") = classes;
}

}  // namespace kiln::python
