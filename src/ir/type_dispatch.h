// Calls a generic function with the C++ scalar type that a VarType names.
#pragma once

#include <kiln/errors.h>
#include <kiln/types.h>

#include <cstdint>

namespace kiln::detail {

/// Calls fn(T{}) with the C++ type of `type` (bool, int32_t, ..., double).
template <typename Fn> decltype(auto) dispatch_type(VarType type, Fn&& fn) {
  switch (type) {
    case VarType::Bool: return fn(bool{});
    case VarType::Int32: return fn(int32_t{});
    case VarType::UInt32: return fn(uint32_t{});
    case VarType::Int64: return fn(int64_t{});
    case VarType::UInt64: return fn(uint64_t{});
    case VarType::Float32: return fn(float{});
    case VarType::Float64: return fn(double{});
  }
  throw InternalError("kiln: invalid VarType");
}

}  // namespace kiln::detail
