// Lowering of statements to LLVM IR: Lowering::emit(), the one switch over ops, which
// writes elementwise arithmetic itself (with the edge cases of src/ir/scalar_ops.h: guarded
// integer division, C's fmod, minNum, saturating shifts and casts) and hands memory
// accesses, host calls and loops to lower_memory.cpp, lower_host_call.cpp and
// lower_loops.cpp.
#include "backend/lowering/lowering.h"

#include <kiln/errors.h>

#include "ir/op_info.h"

#include <cstdio>
#include <string>

namespace kiln::detail::lowering {

void Lowering::emit(uint32_t position) {
  const KernelStatement& s = form_.statements[position];
  std::string& out = names_[position];
  const VarType t = s.type;
  const std::string vt = vec(t);
  const bool fp = is_float(t), sgn = is_signed_int(t);
  switch (s.op) {
    case Op::Literal: out = literal(position, s); return;
    case Op::Param: out = parameter(position, s); return;
    case Op::Counter: out = instr("trunc " + vec("i64") + " %lane to " + vec("i32")); return;
    case Op::Data:
      if (value_used_[position]) out = load_input(position, s);
      return;
    case Op::Add: out = instr(std::string(fp ? "fadd " : "add ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Sub: out = instr(std::string(fp ? "fsub " : "sub ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Mul: out = instr(std::string(fp ? "fmul " : "mul ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Div: out = fp ? instr("fdiv " + vt + " " + arg(s, 0) + ", " + arg(s, 1)) : int_divide(s); return;
    case Op::Mod: out = fp ? float_remainder(position, t, arg(s, 0), arg(s, 1)) : int_divide(s); return;
    case Op::Min:
    case Op::Max: {
      bool is_min = s.op == Op::Min;
      if (fp) {
        out = float_min_max(is_min, vt, arg(s, 0), arg(s, 1));
        return;
      }
      std::string fn = sgn ? (is_min ? "smin" : "smax") : (is_min ? "umin" : "umax");
      out = call(vt, "llvm." + fn + "." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {vt, arg(s, 1)}});
      return;
    }
    case Op::And: out = instr("and " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Or: out = instr("or " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Xor: out = instr("xor " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
    case Op::Not:
      out =
          instr("xor " + vt + " " + arg(s, 0) + ", " + splat_const(scalar_type(t), t == VarType::Bool ? "true" : "-1"));
      return;
    case Op::Neg:
      out = fp ? instr("fneg " + vt + " " + arg(s, 0)) : instr("sub " + vt + " zeroinitializer, " + arg(s, 0));
      return;
    case Op::Abs:
      if (fp)
        out = call(vt, "llvm.fabs." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}});
      else if (sgn)
        out = call(vt, "llvm.abs." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {"i1", "false"}});
      else
        out = arg(s, 0);
      return;
    case Op::Sqrt: out = call(vt, "llvm.sqrt." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
    case Op::Rcp: out = instr("fdiv " + vt + " " + splat_const(scalar_type(t), "1.0") + ", " + arg(s, 0)); return;
    case Op::Rsqrt: {
      std::string root = call(vt, "llvm.sqrt." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}});
      out = instr("fdiv " + vt + " " + splat_const(scalar_type(t), "1.0") + ", " + root);
      return;
    }
    case Op::Floor: out = call(vt, "llvm.floor." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
    case Op::Ceil: out = call(vt, "llvm.ceil." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
    case Op::Trunc: out = call(vt, "llvm.trunc." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
    case Op::Round: out = call(vt, "llvm.roundeven." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
    case Op::Shl:
    case Op::Shr: out = shift(s); return;
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: out = compare(s); return;
    case Op::Fma:
      if (fp)
        out = call(vt, "llvm.fma." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {vt, arg(s, 1)}, {vt, arg(s, 2)}});
      else
        out = instr("add " + vt + " " + instr("mul " + vt + " " + arg(s, 0) + ", " + arg(s, 1)) + ", " + arg(s, 2));
      return;
    case Op::Select:
      out = instr("select " + vec("i1") + " " + arg(s, 0) + ", " + vt + " " + arg(s, 1) + ", " + vt + " " + arg(s, 2));
      return;
    case Op::Cast: out = cast(s); return;
    case Op::Bitcast: out = instr("bitcast " + vec(s.operand_type) + " " + arg(s, 0) + " to " + vt); return;
    case Op::Gather: out = gather(position, s); return;
    case Op::Scatter: scatter(position, s); return;
    case Op::ScatterInc: out = scatter_inc(position, s); return;
    case Op::HostArg: return;  // its HostCall stages the value
    case Op::HostCall: out = host_call(position, s); return;
    case Op::HostResult: out = host_result(position, s); return;
    case Op::LoopBegin: loop_begin(position, s); return;
    case Op::LoopPhi: out = loop_phi(position, s); return;
    case Op::LoopCond: out = loop_cond(s); return;
    case Op::LoopUpdate: loop_update(s); return;
    case Op::LoopEnd: loop_end(); return;
    case Op::Loop:
    case Op::LoopResult: break;  // trace only, never in a form
  }
  throw InternalError(std::string("kiln: LLVM backend: no lowering for ") + op_name(s.op));
}

/// With q = trunc(x / y), x - q y is one fma and exact while |x / y| < 2^(p-1): the
/// remainder is a multiple of y's quantum below |y|. When x / y rounded up to the next
/// integer the result has the wrong sign and |y| is added back (exact too); the sign of x
/// is copied last (zeros included). Lanes outside that range (huge quotients, zero or
/// infinite divisors, infinite or NaN operands) take LLVM's frem (a libm call per lane),
/// only in vectors that have such a lane.
std::string Lowering::float_remainder(uint32_t position, VarType t, const std::string& x, const std::string& y) {
  std::string sc = scalar_type(t), vt = vec(t), m = vmangle(sc), mask = vec("i1");
  std::string quotient = instr("fdiv " + vt + " " + x + ", " + y);
  std::string q = call(vt, "llvm.trunc." + m, {{vt, quotient}});
  std::string r = call(vt, "llvm.fma." + m, {{vt, instr("fneg " + vt + " " + q)}, {vt, y}, {vt, x}});
  std::string nonzero = instr("fcmp one " + vt + " " + r + ", zeroinitializer");
  std::string r_negative = instr("fcmp olt " + vt + " " + r + ", zeroinitializer");
  std::string x_negative = instr("fcmp olt " + vt + " " + x + ", zeroinitializer");
  std::string wrong_sign =
      instr("and " + mask + " " + nonzero + ", " + instr("xor " + mask + " " + r_negative + ", " + x_negative));
  std::string abs_y = call(vt, "llvm.fabs." + m, {{vt, y}});
  std::string toward_x = call(vt, "llvm.copysign." + m, {{vt, abs_y}, {vt, x}});
  std::string fixed = instr("select " + mask + " " + wrong_sign + ", " + vt + " " +
                            instr("fadd " + vt + " " + r + ", " + toward_x) + ", " + vt + " " + r);
  std::string fast_value = call(vt, "llvm.copysign." + m, {{vt, fixed}, {vt, x}});
  std::string limit = splat_const(sc, t == VarType::Float32 ? "8388608.0" : "4503599627370496.0");
  std::string small = instr("fcmp olt " + vt + " " + call(vt, "llvm.fabs." + m, {{vt, quotient}}) + ", " + limit);
  std::string finite_y = instr("fcmp olt " + vt + " " + abs_y + ", " + splat_const(sc, "0x7FF0000000000000"));
  std::string fast = instr("and " + mask + " " + small + ", " + finite_y);
  std::string slow = instr("xor " + mask + " " + fast + ", " + splat_const("i1", "true"));
  std::string any_slow = call("i1", "llvm.vector.reduce.or." + vmangle("i1"), {{mask, slow}});
  std::string before = block_, exact = label(position, "frem"), done = label(position, "fremdone");
  body_ << "  br i1 " << any_slow << ", label %" << exact << ", label %" << done << "\n";
  start_block(exact);
  std::string remainder = instr("frem " + vt + " " + x + ", " + y);
  std::string merged =
      instr("select " + mask + " " + fast + ", " + vt + " " + fast_value + ", " + vt + " " + remainder);
  body_ << "  br label %" << done << "\n";
  start_block(done);
  return instr("phi " + vt + " [ " + fast_value + ", %" + before + " ], [ " + merged + ", %" + exact + " ]");
}

/// (a < b || isnan(b)) ? a : b (and > for max). `type` may be a vector or a scalar type.
std::string Lowering::float_min_max(bool is_min, const std::string& type, const std::string& a, const std::string& b) {
  std::string mask_type = type[0] == '<' ? vec("i1") : "i1";
  std::string better = instr(std::string("fcmp ") + (is_min ? "olt " : "ogt ") + type + " " + a + ", " + b);
  std::string b_nan = instr("fcmp uno " + type + " " + b + ", " + b);
  std::string take_a = instr("or " + mask_type + " " + better + ", " + b_nan);
  return instr("select " + mask_type + " " + take_a + ", " + type + " " + a + ", " + type + " " + b);
}

/// A parameter (a literal generalized into the launch's parameter block) or a one-element
/// input.
bool Lowering::uniform(uint32_t position) const {
  const KernelStatement& s = form_.statements[position];
  return s.op == Op::Param || (s.op == Op::Data && s.broadcast);
}

/// For UInt32 lanes whose divisor d >= 1 is the same on every lane but unknown to LLVM
/// (index arithmetic whose extents became launch parameters): vector integer division is
/// scalarized, so divide by multiplying instead (Granlund and Montgomery, "Division by
/// invariant integers using multiplication", 1994, fig. 4.1):
///   l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, t = mulhi(m, n),
///   q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
/// m and the shifts depend on d only, so LICM computes them once per launch.
std::string Lowering::invariant_divide(const std::string& n, const std::string& d, bool quotient) {
  const std::string v32 = vec("i32"), v64 = vec("i64");
  std::string ctlz = call(v32, "llvm.ctlz." + vmangle("i32"),
                          {{v32, instr("sub " + v32 + " " + d + ", " + splat_const("i32", "1"))}, {"i1", "false"}});
  std::string l = instr("sub " + v32 + " " + splat_const("i32", "32") + ", " + ctlz);
  std::string d64 = instr("zext " + v32 + " " + d + " to " + v64), l64 = instr("zext " + v32 + " " + l + " to " + v64);
  std::string pow = instr("shl " + v64 + " " + splat_const("i64", "1") + ", " + l64);
  std::string numerator =
      instr("shl " + v64 + " " + instr("sub " + v64 + " " + pow + ", " + d64) + ", " + splat_const("i64", "32"));
  std::string m =
      instr("add " + v64 + " " + instr("udiv " + v64 + " " + numerator + ", " + d64) + ", " + splat_const("i64", "1"));
  std::string product = instr("mul " + v64 + " " + m + ", " + instr("zext " + v32 + " " + n + " to " + v64));
  std::string t = instr("trunc " + v64 + " " + instr("lshr " + v64 + " " + product + ", " + splat_const("i64", "32")) +
                        " to " + v32);
  std::string sh1 = call(v32, "llvm.umin." + vmangle("i32"), {{v32, l}, {v32, splat_const("i32", "1")}});
  std::string sh2 = instr("sub " + v32 + " " + l + ", " + sh1);
  std::string half = instr("lshr " + v32 + " " + instr("sub " + v32 + " " + n + ", " + t) + ", " + sh1);
  std::string q = instr("lshr " + v32 + " " + instr("add " + v32 + " " + t + ", " + half) + ", " + sh2);
  if (quotient) return q;
  return instr("sub " + v32 + " " + n + ", " + instr("mul " + v32 + " " + q + ", " + d));
}

std::string Lowering::int_divide(const KernelStatement& s) {
  const VarType t = s.type;
  const std::string vt = vec(t), sc = scalar_type(t);
  const bool sgn = is_signed_int(t);
  std::string zero = instr("icmp eq " + vt + " " + arg(s, 1) + ", zeroinitializer");
  std::string unsafe = zero;
  if (sgn) {
    std::string min_value = t == VarType::Int32 ? "-2147483648" : "-9223372036854775808";
    std::string is_min = instr("icmp eq " + vt + " " + arg(s, 0) + ", " + splat_const(sc, min_value));
    std::string is_m1 = instr("icmp eq " + vt + " " + arg(s, 1) + ", " + splat_const(sc, "-1"));
    unsafe = instr("or " + vec("i1") + " " + zero + ", " + instr("and " + vec("i1") + " " + is_min + ", " + is_m1));
  }
  std::string divisor = instr("select " + vec("i1") + " " + unsafe + ", " + vt + " " + splat_const(sc, "1") + ", " +
                              vt + " " + arg(s, 1));
  bool div = s.op == Op::Div;
  std::string q = t == VarType::UInt32 && uniform(s.operands[1])
                      ? invariant_divide(arg(s, 0), divisor, div)
                      : instr(std::string(div ? (sgn ? "sdiv " : "udiv ") : (sgn ? "srem " : "urem ")) + vt + " " +
                              arg(s, 0) + ", " + divisor);
  // x / 0 == 0 and x % 0 == x; MIN / -1 == MIN / 1 and MIN % -1 == MIN % 1 == 0 already.
  return instr("select " + vec("i1") + " " + zero + ", " + vt + " " + (div ? "zeroinitializer" : arg(s, 0)) + ", " +
               vt + " " + q);
}

std::string Lowering::shift(const KernelStatement& s) {
  const VarType t = s.type;
  const std::string vt = vec(t), sc = scalar_type(t);
  std::string bits = std::to_string(bit_width(t));
  if (s.op == Op::Shr && is_signed_int(t)) {
    std::string count = call(vt, "llvm.umin." + vmangle(sc),
                             {{vt, arg(s, 1)}, {vt, splat_const(sc, std::to_string(bit_width(t) - 1))}});
    return instr("ashr " + vt + " " + arg(s, 0) + ", " + count);
  }
  std::string too_far = instr("icmp uge " + vt + " " + arg(s, 1) + ", " + splat_const(sc, bits));
  std::string shifted =
      instr(std::string(s.op == Op::Shl ? "shl " : "lshr ") + vt + " " + arg(s, 0) + ", " + arg(s, 1));
  return instr("select " + vec("i1") + " " + too_far + ", " + vt + " zeroinitializer, " + vt + " " + shifted);
}

std::string Lowering::compare(const KernelStatement& s) {
  const VarType t = s.operand_type;
  static const char* fcmp[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
  static const char* icmp_signed[] = {"eq", "ne", "slt", "sle", "sgt", "sge"};
  static const char* icmp_unsigned[] = {"eq", "ne", "ult", "ule", "ugt", "uge"};
  int k = int(s.op) - int(Op::Eq);
  std::string pred = is_float(t) ? fcmp[k] : is_signed_int(t) ? icmp_signed[k] : icmp_unsigned[k];
  return instr(std::string(is_float(t) ? "fcmp " : "icmp ") + pred + " " + vec(t) + " " + arg(s, 0) + ", " + arg(s, 1));
}

std::string Lowering::cast(const KernelStatement& s) {
  const VarType from = s.operand_type, to = s.type;
  const std::string a = arg(s, 0), vf = vec(from), vt = vec(to);
  if (to == VarType::Bool)
    return instr(std::string(is_float(from) ? "fcmp une " : "icmp ne ") + vf + " " + a + ", zeroinitializer");
  if (from == VarType::Bool) return instr(std::string(is_float(to) ? "uitofp " : "zext ") + vf + " " + a + " to " + vt);
  if (is_int(from) && is_int(to)) {
    if (bit_width(from) == bit_width(to)) return a;
    if (bit_width(from) > bit_width(to)) return instr("trunc " + vf + " " + a + " to " + vt);
    return instr(std::string(is_signed_int(from) ? "sext " : "zext ") + vf + " " + a + " to " + vt);
  }
  if (is_int(from)) return instr(std::string(is_signed_int(from) ? "sitofp " : "uitofp ") + vf + " " + a + " to " + vt);
  if (is_int(to)) return saturating_float_to_int(from, to, a);
  if (from == to) return a;
  return instr(std::string(bit_width(from) < bit_width(to) ? "fpext " : "fptrunc ") + vf + " " + a + " to " + vt);
}

std::string Lowering::saturating_float_to_int(VarType from, VarType to, const std::string& a) {
  // llvm.fptosi.sat / fptoui.sat, which x86 turns into a scalar conversion per lane: the
  // plain conversion (poison only where it is out of range, and never selected there)
  // then the saturated values by comparisons, all vector instructions.
  const bool is_signed = is_signed_int(to);
  const int bits = bit_width(to);
  const std::string vf = vec(from), vt = vec(to), sf = scalar_type(from), st = scalar_type(to);
  // Powers of two, exact in both float types, written as LLVM's hexadecimal doubles.
  auto power_of_two = [](int exponent, bool negative) {
    uint64_t pattern = (uint64_t(1023 + exponent) << 52) | (negative ? uint64_t(1) << 63 : 0);
    char text[24];
    std::snprintf(text, sizeof(text), "0x%016llX", static_cast<unsigned long long>(pattern));
    return std::string(text);
  };
  std::string truncated = instr(std::string(is_signed ? "fptosi " : "fptoui ") + vf + " " + a + " to " + vt);
  std::string too_large =
      instr("fcmp oge " + vf + " " + a + ", " + splat_const(sf, power_of_two(is_signed ? bits - 1 : bits, false)));
  // Below the range: under -2^(bits-1) for signed types, at or under -1 for unsigned ones.
  std::string too_small = instr(std::string(is_signed ? "fcmp olt " : "fcmp ole ") + vf + " " + a + ", " +
                                splat_const(sf, power_of_two(is_signed ? bits - 1 : 0, true)));
  std::string is_nan = instr("fcmp uno " + vf + " " + a + ", zeroinitializer");
  std::string largest = is_signed ? (bits == 32 ? "2147483647" : "9223372036854775807") : "-1";  // -1: all ones
  std::string smallest = is_signed ? (bits == 32 ? "-2147483648" : "-9223372036854775808") : "0";
  std::string r = instr("select " + vec("i1") + " " + too_large + ", " + vt + " " + splat_const(st, largest) + ", " +
                        vt + " " + truncated);
  r = instr("select " + vec("i1") + " " + too_small + ", " + vt + " " + splat_const(st, smallest) + ", " + vt + " " +
            r);
  return instr("select " + vec("i1") + " " + is_nan + ", " + vt + " zeroinitializer, " + vt + " " + r);
}

}  // namespace kiln::detail::lowering
