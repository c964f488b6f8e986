// Element types of Kiln arrays and the compile-time traits that map C++ types to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln {

/// The element type of an IR node. Order is part of the kernel-format version.
enum class VarType : uint8_t { Bool, Int32, UInt32, Int64, UInt64, Float32, Float64 };

/// Number of element types.
inline constexpr int kVarTypeCount = 7;

/// Size in bytes of one element in memory (Bool is stored as one byte).
constexpr size_t type_size(VarType t) {
  switch (t) {
    case VarType::Bool: return 1;
    case VarType::Int32:
    case VarType::UInt32:
    case VarType::Float32: return 4;
    default: return 8;
  }
}

constexpr bool is_float(VarType t) { return t == VarType::Float32 || t == VarType::Float64; }
constexpr bool is_signed_int(VarType t) { return t == VarType::Int32 || t == VarType::Int64; }
constexpr bool is_unsigned_int(VarType t) { return t == VarType::UInt32 || t == VarType::UInt64; }
constexpr bool is_int(VarType t) { return is_signed_int(t) || is_unsigned_int(t); }

/// Short name used in messages and the IR printer ("f32", "u32", ...).
const char* type_name(VarType t);

/// Maps a C++ scalar type to its VarType.
template <typename T> struct var_type;
template <> struct var_type<bool> {
  static constexpr VarType value = VarType::Bool;
};
template <> struct var_type<int32_t> {
  static constexpr VarType value = VarType::Int32;
};
template <> struct var_type<uint32_t> {
  static constexpr VarType value = VarType::UInt32;
};
template <> struct var_type<int64_t> {
  static constexpr VarType value = VarType::Int64;
};
template <> struct var_type<uint64_t> {
  static constexpr VarType value = VarType::UInt64;
};
template <> struct var_type<float> {
  static constexpr VarType value = VarType::Float32;
};
template <> struct var_type<double> {
  static constexpr VarType value = VarType::Float64;
};
template <typename T> inline constexpr VarType var_type_v = var_type<T>::value;

/// True for the C++ scalar types Kiln arrays can hold.
template <typename T>
concept ArrayScalar =
    std::is_same_v<T, bool> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, float> || std::is_same_v<T, double>;

}  // namespace kiln
