// Every op of the op table, on every type it is defined for, run by the LLVM backend and
// by the reference interpreter on edge values (NaN, ±inf, −0, denormals, integer extremes,
// division by zero, extreme shift counts); results must agree bit for bit.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/op_info.h"
#include "ir/scalar_ops.h"
#include "op_test_support.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace kiln;
using namespace kiln::test;
using kiln::detail::Index;

namespace {

const VarType kAllTypes[] = {VarType::Bool,   VarType::Int32,   VarType::UInt32, VarType::Int64,
                             VarType::UInt64, VarType::Float32, VarType::Float64};

/// Runs `op` on every pair (or triple) of edge values of `type` on both backends.
void check_op(Op op, VarType type, VarType result_type = VarType::Bool) {
  std::vector<uint64_t> values = edge_values(type);
  int arity = detail::op_arity(op);
  std::vector<std::vector<uint64_t>> columns(3);
  size_t n = values.size();
  size_t count = arity == 1 ? n : arity == 2 ? n * n : n * n * n;
  for (size_t i = 0; i < count; ++i) {
    columns[0].push_back(values[i % n]);
    columns[1].push_back(values[(i / n) % n]);
    columns[2].push_back(values[(i / (n * n)) % n]);
  }
  auto program = [&]() {
    Index a = upload(type, columns[0]), b = upload(type, columns[1]), c = upload(type, columns[2]);
    Index mask = 0;
    Index result;
    if (op == Op::Select) {
      mask = detail::trace(type == VarType::Bool ? Op::Ne : Op::Lt, a, b);
      result = detail::trace(Op::Select, mask, b, c);
    } else {
      Index operands[3] = {a, b, c};
      result = detail::trace(op, operands[0], arity > 1 ? operands[1] : 0, arity > 2 ? operands[2] : 0, result_type);
    }
    std::vector<uint64_t> out = download(result);
    for (Index i : {a, b, c, mask, result}) detail::dec_ref(i);
    return out;
  };
  std::vector<uint64_t> jit = run_on(false, program), reference = run_on(true, program);
  VarType out_type = (op == Op::Cast || op == Op::Bitcast) ? result_type
                     : detail::op_is_comparison(op)        ? VarType::Bool
                                                           : type;
  ASSERT_EQ(jit.size(), reference.size());
  for (size_t i = 0; i < jit.size(); ++i) {
    ASSERT_TRUE(same_value(out_type, jit[i], reference[i]))
        << detail::op_name(op) << " on " << type_name(type) << " lane " << i << ": a=0x" << std::hex << columns[0][i]
        << " b=0x" << columns[1][i] << " c=0x" << columns[2][i] << " jit=0x" << jit[i] << " interpreter=0x"
        << reference[i];
  }
}

}  // namespace

TEST(Ops, EveryElementwiseOpMatchesTheInterpreter) {
  int checked = 0;
  for (int i = 0; i < detail::kOpCount; ++i) {
    Op op = Op(i);
    switch (op) {
      case Op::Literal:
      case Op::Param:
      case Op::Data:
      case Op::Counter:  // leaves: Ops.Leaves, test_kernel_cache
      case Op::Gather:
      case Op::Scatter:
      case Op::ScatterInc:  // memory: test_eval, fuzzer
      case Op::HostArg:
      case Op::HostCall:
      case Op::HostResult:  // host calls: test_host_call, fuzzer
        continue;
      case Op::LoopPhi:
      case Op::LoopCond:
      case Op::Loop:
      case Op::LoopResult:  // loops: test_control,
      case Op::LoopBegin:
      case Op::LoopUpdate:
      case Op::LoopEnd:  // fuzzer
        continue;
      case Op::Cast:
        for (VarType from : kAllTypes)
          for (VarType to : kAllTypes) check_op(Op::Cast, from, to);
        ++checked;
        continue;
      case Op::Bitcast:
        for (auto [from, to] : {std::pair{VarType::Float32, VarType::Int32},
                                {VarType::UInt32, VarType::Float32},
                                {VarType::Float64, VarType::UInt64},
                                {VarType::Int64, VarType::Float64},
                                {VarType::Int32, VarType::UInt32}})
          check_op(Op::Bitcast, from, to);
        ++checked;
        continue;
      default: break;
    }
    ASSERT_TRUE(detail::is_scalar_evaluable(op)) << "op " << detail::op_name(op) << " has no test";
    for (VarType t : kAllTypes)
      if (op_defined_for(op, t) && !(detail::op_arity(op) == 3 && op != Op::Select && t == VarType::Bool))
        check_op(op, t);
    ++checked;
  }
  EXPECT_EQ(checked, detail::kOpCount - 17);
}

