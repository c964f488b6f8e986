// Memory and horizontal operations: gather, the scatters (plain, reducing, atomic
// increment), sum/prod/min/max/any/all/dot, prefix_sum, compress, block_sum.
#include "binding.h"

namespace kiln::python {
namespace {

template <typename A> void bind_memory_ops(nb::module_& m) {
  m.def(
      "gather",
      [](const A& source, const UInt32& index, const Bool* active) {
        return gather(source, index, mask_or_all(active));
      },
      nb::arg("source"), nb::arg("index"), nb::arg("active") = nb::none(),
      "source[index] on active lanes; inactive lanes give 0.");
  m.def(
      "scatter",
      [](A& target, const A& value, const UInt32& index, const Bool* active) {
        scatter(target, value, index, mask_or_all(active));
      },
      nb::arg("target"), nb::arg("value"), nb::arg("index"), nb::arg("active") = nb::none(),
      "target[index] = value on active lanes (lazy; conflicting writes: one wins). `target` "
      "is updated in place (copied first when it shares its memory).");
  m.def(
      "scatter_reduce",
      [](ReduceOp op, A& target, const A& value, const UInt32& index, const Bool* active) {
        scatter_reduce(op, target, value, index, mask_or_all(active));
      },
      nb::arg("op"), nb::arg("target"), nb::arg("value"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Atomically combines value into target[index] with `op` (ReduceOp.Add, Mul, Min, Max; And "
      "and Or for integer arrays).");
  m.def(
      "scatter_add",
      [](A& target, const A& value, const UInt32& index, const Bool* active) {
        scatter_add(target, value, index, mask_or_all(active));
      },
      nb::arg("target"), nb::arg("value"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Atomically adds value to target[index] on active lanes.");

  m.def("sum", [](const A& a) { return sum(a); }, nb::arg("x"), "Sum of all elements (a size-1 array).");
  m.def("prod", [](const A& a) { return prod(a); }, nb::arg("x"), "Product of all elements (a size-1 array).");
  m.def("min", [](const A& a) { return min(a); }, nb::arg("x"), "Smallest element (a size-1 array).");
  m.def("max", [](const A& a) { return max(a); }, nb::arg("x"), "Largest element (a size-1 array).");
  m.def(
      "dot", [](const A& a, const A& b) { return dot(a, b); }, nb::arg("a"), nb::arg("b"),
      "sum(a * b) (a size-1 array).");
  m.def(
      "prefix_sum", [](const A& a, bool exclusive) { return prefix_sum(a, exclusive); }, nb::arg("x"),
      nb::arg("exclusive") = false, "Running sum; `exclusive` starts at 0 and leaves out each element's own value.");
  m.def(
      "block_sum", [](const A& a, int64_t block) { return block_sum(a, to_size(block, "block_sum")); }, nb::arg("x"),
      nb::arg("block"), "Sums of consecutive groups of `block` elements.");
}

}  // namespace

void bind_memory(nb::module_& m) {
  nb::enum_<ReduceOp>(m, "ReduceOp", "How scatter_reduce() combines a value with the target.")
      .value("Add", ReduceOp::Add)
      .value("Min", ReduceOp::Min)
      .value("Max", ReduceOp::Max)
      .value("Mul", ReduceOp::Mul)
      .value("And", ReduceOp::And)
      .value("Or", ReduceOp::Or);
  for_each_array_type([&](auto type) { bind_memory_ops<typename decltype(type)::type>(m); });
  m.def(
      "scatter_inc",
      [](UInt32& target, const UInt32& index, const Bool* active) {
        return scatter_inc(target, index, mask_or_all(active));
      },
      nb::arg("target"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Atomically increments target[index] per active lane and returns the old values (each "
      "lane gets a distinct slot: append buffers).");
  m.def("any", [](const Bool& a) { return any(a); }, nb::arg("x"), "True if any element is true (size-1 Bool).");
  m.def("all", [](const Bool& a) { return all(a); }, nb::arg("x"), "True if every element is true (size-1 Bool).");
  m.def(
      "compress", [](const Bool& mask) { return compress(mask); }, nb::arg("mask"),
      "Indices of the true elements, in increasing order.");
}

}  // namespace kiln::python
