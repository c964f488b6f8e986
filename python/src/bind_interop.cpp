// Zero-copy interop: arrays wrap NumPy / DLPack memory (kept alive while Kiln uses it) and
// hand their own memory out through __dlpack__, numpy() and kl.from_dlpack(). Vectors and
// matrices convert to (n, N) / (n, N, N) arrays through one flat array (flatten()).
#include "binding.h"

#include <nanobind/ndarray.h>

namespace kiln::python {
namespace {

template <typename T, typename... Extra>
using HostArray = nb::ndarray<T, nb::c_contig, nb::device::cpu, Extra...>;

/// Keeps a Python-owned buffer alive while Kiln uses it; released with the GIL held (and
/// never after the interpreter is gone).
template <typename Handle> std::shared_ptr<void> python_owner(const Handle& handle) {
  return std::shared_ptr<void>(new Handle(handle), [](void* p) {
    if (!Py_IsInitialized()) return;  // at exit: leave it to the OS
    nb::gil_scoped_acquire gil;
    delete static_cast<Handle*>(p);
  });
}

/// An array over the memory of a C-contiguous host array, without a copy; read-only
/// memory is copied, since scatters may write an array's memory in place.
template <typename A, typename Handle> A wrap_host_array(const Handle& array, size_t count) {
  using T = typename A::Value;
  return A::wrap(static_cast<T*>(const_cast<void*>(static_cast<const void*>(array.data()))), count,
                 python_owner(array));
}

/// The memory of `flat` (evaluated now) as a host array of `shape`, owned by a capsule
/// holding a reference to the array. As a Python object it speaks the array API
/// (__dlpack__ with its keywords, the buffer protocol).
template <typename A> nb::ndarray<nb::array_api> export_memory(const A& flat, std::initializer_list<size_t> shape) {
  if (!flat.valid())
    throw ValueError("kiln: numpy() / __dlpack__(): the array has no value (default-constructed); assign one first");
  A* kept = new A(flat);
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<A*>(p); });
  void* data = const_cast<void*>(static_cast<const void*>(kept->data()));
  return nb::ndarray<nb::array_api>(data, shape.size(), shape.begin(), owner, nullptr,
                                    nb::dtype<typename A::Value>(), nb::device::cpu::value);
}


}  // namespace

template <typename A> void bind_array_interop(nb::class_<A>& cls) {
  using T = typename A::Value;
  cls.def("__init__",
          [](A* self, const HostArray<T, nb::ndim<1>>& array) { new (self) A(wrap_host_array<A>(array, array.size())); },
          nb::arg("array"),
          "Wraps a 1-D C-contiguous NumPy array or DLPack tensor of the same dtype without a copy "
          "(it stays alive while Kiln uses it; writes are seen on both sides). Other dtypes and "
          "layouts are converted first (a copy).");
  cls.def("__init__",
          [](A* self, const HostArray<const T, nb::ndim<1>>& array) {
            new (self) A(A::from(array.data(), array.size()));
          },
          nb::arg("array"), "Copies a read-only 1-D array (Kiln may write an array's memory in place).");
  cls.def("_export", [](const A& a) { return export_memory(a, {a.size()}); },
          "The memory (evaluated now) as an array-API object sharing it.");
  cls.def("numpy", [](const A& a) { return nb::ndarray<nb::numpy>(export_memory(a, {a.size()})); },
          "Evaluates and returns a NumPy array sharing the memory (no copy).");
}

template <typename V> void bind_composite_interop(nb::class_<V>& cls) {
  using T = typename V::Component::Value;
  constexpr size_t K = component_count_v<V>;
  auto exported = [](const V& value) {
    typename V::Component flat = flatten(value);
    size_t lanes = flat.size() / K;
    if constexpr (is_matrix_v<V>) return export_memory(flat, {lanes, V::Size, V::Size});
    else return export_memory(flat, {lanes, V::Size});
  };
  using Shaped = std::conditional_t<is_matrix_v<V>, nb::shape<-1, V::Size, V::Size>, nb::shape<-1, V::Size>>;
  cls.def("__init__",
          [](V* self, const HostArray<T, Shaped>& array) {
            new (self) V(unflatten<V>(wrap_host_array<typename V::Component>(array, array.size())));
          },
          nb::arg("array"),
          "Reads an (n, N) (vectors) or (n, N, N) (matrices) C-contiguous array: the components "
          "gather from its memory (kept alive) when they are evaluated; from then on they are "
          "Kiln's own arrays (a vector is a struct of arrays, the NumPy array interleaves them).");
  cls.def("__init__",
          [](V* self, const HostArray<const T, Shaped>& array) {
            new (self) V(unflatten<V>(V::Component::from(array.data(), array.size())));
          },
          nb::arg("array"), "Copies a read-only (n, N) / (n, N, N) array.");
  cls.def("_export", exported, "The lanes (evaluated now) as one (n, N) / (n, N, N) nb.ndarray.");
  cls.def("numpy", [=](const V& value) { return nb::ndarray<nb::numpy>(exported(value)); },
          "Evaluates into one flat buffer and returns it as an (n, N) / (n, N, N) NumPy array.");
}

#define KILN_INSTANTIATE(A) template void bind_array_interop<A>(nb::class_<A>&);
KILN_INSTANTIATE(Bool) KILN_INSTANTIATE(Int32) KILN_INSTANTIATE(UInt32) KILN_INSTANTIATE(Int64)
KILN_INSTANTIATE(UInt64) KILN_INSTANTIATE(Float) KILN_INSTANTIATE(Float64)
#undef KILN_INSTANTIATE
#define KILN_INSTANTIATE(V) template void bind_composite_interop<V>(nb::class_<V>&);
KILN_INSTANTIATE(Array2f) KILN_INSTANTIATE(Array3f) KILN_INSTANTIATE(Array4f) KILN_INSTANTIATE(Array2u)
KILN_INSTANTIATE(Array3u) KILN_INSTANTIATE(Array2i) KILN_INSTANTIATE(Array3i) KILN_INSTANTIATE(Array3f64)
KILN_INSTANTIATE(Matrix2f) KILN_INSTANTIATE(Matrix3f) KILN_INSTANTIATE(Matrix4f)
#undef KILN_INSTANTIATE

void bind_interop(nb::module_& m) {
  m.def("from_dlpack",
        [](const nb::ndarray<nb::c_contig, nb::device::cpu, nb::ndim<1>>& array) -> nb::object {
          nb::object result;
          for_each_array_type([&](auto type) {
            using A = typename decltype(type)::type;
            if (!result.is_valid() && array.dtype() == nb::dtype<typename A::Value>())
              result = nb::cast(wrap_host_array<A>(array, array.size()));
          });
          if (!result.is_valid())
            throw TypeError("kiln: from_dlpack(): the tensor's dtype (code " + std::to_string(array.dtype().code) +
                            ", " + std::to_string(array.dtype().bits) +
                            " bits) has no Kiln array type; convert it to bool, int32/64, uint32/64 or float32/64");
          return result;
        },
        nb::arg("tensor"),
        "The Kiln array over any 1-D C-contiguous CPU DLPack tensor or NumPy array, without a copy; "
        "the array type follows the dtype.");
}

}  // namespace kiln::python
