// kiln.Matrix2f / 3f / 4f: one N x N matrix per lane, with entry access, products,
// transpose, determinant, inverse and the 4 x 4 transforms of points, vectors and normals.
#include "binding.h"

#include <nanobind/operators.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>

namespace kiln::python {
namespace {

template <typename M> typename M::Component& entry(M& m, std::pair<int64_t, int64_t> at) {
  return m(to_index(at.first, M::Size, "Matrix[row, col]"), to_index(at.second, M::Size, "Matrix[row, col]"));
}

/// T, once per index of a pack.
template <size_t, typename T> using Repeat = T;

template <typename M, size_t... I> void bind_entry_constructor(nb::class_<M>& cls, std::index_sequence<I...>) {
  using T = typename M::Component;
  cls.def(nb::init<Repeat<I, const T&>...>(), "N * N entries in row-major order (arrays or plain numbers).");
}

/// Dr.Jit's constructors: rows given as N sequences of N entries, or one number on the
/// diagonal (Matrix3f(2) is 2·I).
template <typename M> void bind_dr_constructors(nb::class_<M>& cls) {
  using T = typename M::Component;
  constexpr size_t N = M::Size;
  cls.def(
      "__init__",
      [](M* self, const std::array<std::array<T, N>, N>& rows) {
        new (self) M();
        for (size_t r = 0; r < N; ++r)
          for (size_t c = 0; c < N; ++c) (*self)(r, c) = rows[r][c];
      },
      nb::arg("rows"), "From N rows of N entries (nested lists or tuples of numbers or arrays).");
  cls.def(
      "__init__",
      [](M* self, double diagonal) {
        new (self) M();
        for (size_t r = 0; r < N; ++r)
          for (size_t c = 0; c < N; ++c) (*self)(r, c) = T(typename T::Value(r == c ? diagonal : 0.0));
      },
      nb::arg("diagonal"), "`diagonal` times the identity.");
}

template <typename M> void bind_matrix_type(nb::module_& m, const char* name) {
  using T = typename M::Component;
  constexpr size_t N = M::Size;
  using V = Vector<T, N>;
  nb::class_<M> cls(m, name, "An N x N matrix per lane, entries stored row-major (a struct of arrays).");
  cls.def(nb::init<>(), "Entries without values (assign them before use).")
      .def(nb::init<const M&>(), nb::arg("other"), "Shares the entries of `other`.")
      .def_static("identity", &M::identity, "The identity matrix (size-1 entries).")
      .def(
          "__getitem__", [](M& mat, std::pair<int64_t, int64_t> at) { return entry(mat, at); }, nb::arg("index"),
          "Entry (row, col).")
      .def(
          "__setitem__", [](M& mat, std::pair<int64_t, int64_t> at, const T& value) { entry(mat, at) = value; },
          nb::arg("index"), nb::arg("value"), "Sets entry (row, col).")
      .def("__len__", [](const M&) { return N; }, "Number of rows.");
  bind_entry_constructor(cls, std::make_index_sequence<N * N>{});
  bind_dr_constructors(cls);
  cls.def(nb::self + nb::self)
      .def(nb::self - nb::self)
      .def(nb::self * nb::self)
      .def(nb::self * T())
      .def(T() * nb::self)
      .def(
          "__matmul__", [](const M& a, const M& b) { return a * b; }, nb::is_operator())
      .def(
          "__mul__", [](const M& a, const V& v) { return a * v; }, nb::is_operator())
      .def("__matmul__", [](const M& a, const V& v) { return a * v; }, nb::is_operator());
  m.def("transpose", [](const M& a) { return transpose(a); }, nb::arg("m"), "The transposed matrix.");
  m.def("determinant", [](const M& a) { return determinant(a); }, nb::arg("m"), "Per-lane determinant.");
  m.def(
      "inverse", [](const M& a) { return inverse(a); }, nb::arg("m"),
      "The inverse (adjugate over determinant); a singular matrix gives non-finite entries.");
  if constexpr (N == 4) {
    m.def(
        "transform_point", [](const M& a, const Array3f& p) { return transform_point(a, p); }, nb::arg("m"),
        nb::arg("p"), "m applied to (p, 1), then the homogeneous divide.");
    m.def(
        "transform_vector", [](const M& a, const Array3f& v) { return transform_vector(a, v); }, nb::arg("m"),
        nb::arg("v"), "m applied to (v, 0): no translation.");
    m.def(
        "transform_normal", [](const M& a, const Array3f& n) { return transform_normal(a, n); }, nb::arg("m"),
        nb::arg("n"), "The inverse transpose of m's linear part applied to n (not normalized).");
  }
  bind_composite_interop(cls);
}

}  // namespace

void bind_matrix(nb::module_& m) {
  bind_matrix_type<Matrix2f>(m, "Matrix2f");
  bind_matrix_type<Matrix3f>(m, "Matrix3f");
  bind_matrix_type<Matrix4f>(m, "Matrix4f");
}

}  // namespace kiln::python
