// Zero-copy interop: arrays wrap NumPy / DLPack memory (kept alive while Kiln uses it) and
// hand their own memory out through __dlpack__, numpy() and kl.from_dlpack(). Vectors and
// matrices convert to (n, N) / (n, N, N) arrays through one flat array (flatten()). Host
// arrays of another dtype are copied under the rule of host_values(): a conversion that
// could change a value is refused with a TypeError naming the explicit ways.
#include "host_values.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <numeric>
#include <optional>
#include <utility>

namespace kiln::python {
namespace {

/// A writable C-contiguous host array of any dtype (read-only ones: AnyHostArray<nb::ro>).
template <typename... Extra> using AnyHostArray = nb::ndarray<nb::c_contig, nb::device::cpu, Extra...>;

/// NumPy's name of a dtype: "float64", "uint8", "bool".
std::string dtype_name(nb::dlpack::dtype dtype) {
  switch (nb::dlpack::dtype_code(dtype.code)) {
    case nb::dlpack::dtype_code::Bool: return "bool";
    case nb::dlpack::dtype_code::Int: return "int" + std::to_string(dtype.bits);
    case nb::dlpack::dtype_code::UInt: return "uint" + std::to_string(dtype.bits);
    case nb::dlpack::dtype_code::Float: return "float" + std::to_string(dtype.bits);
    case nb::dlpack::dtype_code::Complex: return "complex" + std::to_string(dtype.bits);
    default: return "dtype code " + std::to_string(dtype.code) + " (" + std::to_string(dtype.bits) + " bits)";
  }
}

/// The host dtypes host_values() reads.
using HostDtypes =
    std::tuple<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, double>;

/// `count` values of type S at `data` as a Kiln array of T (a copy), or TypeError when the
/// conversion could change a value: by kind (float to integer or bool, numbers to bool), or,
/// for integers to integers, because an element is out of T's range.
template <typename T, typename S> Array<T> convert_values(const S* data, size_t count, const std::string& what) {
  using A = Array<T>;
  std::string explicit_ways = "; convert explicitly: x.astype(np." + dtype_name(nb::dtype<T>()) +
                              ") (NumPy's conversion), or kl.cast(kl." + python_name<A>() +
                              ", y) on a Kiln array y of the source type";
  constexpr bool integers =
      std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_integral_v<S> && !std::is_same_v<S, bool>;
  if constexpr (!implicit_conversion_v<T, S> && !integers) {
    throw TypeError("kiln: " + what + ": converting " + dtype_name(nb::dtype<S>()) + " to " +
                    dtype_name(nb::dtype<T>()) + " can change values (fractions, signs, range)" + explicit_ways);
  } else {
    using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
    std::vector<Stored> values(count);
    for (size_t i = 0; i < count; ++i) {
      if constexpr (integers)
        if (!std::in_range<T>(data[i]))
          throw TypeError("kiln: " + what + ": element " + std::to_string(i) + " (" + std::to_string(data[i]) +
                          ") is out of the range of " + dtype_name(nb::dtype<T>()) + explicit_ways);
      values[i] = Stored(data[i]);
    }
    return A::steal(detail::make_copy(A::Type, values.data(), count));
  }
}

/// Keeps a Python-owned buffer alive while Kiln uses it; released with the GIL held (and
/// never after the interpreter is gone).
template <typename Handle> std::shared_ptr<void> python_owner(const Handle& handle) {
  return std::shared_ptr<void>(new Handle(handle), [](void* p) {
    if (!Py_IsInitialized()) return;  // at exit: leave it to the OS
    nb::gil_scoped_acquire gil;
    delete static_cast<Handle*>(p);
  });
}

/// An array on `device` over the memory of a C-contiguous host array: without a copy where
/// the device's memory is the host's (the CPU, the emulated device), else copied there.
template <typename A, typename Handle> A wrap_host_array(const Handle& array, size_t count, Device device) {
  using T = typename A::Value;
  A wrapped = A::wrap(static_cast<T*>(const_cast<void*>(static_cast<const void*>(array.data()))), count,
                      python_owner(array), is_gpu_memory(device) ? Device::CPU : device);
  return wrapped.to(device);
}

/// The memory of `flat` (evaluated now) as an array of `shape` owned by a capsule holding a
/// reference to the array: host memory (the CPU's, or the emulated device's, which is the
/// host's), or a GPU's (`host`: a host copy of a GPU array instead). As a Python object it
/// speaks the array API (__dlpack__ with its keywords, the buffer protocol for host memory).
template <typename A>
nb::ndarray<nb::array_api> export_memory(const A& flat, const std::vector<size_t>& shape, bool host) {
  if (!flat.valid())
    throw ValueError("kiln: numpy() / __dlpack__(): the array has no value (default-constructed); assign one first");
  bool gpu = is_gpu_memory(flat.device());
  A* kept = new A(gpu && host ? A::borrow(flat.index()).to(Device::CPU) : flat);  // values only: no derivatives
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<A*>(p); });
  void* data = const_cast<void*>(static_cast<const void*>(kept->data()));
  bool on_gpu = gpu && !host;
  if (on_gpu) synchronize(Device::CUDA);  // the consumer's streams then see the values
  return nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner, nullptr, nb::dtype<typename A::Value>(),
                                    on_gpu ? nb::device::cuda::value : nb::device::cpu::value, 0);
}

}  // namespace

