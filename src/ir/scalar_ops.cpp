// Implementation of the scalar op semantics (see scalar_ops.h for the documented edge cases).
#include "ir/scalar_ops.h"

#include <kiln/errors.h>

#include "ir/op_info.h"
#include "ir/type_dispatch.h"

#include <cmath>
#include <concepts>
#include <cstring>
#include <functional>
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

/// The operand types of the table's type rules (Numeric, Integer, Bitwise; Float is
/// std::floating_point), as constraints on the parameters of each op's lambda in eval_scalar().
template <typename T>
concept Number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <typename T>
concept Integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
concept Bits = std::is_integral_v<T>;  // Bool and the integers

/// Integer arithmetic wraps: it runs in the unsigned type of the same width, where
/// overflow is defined. Floats are left as they are.
template <std::floating_point T> T wrapping(T x) { return x; }
template <Integer T> std::make_unsigned_t<T> wrapping(T x) { return std::make_unsigned_t<T>(x); }

template <std::floating_point T> T negate(T x) { return -x; }
template <Integer T> T negate(T x) { return T(wrapping(T(0)) - wrapping(x)); }

template <std::floating_point T> T absolute(T x) { return std::fabs(x); }
template <Integer T> T absolute(T x) {
  if constexpr (std::is_signed_v<T>) return x < 0 ? negate(x) : x;
  return x;
}

bool complement(bool x) { return !x; }
template <Integer T> T complement(T x) { return T(~x); }

/// Floats: a NaN operand is ignored (IEEE minNum/maxNum), and the second operand wins ties.
template <std::floating_point T> T minimum(T a, T b) { return (a < b || std::isnan(b)) ? a : b; }
template <std::floating_point T> T maximum(T a, T b) { return (a > b || std::isnan(b)) ? a : b; }
template <Integer T> T minimum(T a, T b) { return a < b ? a : b; }
template <Integer T> T maximum(T a, T b) { return a > b ? a : b; }

template <std::floating_point T> T divide(T a, T b) { return a / b; }
template <Integer T> T divide(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  return T(a / b);
}

template <std::floating_point T> T modulo(T a, T b) { return std::fmod(a, b); }
template <Integer T> T modulo(T a, T b) {
  if (b == T(0)) return a;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return T(0);
  return T(a % b);
}

template <std::floating_point T> T multiply_add(T a, T b, T c) { return std::fma(a, b, c); }
template <Integer T> T multiply_add(T a, T b, T c) { return T(wrapping(a) * wrapping(b) + wrapping(c)); }

template <Integer T> T shift_left(T x, T count) {
  using U = std::make_unsigned_t<T>;
  constexpr U bits = sizeof(T) * 8;
  if (U(count) >= bits) return T(0);
  return T(U(x) << U(count));
}
template <Integer T> T shift_right(T x, T count) {
  using U = std::make_unsigned_t<T>;
  constexpr U bits = sizeof(T) * 8;
  if constexpr (std::is_signed_v<T>) {
    return T(x >> (U(count) >= bits ? bits - 1 : U(count)));
  } else {
    return U(count) >= bits ? T(0) : T(x >> count);
  }
}

/// Calls `fn` on the operands read as lanes of `type`, the op's result type, with as many
/// of them as `fn` takes. The constraints on `fn`'s parameters say which types the op is
/// defined for; trace() refuses the others (TypeRule), so meeting one here is a bug.
template <typename Fn> uint64_t lanewise(Op op, VarType type, uint64_t a, uint64_t b, uint64_t c, Fn fn) {
  return dispatch_type(type, [&](auto t) -> uint64_t {
    using T = decltype(t);
    T x = from_bits<T>(a), y = from_bits<T>(b), z = from_bits<T>(c);
    if constexpr (std::is_invocable_v<Fn&, T>)
      return to_lane(T(fn(x)));
    else if constexpr (std::is_invocable_v<Fn&, T, T>)
      return to_lane(T(fn(x, y)));
    else if constexpr (std::is_invocable_v<Fn&, T, T, T>)
      return to_lane(T(fn(x, y, z)));
    else
      throw InternalError(std::string("kiln: op ") + op_name(op) + " is not defined for " + type_name(type));
  });
}

/// `compare(x, y)` on two lanes of type `in`, as a Bool lane.
template <typename Compare> uint64_t comparison(VarType in, uint64_t a, uint64_t b, Compare compare) {
  return dispatch_type(in, [&](auto t) -> uint64_t {
    using T = decltype(t);
    return compare(from_bits<T>(a), from_bits<T>(b));
  });
}