TEST(Ops, Leaves) {
  auto program = [] {
    UInt32 counter = arange<UInt32>(37);
    Float lit = full<Float>(-0.f, 37);
    Int64 data = Int64::from(std::vector<int64_t>(37, -5));
    Float64 both = cast<double>(counter) + cast<double>(data) + cast<double>(lit);
    std::vector<double> v = both.to_vector();
    return std::vector<uint64_t>(v.begin(), v.end());
  };
  std::vector<uint64_t> jit = run_on(false, program), reference = run_on(true, program);
  EXPECT_EQ(jit, reference);
  EXPECT_EQ(jit[36], 31u);
}

TEST(Ops, DocumentedIntegerEdgeCases) {
  Int32 a = Int32{7, -7, std::numeric_limits<int32_t>::min(), 5};
  Int32 b = Int32{0, 0, -1, 3};
  EXPECT_EQ((a / b).to_vector(), (std::vector<int32_t>{0, 0, std::numeric_limits<int32_t>::min(), 1}));
  EXPECT_EQ((a % b).to_vector(), (std::vector<int32_t>{7, -7, 0, 2}));
  UInt32 x = UInt32{1, 1, 0x80000000u, 3};
  UInt32 s = UInt32{31, 32, 100, 1};
  EXPECT_EQ((x << s).to_vector(), (std::vector<uint32_t>{0x80000000u, 0, 0, 6}));
  EXPECT_EQ((x >> s).to_vector(), (std::vector<uint32_t>{0, 0, 0, 1}));
  Int32 negative = Int32{-8, -8, 8};
  Int32 counts = Int32{40, -1, 33};  // counts read as unsigned: -1 is huge
  EXPECT_EQ((negative >> counts).to_vector(), (std::vector<int32_t>{-1, -1, 0}));
}

