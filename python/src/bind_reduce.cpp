// Reductions and search with Dr.Jit's names (reduce.h, search.h): kl.count, kl.mean,
// kl.block_reduce and kl.binary_search (the predicate is a Python callable on UInt32).
#include "binding.h"

#include <limits>

namespace kiln::python {
namespace {

template <typename A> void bind_reductions(nb::module_& m) {
  using T = typename A::Value;
  m.def(
      "block_reduce",
      [](ReduceOp op, const A& a, int64_t block) { return block_reduce(op, a, to_size(block, "block_reduce")); },
      nb::arg("op"), nb::arg("x"), nb::arg("block"),
      "`op` (ReduceOp.Add, Mul, Min, Max; And and Or for integers and Bool) over consecutive "
      "groups of `block` elements, one result per group (the last may be short). Add, Mul, Min "
      "and Max are differentiable.");
  if constexpr (std::is_floating_point_v<T>)
    m.def(
        "mean", [](const A& a) { return mean(a); }, nb::arg("x"),
        "Average of all elements (a size-1 array; NaN when empty).");
}

/// A search bound as uint32_t; outside [0, 2^32) raises ValueError.
uint32_t to_bound(int64_t value, const char* name) {
  if (value < 0 || value > int64_t(std::numeric_limits<uint32_t>::max()))
    throw ValueError(std::string("kiln: binary_search(): ") + name + " = " + std::to_string(value) +
                     " is not a UInt32 index (0 to 2**32 - 1)");
  return uint32_t(value);
}

}  // namespace

void bind_reduce(nb::module_& m) {
  for_each_array_type([&](auto type) { bind_reductions<typename decltype(type)::type>(m); });
  m.def(
      "count", [](const Bool& mask) { return count(mask); }, nb::arg("mask"),
      "Number of true elements (a size-1 UInt32).");
  m.def(
      "binary_search",
      [](int64_t start, int64_t end, nb::callable pred) {
        return kiln::binary_search(to_bound(start, "start"), to_bound(end, "end"), [&](const UInt32& index) {
          nb::object result = pred(index);
          Bool mask;
          if (!nb::try_cast(result, mask))
            throw TypeError(std::string("kiln: binary_search(): pred must return a Bool (or a bool), got ") +
                            nb::type_name(result.type()).c_str());
          return mask;
        });
      },
      nb::arg("start"), nb::arg("end"), nb::arg("pred"),
      "The first index in [start, end] where pred(index) is False, per lane, for a predicate true "
      "on a prefix of the range (end when it never turns False). pred takes a UInt32 of indices "
      "and returns a Bool; it is called floor(log2(end - start)) + 1 times. With a sorted array "
      "data: binary_search(0, len(data), lambda i: kl.gather(data, i) < values) is "
      "numpy.searchsorted(data, values).");
}

}  // namespace kiln::python
