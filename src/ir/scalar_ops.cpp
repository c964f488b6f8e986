// Implementation of the scalar op semantics (see scalar_ops.h for the documented edge cases).
#include "ir/scalar_ops.h"

#include <kiln/errors.h>

#include "ir/op_info.h"
#include "ir/type_dispatch.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace kiln::detail {
namespace {

template <typename T> T from_bits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
template <typename T> uint64_t to_lane(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <typename To, typename From> To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(x)) return To(0);
    if (x <= From(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    // 2^bits as a float is exact; anything at or above saturates.
    if (x >= std::ldexp(From(1), std::numeric_limits<To>::digits)) return std::numeric_limits<To>::max();
    return To(x);
  } else {
    return To(x);
  }
}

template <typename T> T shift_left(T x, T count) {
  using U = std::make_unsigned_t<T>;
  constexpr U bits = sizeof(T) * 8;
  if (U(count) >= bits) return T(0);
  return T(U(x) << U(count));
}
template <typename T> T shift_right(T x, T count) {
  using U = std::make_unsigned_t<T>;
  constexpr U bits = sizeof(T) * 8;
  if constexpr (std::is_signed_v<T>) {
    return T(x >> (U(count) >= bits ? bits - 1 : U(count)));
  } else {
    return U(count) >= bits ? T(0) : T(x >> count);
  }
}

template <typename T> T divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / b;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>)
      if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
    return T(a / b);
  }
}
template <typename T> T modulo(T a, T b) {
  if (b == T(0)) return a;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return T(0);
  return T(a % b);
}

/// The type integer arithmetic wraps in (unsigned, so overflow is defined).
template <typename T> struct wrapping { using type = T; };
template <> struct wrapping<int32_t> { using type = uint32_t; };
template <> struct wrapping<int64_t> { using type = uint64_t; };

template <typename T> uint64_t arithmetic(Op op, uint64_t ab, uint64_t bb, uint64_t cb) {
  T a = from_bits<T>(ab), b = from_bits<T>(bb), c = from_bits<T>(cb);
  using W = typename wrapping<T>::type;
  constexpr bool is_fp = std::is_floating_point_v<T>;
  constexpr bool is_bool = std::is_same_v<T, bool>;
  switch (op) {
    case Op::Add: if constexpr (!is_bool) { if constexpr (is_fp) return to_lane(T(a + b)); else return to_lane(T(W(a) + W(b))); } break;
    case Op::Sub: if constexpr (!is_bool) { if constexpr (is_fp) return to_lane(T(a - b)); else return to_lane(T(W(a) - W(b))); } break;
    case Op::Mul: if constexpr (!is_bool) { if constexpr (is_fp) return to_lane(T(a * b)); else return to_lane(T(W(a) * W(b))); } break;
    case Op::Div: if constexpr (!is_bool) return to_lane(divide(a, b)); break;
    case Op::Mod:
      if constexpr (is_fp) return to_lane(T(std::fmod(a, b)));
      else if constexpr (!is_bool) return to_lane(modulo(a, b));
      break;
    case Op::Fma:
      if constexpr (is_fp) return to_lane(T(std::fma(a, b, c)));
      else if constexpr (!is_bool) return to_lane(T(W(a) * W(b) + W(c)));
      break;
    case Op::Min: if constexpr (is_fp) return to_lane((a < b || std::isnan(b)) ? a : b); else if constexpr (!is_bool) return to_lane(a < b ? a : b); break;
    case Op::Max: if constexpr (is_fp) return to_lane((a > b || std::isnan(b)) ? a : b); else if constexpr (!is_bool) return to_lane(a > b ? a : b); break;
    case Op::Neg: if constexpr (is_fp) return to_lane(T(-a)); else if constexpr (!is_bool) return to_lane(T(W(0) - W(a))); break;
    case Op::Abs:
      if constexpr (is_fp) return to_lane(T(std::fabs(a)));
      else if constexpr (std::is_signed_v<T>) return to_lane(a < 0 ? T(W(0) - W(a)) : a);
      else if constexpr (!is_bool) return to_lane(a);
      break;
    case Op::Not: if constexpr (is_bool) return to_lane(!a); else if constexpr (!is_fp) return to_lane(T(~a)); break;
    case Op::And: if constexpr (is_bool) return to_lane(bool(a && b)); else if constexpr (!is_fp) return to_lane(T(a & b)); break;
    case Op::Or: if constexpr (is_bool) return to_lane(bool(a || b)); else if constexpr (!is_fp) return to_lane(T(a | b)); break;
    case Op::Xor: if constexpr (is_bool) return to_lane(bool(a != b)); else if constexpr (!is_fp) return to_lane(T(a ^ b)); break;
    case Op::Shl: if constexpr (!is_bool && !is_fp) return to_lane(shift_left(a, b)); break;
    case Op::Shr: if constexpr (!is_bool && !is_fp) return to_lane(shift_right(a, b)); break;
    case Op::Sqrt: if constexpr (is_fp) return to_lane(T(std::sqrt(a))); break;
    case Op::Rcp: if constexpr (is_fp) return to_lane(T(T(1) / a)); break;
    case Op::Rsqrt: if constexpr (is_fp) return to_lane(T(T(1) / std::sqrt(a))); break;
    case Op::Floor: if constexpr (is_fp) return to_lane(T(std::floor(a))); break;
    case Op::Ceil: if constexpr (is_fp) return to_lane(T(std::ceil(a))); break;
    case Op::Round: if constexpr (is_fp) return to_lane(T(std::nearbyint(a))); break;
    case Op::Trunc: if constexpr (is_fp) return to_lane(T(std::trunc(a))); break;
    case Op::Select: return from_bits<bool>(ab) ? bb : cb;
    default: break;
  }
  throw InternalError(std::string("kiln: op ") + op_name(op) + " is not defined for this type");
}