uint64_t cast(VarType to, VarType from, uint64_t bits) {
  return dispatch_type(to, [&](auto to_type) {
    return dispatch_type(from, [&](auto from_type) {
      return to_lane(convert<decltype(to_type)>(from_bits<decltype(from_type)>(bits)));
    });
  });
}

}  // namespace

bool is_scalar_evaluable(Op op) { return op_is_pure(op) && op_arity(op) > 0 && op_type_rule(op) != TypeRule::Own; }

uint64_t eval_scalar(Op op, VarType type, VarType in, uint64_t a, uint64_t b, uint64_t c) {
  auto on_lanes = [&](auto fn) { return lanewise(op, type, a, b, c, fn); };
  switch (op) {
    case Op::Neg: return on_lanes([](Number auto x) { return negate(x); });
    case Op::Not: return on_lanes([](Bits auto x) { return complement(x); });
    case Op::Abs: return on_lanes([](Number auto x) { return absolute(x); });
    case Op::Sqrt: return on_lanes([](std::floating_point auto x) { return std::sqrt(x); });
    case Op::Rcp: return on_lanes([](std::floating_point auto x) { return 1 / x; });
    case Op::Rsqrt: return on_lanes([](std::floating_point auto x) { return 1 / std::sqrt(x); });
    case Op::Floor: return on_lanes([](std::floating_point auto x) { return std::floor(x); });
    case Op::Ceil: return on_lanes([](std::floating_point auto x) { return std::ceil(x); });
    case Op::Round: return on_lanes([](std::floating_point auto x) { return std::nearbyint(x); });
    case Op::Trunc: return on_lanes([](std::floating_point auto x) { return std::trunc(x); });
    case Op::Cast: return cast(type, in, a);
    case Op::Bitcast: return a;
    case Op::Add: return on_lanes([](Number auto x, Number auto y) { return wrapping(x) + wrapping(y); });
    case Op::Sub: return on_lanes([](Number auto x, Number auto y) { return wrapping(x) - wrapping(y); });
    case Op::Mul: return on_lanes([](Number auto x, Number auto y) { return wrapping(x) * wrapping(y); });
    case Op::Div: return on_lanes([](Number auto x, Number auto y) { return divide(x, y); });
    case Op::Mod: return on_lanes([](Number auto x, Number auto y) { return modulo(x, y); });
    case Op::Min: return on_lanes([](Number auto x, Number auto y) { return minimum(x, y); });
    case Op::Max: return on_lanes([](Number auto x, Number auto y) { return maximum(x, y); });
    case Op::And: return on_lanes([](Bits auto x, Bits auto y) { return x & y; });
    case Op::Or: return on_lanes([](Bits auto x, Bits auto y) { return x | y; });
    case Op::Xor: return on_lanes([](Bits auto x, Bits auto y) { return x ^ y; });
    case Op::Shl: return on_lanes([](Integer auto x, Integer auto y) { return shift_left(x, y); });
    case Op::Shr: return on_lanes([](Integer auto x, Integer auto y) { return shift_right(x, y); });
    case Op::Eq: return comparison(in, a, b, std::equal_to<>());
    case Op::Ne: return comparison(in, a, b, std::not_equal_to<>());
    case Op::Lt: return comparison(in, a, b, std::less<>());
    case Op::Le: return comparison(in, a, b, std::less_equal<>());
    case Op::Gt: return comparison(in, a, b, std::greater<>());
    case Op::Ge: return comparison(in, a, b, std::greater_equal<>());
    case Op::Fma: return on_lanes([](Number auto x, Number auto y, Number auto z) { return multiply_add(x, y, z); });
    case Op::Select: return from_bits<bool>(a) ? b : c;
    // Leaves, memory, host calls and loops: the interpreter and the backends run these themselves.
    case Op::Literal:
    case Op::Param:
    case Op::Data:
    case Op::Counter:
    case Op::Gather:
    case Op::Scatter:
    case Op::ScatterInc:
    case Op::HostArg:
    case Op::HostCall:
    case Op::HostResult:
    case Op::LoopPhi:
    case Op::LoopCond:
    case Op::Loop:
    case Op::LoopResult:
    case Op::LoopBegin:
    case Op::LoopUpdate:
    case Op::LoopEnd: break;
  }
  throw InternalError(std::string("kiln: op ") + op_name(op) + " has no scalar semantics");
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