template <typename A> A host_values(const AnyHostValues& array, const std::string& what) {
  std::optional<A> result;
  std::apply(
      [&](auto... source) {
        auto try_dtype = [&]<typename S>(S) {
          if (!result && array.dtype() == nb::dtype<S>())
            result = convert_values<typename A::Value>(static_cast<const S*>(array.data()), array.size(), what);
        };
        (try_dtype(source), ...);
      },
      HostDtypes{});
  if (!result)
    throw TypeError("kiln: " + what + ": NumPy dtype " + dtype_name(array.dtype()) +
                    " has no conversion; convert with x.astype() to bool, an integer type or float32/64 first");
  return *std::move(result);
}

namespace {
/// The elements of a writable host array as an A: its memory (no copy) when the dtype is A's,
/// else converted by host_values().
template <typename A, typename Host> A host_array(const Host& array, const std::string& what, Device device) {
  if (array.dtype() == nb::dtype<typename A::Value>()) return wrap_host_array<A>(array, array.size(), device);
  return host_values<A>(AnyHostValues(array), what).to(device);
}

/// "Float(array)": how errors name a constructor call.
template <typename C> std::string constructor_call(const nb::class_<C>&) { return python_name<C>() + "(array)"; }
}  // namespace

template <typename A> void bind_array_interop(nb::class_<A>& cls) {
  std::string what = constructor_call(cls);
  cls.def(
      "__init__",
      [what](A* self, const AnyHostArray<nb::ndim<1>>& array, const std::optional<std::string>& device) {
        new (self) A(host_array<A>(array, what, device_argument(device)));
      },
      nb::arg("array"), nb::arg("device") = nb::none(),
      (std::string("Wraps a 1-D C-contiguous NumPy array or DLPack tensor of the same dtype without a copy "
                   "(it stays alive while Kiln uses it); another layout is copied first. NumPy's writes are "
                   "seen by the kernels that read the array. Kiln's writes (x[i] = v, kl.scatter) go into "
                   "the NumPy memory only while nothing else refers to this array's value: no other Kiln "
                   "array sharing it (kl.Float(x)), no pending computation reading it, no exported view "
                   "(x.numpy(), np.asarray(x), DLPack) alive. Otherwise they write a copy (Kiln arrays are "
                   "values), and the NumPy array no longer sees them.") +
       kConversionRule + " With `device`='cuda' (or a CUDA default device) the values are copied to the GPU.")
          .c_str());
  cls.def(
      "__init__",
      [what](A* self, const AnyHostArray<nb::ro, nb::ndim<1>>& array, const std::optional<std::string>& device) {
        new (self) A(host_values<A>(AnyHostValues(array), what).to(device_argument(device)));
      },
      nb::arg("array"), nb::arg("device") = nb::none(),
      "Copies a read-only 1-D array (Kiln may write an array's memory in place).");
  cls.def(
      "__init__",
      [what](A*, const nb::ndarray<nb::ro, nb::device::cpu>& array) {
        // A strided 1-D array is copied in the second pass; a NumPy scalar (0-d) is a number.
        if (array.ndim() <= 1) throw nb::next_overload();
        std::string shape;
        for (size_t d = 0; d < array.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(array.shape(d));
        throw TypeError("kiln: " + what + ": a Kiln array is 1-D, but the array has shape (" + shape +
                        "); flatten it (x.reshape(-1)) or make a tensor (kl.tensor(x))");
      },
      nb::arg("array"), "Raises TypeError: arrays of other than one axis convert to tensors (kl.tensor).");
  cls.def(
      "_export",
      [](const A& a, std::optional<std::vector<size_t>> shape) {
        std::vector<size_t> extents = shape.value_or(std::vector<size_t>{a.size()});
        size_t count = std::accumulate(extents.begin(), extents.end(), size_t(1), std::multiplies<>());
        if (count != a.size())
          throw ValueError("kiln: _export(): a shape of " + std::to_string(count) + " elements for an array of " +
                           std::to_string(a.size()));
        return export_memory(a, extents, false);
      },
      nb::arg("shape").none() = nb::none(),
      "The memory (evaluated now) as an array-API object of `shape` (default: 1-D) sharing it (a GPU's for arrays "
      "there).");
  cls.def(
      "numpy", [](const A& a) { return nb::ndarray<nb::numpy>(export_memory(a, {a.size()}, true)); },
      "Evaluates and returns a NumPy array sharing the memory (no copy; a copy for arrays on a GPU).");
}

template <typename V> void bind_composite_interop(nb::class_<V>& cls) {
  using Component = typename V::Component;
  std::string what = constructor_call(cls);
  constexpr size_t K = component_count_v<V>;
  auto exported = [](const V& value, bool host) {
    typename V::Component flat = flatten(value);
    size_t lanes = flat.size() / K;
    if constexpr (is_matrix_v<V>)
      return export_memory(flat, {lanes, V::Size, V::Size}, host);
    else
      return export_memory(flat, {lanes, V::Size}, host);
  };
  using Shaped = std::conditional_t<is_matrix_v<V>, nb::shape<-1, V::Size, V::Size>, nb::shape<-1, V::Size>>;
  cls.def(
      "__init__",
      [what](V* self, const AnyHostArray<Shaped>& array) {
        new (self) V(unflatten<V>(host_array<Component>(array, what, default_device())));
      },
      nb::arg("array"),
      (std::string("Reads an (n, N) (vectors) or (n, N, N) (matrices) C-contiguous array: the components "
                   "gather from its memory (kept alive) when they are evaluated; from then on they are "
                   "Kiln's own arrays (a vector is a struct of arrays, the NumPy array interleaves them).") +
       kConversionRule)
          .c_str());
  cls.def(
      "__init__",
      [what](V* self, const AnyHostArray<nb::ro, Shaped>& array) {
        new (self) V(unflatten<V>(host_values<Component>(AnyHostValues(array), what).to(default_device())));
      },
      nb::arg("array"), "Copies a read-only (n, N) / (n, N, N) array.");
  cls.def(
      "_export", [=](const V& value) { return exported(value, false); },
      "The lanes (evaluated now) as one (n, N) / (n, N, N) nb.ndarray.");
  cls.def(
      "numpy", [=](const V& value) { return nb::ndarray<nb::numpy>(exported(value, true)); },
      "Evaluates into one flat buffer and returns it as an (n, N) / (n, N, N) NumPy array.");
}

#define KILN_INSTANTIATE(A)                            \
  template void bind_array_interop<A>(nb::class_<A>&); \
  template A host_values<A>(const AnyHostValues&, const std::string&)
KILN_INSTANTIATE(Bool);
KILN_INSTANTIATE(Int32);
KILN_INSTANTIATE(UInt32);
KILN_INSTANTIATE(Int64);
KILN_INSTANTIATE(UInt64);
KILN_INSTANTIATE(Float);
KILN_INSTANTIATE(Float64);
#undef KILN_INSTANTIATE
#define KILN_INSTANTIATE(V) template void bind_composite_interop<V>(nb::class_<V>&)
KILN_INSTANTIATE(Array2f);
KILN_INSTANTIATE(Array3f);
KILN_INSTANTIATE(Array4f);
KILN_INSTANTIATE(Array2u);
KILN_INSTANTIATE(Array3u);
KILN_INSTANTIATE(Array2i);
KILN_INSTANTIATE(Array3i);
KILN_INSTANTIATE(Array3f64);
KILN_INSTANTIATE(Matrix2f);
KILN_INSTANTIATE(Matrix3f);
KILN_INSTANTIATE(Matrix4f);
#undef KILN_INSTANTIATE

/// The Kiln array over a 1-D DLPack tensor's memory on `device`, the type following the dtype.
template <typename Tensor> nb::object wrap_tensor(const Tensor& tensor, Device device) {
  nb::object result;
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    using T = typename A::Value;
    if (!result.is_valid() && tensor.dtype() == nb::dtype<T>())
      result = nb::cast(A::wrap(static_cast<T*>(const_cast<void*>(static_cast<const void*>(tensor.data()))),
                                tensor.size(), python_owner(tensor), device));
  });
  if (!result.is_valid())
    throw TypeError("kiln: from_dlpack(): the tensor's dtype (code " + std::to_string(tensor.dtype().code) + ", " +
                    std::to_string(tensor.dtype().bits) +
                    " bits) has no Kiln array type; convert it to bool, int32/64, uint32/64 or float32/64");
  return result;
}

