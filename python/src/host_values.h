// The rule of implicit conversions from host arrays (NumPy, DLPack) to Kiln arrays, shared
// by the array, vector, matrix and tensor constructors (defined in bind_interop.cpp).
#pragma once

#include "binding.h"

#include <nanobind/ndarray.h>

#include <string>

namespace kiln::python {

/// A C-contiguous host array of any dtype and shape, writable or not.
using AnyHostValues = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

/// The rule, for docstrings.
inline constexpr const char* kConversionRule =
    " Another dtype is copied when no value can change: bool to any type, integer to float, float to float "
    "(float64 to float32 rounds), and integer to integer when every element is in range; anything else "
    "(float to integer, numbers to bool, an element out of range) raises TypeError naming x.astype() and "
    "kl.cast.";

/// The elements of `values` (flat, row-major) as a Kiln array of A (a copy) under the rule
/// above; `what` names the call in errors ("UInt32(array)").
template <typename A> A host_values(const AnyHostValues& values, const std::string& what);

}  // namespace kiln::python