/// UInt32 division and remainder by a divisor that is the same on every lane but known only
/// at launch (an opaque() parameter, or a one-element input): the LLVM backend multiplies by
/// a reciprocal computed per launch (lower.cpp, invariant_divide) instead of dividing.
TEST(Ops, UInt32DivisionByLaunchInvariantDivisors) {
  const uint32_t divisors[] = {0,     1,     2,           3,           5,           7,           10,         641,
                               65535, 65536, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  std::vector<uint32_t> n = {0,        1,           2,           3,           9,           10,
                             11,       640,         641,         642,         65535,       65536,
                             1u << 20, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  for (uint32_t k = 0; k < 1000; ++k) n.push_back(k * 2654435761u);
  UInt32 values = UInt32::from(n);
  for (uint32_t d : divisors) {
    for (bool parameter : {true, false}) {
      UInt32 divisor = parameter ? opaque<UInt32>(d) : UInt32::from(std::vector<uint32_t>{d});
      std::vector<uint32_t> q = (values / divisor).to_vector(), r = (values % divisor).to_vector();
      for (size_t i = 0; i < n.size(); ++i) {
        ASSERT_EQ(q[i], d ? n[i] / d : 0u) << n[i] << " / " << d << (parameter ? " (parameter)" : " (input)");
        ASSERT_EQ(r[i], d ? n[i] % d : n[i]) << n[i] << " % " << d << (parameter ? " (parameter)" : " (input)");
      }
    }
  }
}

TEST(Ops, DocumentedFloatEdgeCases) {
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Float f = Float{nan, inf, -inf, 3e9f, -3e9f, 2.5f, -2.5f};
  EXPECT_EQ(cast<int32_t>(f).to_vector(), (std::vector<int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2, -2}));
  EXPECT_EQ(cast<uint32_t>(f).to_vector(), (std::vector<uint32_t>{0, UINT32_MAX, 0, 3000000000u, 0, 2, 0}));
  EXPECT_EQ(round(f).to_vector()[5], 2.f);  // half to even
  EXPECT_TRUE(cast<bool>(f).read(0));       // NaN != 0
  EXPECT_EQ(min(Float{nan}, Float{1.f}).item(), 1.f);
}

TEST(Ops, LiteralsFoldOnlyWithLiterals) {
  Float a = Float(2.f) * Float(3.f) + 1.f;
  EXPECT_TRUE(detail::node_is_literal(a.index()));
  EXPECT_EQ(a.item(), 7.f);
  Float x = Float{1.f, 2.f};
  Float y = x * 1.f;  // never rewritten to x: the kernel's shape must not depend on values
  EXPECT_NE(y.index(), x.index());
  EXPECT_FALSE(detail::node_is_literal(y.index()));
}

TEST(Ops, ValueNumberingMergesIdenticalExpressions) {
  Float x = Float{1.f, 2.f, 3.f}, one = 1.f;
  Float a = sqrt(x) + one, b = sqrt(x) + one;
  EXPECT_EQ(a.index(), b.index());
  // Equal literal values stay distinct nodes: a kernel's structure never depends on them.
  EXPECT_NE((sqrt(x) + 1.f).index(), (sqrt(x) + 1.f).index());
}

// ---- the op table: what the compiler cannot check ------------------------------------------

namespace {

using detail::TypeRule;

/// The arities an op of type rule `rule` may have.
bool arity_fits(TypeRule rule, int arity) {
  switch (rule) {
    case TypeRule::Own: return true;
    case TypeRule::Numeric: return arity >= 1 && arity <= 3;
    case TypeRule::Bitwise: return arity == 1 || arity == 2;
    case TypeRule::Integer:
    case TypeRule::Equality:
    case TypeRule::Ordering: return arity == 2;
    case TypeRule::Float:
    case TypeRule::Cast:
    case TypeRule::Bitcast: return arity == 1;
    case TypeRule::Select: return arity == 3;
  }
  return false;
}

/// Rules under which an op takes operands of one type and its result has that type or Bool.
bool checks_operand_types(TypeRule rule) {
  return rule != TypeRule::Own && rule != TypeRule::Cast && rule != TypeRule::Bitcast;
}

}  // namespace

TEST(OpTable, EveryRowIsConsistent) {
  for (int i = 0; i < detail::kOpCount; ++i) {
    Op op = Op(i);
    TypeRule rule = detail::op_type_rule(op);
    SCOPED_TRACE(detail::op_name(op));
    EXPECT_TRUE(arity_fits(rule, detail::op_arity(op))) << "arity " << detail::op_arity(op);
    // trace() types exactly the ops that have scalar semantics (elementwise ops).
    EXPECT_EQ(rule != TypeRule::Own, detail::is_scalar_evaluable(op));
    EXPECT_FALSE(detail::op_is_pure(op) && detail::op_is_side_effect(op));
    if (detail::op_has_buffer_operand(op)) {
      EXPECT_EQ(rule, TypeRule::Own);
      EXPECT_FALSE(detail::op_is_pure(op));
      EXPECT_GE(detail::op_arity(op), 1);
    }
  }
  EXPECT_TRUE(detail::op_is_comparison(Op::Eq) && detail::op_is_comparison(Op::Ge));
  EXPECT_FALSE(detail::op_is_comparison(Op::Select));
  EXPECT_TRUE(detail::op_has_buffer_operand(Op::Gather) && detail::op_has_buffer_operand(Op::ScatterInc));
  EXPECT_FALSE(detail::op_has_buffer_operand(Op::LoopPhi));
}

/// The table's type rule, as trace() applies it, admits exactly the types the op tests run
/// every op on (op_defined_for), and gives comparisons a Bool result.
TEST(OpTable, TraceAcceptsExactlyTheTypesOfTheTypeRule) {
  for (int i = 0; i < detail::kOpCount; ++i) {
    Op op = Op(i);
    if (!checks_operand_types(detail::op_type_rule(op))) continue;
    for (VarType t : kAllTypes) {
      SCOPED_TRACE(std::string(detail::op_name(op)) + " on " + type_name(t));
      Index x = upload(t, {1, 0}), mask = upload(VarType::Bool, {1, 0});
      Index first = op == Op::Select ? mask : x;
      int arity = detail::op_arity(op);
      try {
        Index result = detail::trace(op, first, arity > 1 ? x : 0, arity > 2 ? x : 0);
        EXPECT_TRUE(op_defined_for(op, t)) << "accepted";
        EXPECT_EQ(detail::node_type(result), detail::op_is_comparison(op) ? VarType::Bool : t);
        detail::dec_ref(result);
      } catch (const TypeError& e) {
        EXPECT_FALSE(op_defined_for(op, t)) << "refused: " << e.what();
        EXPECT_NE(std::string(e.what()).find(detail::op_name(op)), std::string::npos) << e.what();
      }
      detail::dec_ref(x);
      detail::dec_ref(mask);
    }
  }
}

/// The scalar semantics of an op (scalar_ops.cpp) is defined for exactly the types its type
/// rule admits: the interpreter and literal folding never meet a type it lacks.
TEST(OpTable, ScalarSemanticsCoverExactlyTheTypesOfTheTypeRule) {
  for (int i = 0; i < detail::kOpCount; ++i) {
    Op op = Op(i);
    TypeRule rule = detail::op_type_rule(op);
    if (!checks_operand_types(rule)) continue;
    for (VarType t : kAllTypes) {
      SCOPED_TRACE(std::string(detail::op_name(op)) + " on " + type_name(t));
      VarType result = detail::op_is_comparison(op) ? VarType::Bool : t;
      if (op_defined_for(op, t)) {
        EXPECT_NO_THROW(detail::eval_scalar(op, result, t, 1, 1, 1));
      } else if (!detail::op_is_comparison(op)) {  // Lt on Bool compares false < true; trace() refuses it
        EXPECT_THROW(detail::eval_scalar(op, result, t, 1, 1, 1), InternalError);
      }
    }
  }
}
