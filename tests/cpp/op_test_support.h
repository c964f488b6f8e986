// Helpers shared by op tests and the fuzzer: edge values per type, moving lane values in
// and out of Kiln, running a program on a chosen backend, comparing results.
#pragma once

#include <kiln/kiln.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace kiln::test {

using detail::Index;

template <typename T> uint64_t bits_of(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// Values that exercise the edge cases of `type`, as lane bits.
inline std::vector<uint64_t> edge_values(VarType type) {
  switch (type) {
    case VarType::Bool: return {0, 1};
    case VarType::Int32: {
      std::vector<int32_t> v = {0, 1, -1, 2, -7, 31, 32, 33, 100, INT32_MAX, INT32_MIN, 123456789};
      std::vector<uint64_t> out;
      for (int32_t x : v) out.push_back(uint32_t(x));
      return out;
    }
    case VarType::UInt32: return {0, 1, 2, 7, 31, 32, 33, 100, 0x7fffffff, 0x80000000u, 0xffffffffu, 3000000000u};
    case VarType::Int64: {
      std::vector<int64_t> v = {
          0, 1, -1, 5, -9, 63, 64, 65, INT64_MAX, INT64_MIN, int64_t(1) << 40, -(int64_t(1) << 33)};
      std::vector<uint64_t> out;
      for (int64_t x : v) out.push_back(uint64_t(x));
      return out;
    }
    case VarType::UInt64:
      return {0, 1, 3, 63, 64, 65, UINT64_MAX, uint64_t(1) << 63, uint64_t(1) << 32, 12345678901234ull};
    case VarType::Float32: {
      using L = std::numeric_limits<float>;
      std::vector<float> v = {0.f,           -0.f,           1.f,           -1.5f,          2.5f,
                              3.5f,          L::quiet_NaN(), L::infinity(), -L::infinity(), L::denorm_min(),
                              -L::min() / 4, L::max(),       3e9f,          -5e18f,         0.1f,
                              1e-30f};
      std::vector<uint64_t> out;
      for (float x : v) out.push_back(bits_of(x));
      return out;
    }
    case VarType::Float64: {
      using L = std::numeric_limits<double>;
      std::vector<double> v = {0.0,           -0.0,           1.0,           -1.5,           2.5,
                               -3.5,          L::quiet_NaN(), L::infinity(), -L::infinity(), L::denorm_min(),
                               -L::min() / 8, L::max(),       1e19,          -3e9,           0.1,
                               1e300};
      std::vector<uint64_t> out;
      for (double x : v) out.push_back(bits_of(x));
      return out;
    }
  }
  return {};
}

/// True when elementwise `op` accepts operands of type `t`: the expectation that the op
/// table's type rules are checked against (OpTable tests in test_ops.cpp).
inline bool op_defined_for(Op op, VarType t) {
  switch (op) {
    case Op::And:
    case Op::Or:
    case Op::Xor:
    case Op::Not: return !is_float(t);
    case Op::Shl:
    case Op::Shr: return is_int(t);
    case Op::Sqrt:
    case Op::Rcp:
    case Op::Rsqrt:
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::Trunc: return is_float(t);
    case Op::Eq:
    case Op::Ne:
    case Op::Select: return true;
    default: return t != VarType::Bool;
  }
}

/// An evaluated node holding `lanes` (lane bits) of `type`.
inline Index upload(VarType type, const std::vector<uint64_t>& lanes) {
  std::vector<uint8_t> bytes(lanes.size() * type_size(type));
  for (size_t i = 0; i < lanes.size(); ++i) std::memcpy(bytes.data() + i * type_size(type), &lanes[i], type_size(type));
  return detail::make_copy(type, bytes.data(), lanes.size());
}

/// Evaluates `index` and returns its lanes as bits.
inline std::vector<uint64_t> download(Index index) {
  VarType type = detail::node_type(index);
  size_t n = detail::node_size(index);
  std::vector<uint8_t> host(n * type_size(type));
  detail::read_all(index, host.data());
  std::vector<uint64_t> out(n, 0);
  for (size_t i = 0; i < n; ++i) std::memcpy(&out[i], host.data() + i * type_size(type), type_size(type));
  return out;
}

/// Sets a Flag for its lifetime, then restores it.
class FlagScope {
 public:
  FlagScope(Flag f, bool value) : flag_(f), before_(flag(f)) { set_flag(f, value); }
  ~FlagScope() { set_flag(flag_, before_); }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;

 private:
  Flag flag_;
  bool before_;
};

/// Runs `program` with kernels on the interpreter (true) or the LLVM backend (false).
template <typename Fn> auto run_on(bool interpreter, Fn&& program) {
  FlagScope backend(Flag::Interpreter, interpreter);
  // The reference interpreter reads host memory: on a GPU, the program runs there for the
  // JIT and on the CPU for the reference (the emulated device's memory is the host's).
  DeviceScope device(interpreter && is_gpu_memory(default_device()) ? Device::CPU : default_device());
  return program();
}

/// A control-flow mode on a backend: control-flow tests and the loop fuzzer run programs in
/// each of these and require bit-identical results (the first is the reference).
struct ModeRun {
  ControlMode mode;
  bool interpreter;
  const char* name;
};
inline constexpr ModeRun kModeRuns[] = {{ControlMode::Symbolic, false, "symbolic/jit"},
                                        {ControlMode::Evaluated, false, "evaluated/jit"},
                                        {ControlMode::Symbolic, true, "symbolic/interpreter"},
                                        {ControlMode::Evaluated, true, "evaluated/interpreter"}};

/// Equality of lane values: bitwise, except that any two NaNs are equal (payloads may
/// differ) and, when `zero_sign_free`, +0 equals -0.
inline bool same_value(VarType type, uint64_t a, uint64_t b, bool zero_sign_free = false) {
  if (a == b) return true;
  if (type == VarType::Float32) {
    float x, y;
    uint32_t xa = uint32_t(a), yb = uint32_t(b);
    std::memcpy(&x, &xa, 4);
    std::memcpy(&y, &yb, 4);
    return (std::isnan(x) && std::isnan(y)) || (zero_sign_free && x == 0 && y == 0);
  }
  if (type == VarType::Float64) {
    double x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return (std::isnan(x) && std::isnan(y)) || (zero_sign_free && x == 0 && y == 0);
  }
  return false;
}

/// Equality up to the order of a float reduction (a GPU's atomics combine lanes in any
/// order): same_value with +0 = -0, or a relative difference within 1e-4 (Float32) or
/// 1e-12 (Float64); bitwise for other types.
inline bool close_value(VarType type, uint64_t a, uint64_t b) {
  if (same_value(type, a, b, /*zero_sign_free=*/true)) return true;
  if (!is_float(type)) return false;
  double x, y;
  if (type == VarType::Float32) {
    float fx, fy;
    uint32_t xa = uint32_t(a), yb = uint32_t(b);
    std::memcpy(&fx, &xa, 4);
    std::memcpy(&fy, &yb, 4);
    x = fx, y = fy;
  } else {
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
  }
  return std::fabs(x - y) <= (type == VarType::Float32 ? 1e-4 : 1e-12) * std::max(std::fabs(x), std::fabs(y));
}

}  // namespace kiln::test