template <typename T> bool compare(Op op, uint64_t ab, uint64_t bb) {
  T a = from_bits<T>(ab), b = from_bits<T>(bb);
  switch (op) {
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: throw InternalError("kiln: not a comparison");
  }
}

}  // namespace

bool is_scalar_evaluable(Op op) {
  return op_is_pure(op) && op_arity(op) > 0;
}

uint64_t eval_scalar(Op op, VarType type, VarType in, uint64_t a, uint64_t b, uint64_t c) {
  if (op_is_comparison(op))
    return dispatch_type(in, [&](auto t) { return uint64_t(compare<decltype(t)>(op, a, b)); });
  if (op == Op::Bitcast) return a;
  if (op == Op::Cast)
    return dispatch_type(type, [&](auto to) {
      return dispatch_type(in, [&](auto from) {
        return to_lane(convert<decltype(to)>(from_bits<decltype(from)>(a)));
      });
    });
  if (op == Op::Select)
    return from_bits<bool>(a) ? b : c;
  return dispatch_type(type, [&](auto t) { return arithmetic<decltype(t)>(op, a, b, c); });
}

uint64_t reduce_scalar(ReduceOp op, VarType type, uint64_t old_value, uint64_t value) {
  switch (op) {
    case ReduceOp::None: return value;
    case ReduceOp::Add: return eval_scalar(Op::Add, type, type, old_value, value, 0);
    case ReduceOp::Min: return eval_scalar(Op::Min, type, type, old_value, value, 0);
    case ReduceOp::Max: return eval_scalar(Op::Max, type, type, old_value, value, 0);
    case ReduceOp::Mul: return eval_scalar(Op::Mul, type, type, old_value, value, 0);
    case ReduceOp::And: return eval_scalar(Op::And, type, type, old_value, value, 0);
    case ReduceOp::Or: return eval_scalar(Op::Or, type, type, old_value, value, 0);
  }
  throw InternalError("kiln: invalid ReduceOp");
}

uint64_t load_lane(VarType type, const void* ptr) {
  uint64_t bits = 0;
  std::memcpy(&bits, ptr, type_size(type));
  if (type == VarType::Bool) bits = bits != 0;
  return bits;
}

void store_lane(VarType type, void* ptr, uint64_t value) { std::memcpy(ptr, &value, type_size(type)); }

}  // namespace kiln::detail