void bind_interop(nb::module_& m) {
  m.def(
      "from_dlpack",
      [](const nb::ndarray<nb::c_contig, nb::device::cpu, nb::ndim<1>>& array) {
        // Host memory: on the default device where that memory is the host's, else the CPU.
        return wrap_tensor(array, is_gpu_memory(default_device()) ? Device::CPU : default_device());
      },
      nb::arg("tensor"),
      "The Kiln array over any 1-D C-contiguous DLPack tensor or NumPy array, without a copy: host memory "
      "gives a CPU array (with a GPU default device too), CUDA memory (device 0) a CUDA one; the array type "
      "follows the dtype.");
  m.def(
      "from_dlpack",
      [](const nb::ndarray<nb::c_contig, nb::device::cuda, nb::ndim<1>>& tensor) {
        if (!is_gpu_memory(Device::CUDA))
          throw ValueError(
              "kiln: from_dlpack(): the tensor is in CUDA memory, but Kiln's CUDA device is " +
              std::string(device_available(Device::CUDA) ? "the emulated one (host memory)" : "not available") +
              ". kiln.cuda_status() says what Kiln sees of CUDA");
        if (tensor.device_id() != 0)
          throw ValueError("kiln: from_dlpack(): the tensor is on cuda:" + std::to_string(tensor.device_id()) +
                           "; Kiln uses cuda:0 for now");
        synchronize(Device::CUDA);  // the producer's pending writes land first
        return wrap_tensor(tensor, Device::CUDA);
      },
      nb::arg("tensor"));
}

}  // namespace kiln::python
