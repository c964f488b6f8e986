// The derivative rules: one entry per differentiable operation (KILN_DIFF_TABLE), each
// giving the partial derivative of the result with respect to every operand as an edge
// of the AD graph. Ops without an entry here (comparisons, integer and bit operations,
// rounding, bitcasts) stop gradients: `rule_of()` maps them to nothing, explicitly.
#include "ad/graph.h"

#include <kiln/errors.h>
#include <kiln/math.h>

#include "ir/node.h"

#include <numbers>
#include <optional>

namespace kiln {

const char* diff_op_name(DiffOp op) {
  switch (op) {
#define KILN_DIFF_NAME(name, arity) \
  case DiffOp::name: return #name;
    KILN_DIFF_TABLE(KILN_DIFF_NAME)
#undef KILN_DIFF_NAME
  }
  return "?";
}

}  // namespace kiln

namespace kiln::detail::ad {
namespace {

/// The derivative rule of an IR op, or nothing when the op stops gradients.
std::optional<DiffOp> rule_of(Op op) {
  // clang-format off: one line per rule, a table
  switch (op) {
    case Op::Neg: return DiffOp::Neg;
    case Op::Abs: return DiffOp::Abs;
    case Op::Sqrt: return DiffOp::Sqrt;
    case Op::Rcp: return DiffOp::Rcp;
    case Op::Rsqrt: return DiffOp::Rsqrt;
    case Op::Cast: return DiffOp::Cast;
    case Op::Add: return DiffOp::Add;
    case Op::Sub: return DiffOp::Sub;
    case Op::Mul: return DiffOp::Mul;
    case Op::Div: return DiffOp::Div;
    case Op::Mod: return DiffOp::Mod;  // recorded for floats only (fmod)
    case Op::Min: return DiffOp::Min;
    case Op::Max: return DiffOp::Max;
    case Op::Fma: return DiffOp::Fma;
    case Op::Select: return DiffOp::Select;
    case Op::Gather: return DiffOp::Gather;
    // Piecewise constant, boolean or integer results: no derivative.
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Bitcast:
    case Op::Not: case Op::And: case Op::Or: case Op::Xor: case Op::Shl:
    case Op::Shr: case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
      return std::nullopt;
    // Not traced through ad_trace.
    case Op::Literal: case Op::Param: case Op::Data: case Op::Counter: case Op::Scatter:
    case Op::ScatterInc: case Op::LoopPhi: case Op::LoopCond: case Op::Loop: case Op::LoopResult:
    case Op::LoopBegin: case Op::LoopUpdate: case Op::LoopEnd:
      return std::nullopt;
    // Host calls: their results carry no derivatives (a differentiable computation sees
    // them as constants); not traced through ad_trace either.
    case Op::HostArg: case Op::HostCall: case Op::HostResult:
      return std::nullopt;
  }
  // clang-format on
  return std::nullopt;
}

Handle handle_of(const auto& array) { return Handle::borrow(array.index()); }

// ---- edges whose derivative is not a lane-wise product ----------------------------------

template <typename T> struct GatherEdge final : SpecialEdge {
  Handle index, mask;
  size_t source_size;
  GatherEdge(Handle i, Handle m, size_t n) : index(std::move(i)), mask(std::move(m)), source_size(n) {}
  Handle forward(Index g) const override {
    return handle_of(gather(Array<T>::borrow(g), UInt32::borrow(index.index()), Bool::borrow(mask.index())));
  }
  Handle backward(Index g) const override {  // the adjoint of a gather: an atomic scatter_add
    Handle buffer;
    backward_into(g, buffer);
    return buffer;
  }
  bool backward_into(Index g, Handle& buffer) const override {
    Array<T> result = buffer ? Array<T>::steal(buffer.release()) : zeros<Array<T>>(source_size);
    scatter_add(result, Array<T>::borrow(g), UInt32::borrow(index.index()), Bool::borrow(mask.index()));
    buffer = handle_of(result);
    return true;
  }
};

/// Into the scattered target from the value: the value lands at `index`.
template <typename T> struct ScatterValueEdge final : SpecialEdge {
  ReduceOp reduce;
  Handle index, mask;
  size_t target_size;
  ScatterValueEdge(ReduceOp r, Handle i, Handle m, size_t n)
      : reduce(r), index(std::move(i)), mask(std::move(m)), target_size(n) {}
  Handle forward(Index g) const override {
    Array<T> result = zeros<Array<T>>(target_size);
    scatter_reduce(reduce, result, Array<T>::borrow(g), UInt32::borrow(index.index()), Bool::borrow(mask.index()));
    return handle_of(result);
  }
  Handle backward(Index g) const override {
    return handle_of(gather(Array<T>::borrow(g), UInt32::borrow(index.index()), Bool::borrow(mask.index())));
  }
};

/// Into the scattered target from the old target: everything but the overwritten lanes.
template <typename T> struct ScatterOverwriteEdge final : SpecialEdge {
  Handle index, mask;
  ScatterOverwriteEdge(Handle i, Handle m) : index(std::move(i)), mask(std::move(m)) {}
  Handle forward(Index g) const override {
    Array<T> result = Array<T>::borrow(g);
    scatter(result, Array<T>(T(0), {}), UInt32::borrow(index.index()), Bool::borrow(mask.index()));
    return handle_of(result);
  }
  Handle backward(Index g) const override { return forward(g); }
};

template <typename T> struct PrefixSumEdge final : SpecialEdge {
  bool exclusive;
  explicit PrefixSumEdge(bool e) : exclusive(e) {}
  Handle forward(Index g) const override { return handle_of(prefix_sum(Array<T>::borrow(g), exclusive)); }
  Handle backward(Index g) const override {  // sums over the later lanes: total minus the earlier ones
    Array<T> grad = Array<T>::borrow(g);
    return handle_of(sum(grad) - prefix_sum(grad, !exclusive));
  }
};

template <typename T> struct BlockSumEdge final : SpecialEdge {
  size_t block, source_size;
  BlockSumEdge(size_t b, size_t n) : block(b), source_size(n) {}
  Handle forward(Index g) const override { return handle_of(block_sum(Array<T>::borrow(g), block)); }
  Handle backward(Index g) const override {
    UInt32 group = arange<UInt32>(source_size) / uint32_t(block);
    return handle_of(gather(Array<T>::borrow(g), group));
  }
};

/// The mask a traced gather reads with: its own and the current mask where it was traced
/// (trace() folds them into the node's third operand).
Handle effective_gather_mask(Index gather) {
  StateLock lock(state().mutex);
  return Handle::borrow(node(gather).operands[2]);
}

// ---- the table ----------------------------------------------------------------------------

/// What a rule sees: the operands (detached), the result, and where its edges go.
template <typename T> struct Rule {
  using A = Array<T>;
  const AdOperand* operands;
  A result;
  AdIndex target;
  size_t parameter = 0;  ///< PrefixSum: exclusive; BlockSum: block size

  A arg(size_t i) const { return A::borrow(operands[i].value); }
  Handle raw(size_t i) const { return Handle::borrow(operands[i].value); }
  size_t size(size_t i) const { return node_size(operands[i].value); }
  bool wants(size_t i) const { return operands[i].ad != 0; }
  static A lit(double v) { return A(T(v), {}); }
  void scale(size_t i, const A& weight) {
    if (wants(i)) add_edge(operands[i].ad, target, EdgeKind::Scale, handle_of(weight));
  }
  void identity(size_t i) {
    if (wants(i)) add_edge(operands[i].ad, target, EdgeKind::Scale);
  }
  void mask(size_t i, const Bool& keep) {
    if (wants(i)) add_edge(operands[i].ad, target, EdgeKind::Mask, handle_of(keep));
  }
  void special(size_t i, std::shared_ptr<const SpecialEdge> edge) {
    if (wants(i)) add_edge(operands[i].ad, target, EdgeKind::Special, {}, std::move(edge));
  }
};

template <typename T> void apply_rule(DiffOp op, Rule<T>& r) {
  using A = Array<T>;
  const A& y = r.result;
  // clang-format off: one line per rule, a table
  switch (op) {
    case DiffOp::Neg: r.scale(0, r.lit(-1)); return;
    case DiffOp::Abs: { A x = r.arg(0); r.scale(0, select(x > T(0), r.lit(1), select(x < T(0), r.lit(-1), r.lit(0)))); return; }
    case DiffOp::Sqrt: r.scale(0, T(0.5) / y); return;
    case DiffOp::Rcp: r.scale(0, -(y * y)); return;
    case DiffOp::Rsqrt: r.scale(0, T(-0.5) * y * y * y); return;
    case DiffOp::Cast: r.identity(0); return;  // the type changes as the gradient is added
    case DiffOp::Add: r.identity(0); r.identity(1); return;
    case DiffOp::Sub: r.identity(0); r.scale(1, r.lit(-1)); return;
    case DiffOp::Mul: r.scale(0, r.arg(1)); r.scale(1, r.arg(0)); return;
    case DiffOp::Div: { A inv = rcp(r.arg(1)); r.scale(0, inv); if (r.wants(1)) r.scale(1, -y * inv); return; }
    case DiffOp::Mod: {  // x - q y with the integer quotient q = (x - y_result) / y (exact up to rounding)
      r.identity(0);
      if (r.wants(1)) r.scale(1, -round((r.arg(0) - y) / r.arg(1)));
      return;
    }
    case DiffOp::Min: { Bool first = r.arg(0) <= r.arg(1); r.mask(0, first); r.mask(1, !first); return; }
    case DiffOp::Max: { Bool first = r.arg(0) >= r.arg(1); r.mask(0, first); r.mask(1, !first); return; }
    case DiffOp::Fma: r.scale(0, r.arg(1)); r.scale(1, r.arg(0)); r.identity(2); return;
    case DiffOp::Select: { Bool m = Bool::borrow(r.operands[0].value); r.mask(1, m); r.mask(2, !m); return; }
    case DiffOp::Exp: r.scale(0, y); return;
    case DiffOp::Exp2: r.scale(0, y * T(std::numbers::ln2)); return;
    case DiffOp::Expm1: r.scale(0, y + T(1)); return;
    case DiffOp::Log: r.scale(0, rcp(r.arg(0))); return;
    case DiffOp::Log1p: r.scale(0, rcp(r.arg(0) + T(1))); return;
    case DiffOp::Log2: r.scale(0, rcp(r.arg(0)) * T(1 / std::numbers::ln2)); return;
    case DiffOp::Pow: {
      A x = r.arg(0), p = r.arg(1);
      if (r.wants(0)) r.scale(0, p * pow(x, p - T(1)));
      if (r.wants(1)) r.scale(1, select(x > T(0), y * log(x), r.lit(0)));
      return;
    }
    case DiffOp::Sin: r.scale(0, cos(r.arg(0))); return;
    case DiffOp::Cos: r.scale(0, -sin(r.arg(0))); return;
    case DiffOp::Tan: r.scale(0, fma(y, y, T(1))); return;
    case DiffOp::Asin: { A x = r.arg(0); r.scale(0, rsqrt(fma(-x, x, T(1)))); return; }
    case DiffOp::Acos: { A x = r.arg(0); r.scale(0, -rsqrt(fma(-x, x, T(1)))); return; }
    case DiffOp::Atan: { A x = r.arg(0); r.scale(0, rcp(fma(x, x, T(1)))); return; }
    case DiffOp::Atan2: {  // atan2(a, b): d/da = b / (a² + b²), d/db = -a / (a² + b²)
      A a = r.arg(0), b = r.arg(1), inv = rcp(fma(a, a, b * b));
      r.scale(0, b * inv);
      if (r.wants(1)) r.scale(1, -a * inv);
      return;
    }
    case DiffOp::Sinh: r.scale(0, cosh(r.arg(0))); return;
    case DiffOp::Cosh: r.scale(0, sinh(r.arg(0))); return;
    case DiffOp::Tanh: r.scale(0, fma(-y, y, T(1))); return;
    case DiffOp::Erf: { A x = r.arg(0); r.scale(0, T(2 * std::numbers::inv_sqrtpi) * exp(-x * x)); return; }
    case DiffOp::Erfinv: r.scale(0, T(0.5 / std::numbers::inv_sqrtpi) * exp(y * y)); return;
    case DiffOp::Cbrt: r.scale(0, rcp(T(3) * y * y)); return;
    case DiffOp::Gather:  // with the mask the gather read with: the lanes of its loop, branch or call too
      r.special(0, std::make_shared<GatherEdge<T>>(r.raw(1), effective_gather_mask(y.index()), r.size(0)));
      return;
    case DiffOp::Scatter:  // operands: (old target, value, index, mask)
      r.special(0, std::make_shared<ScatterOverwriteEdge<T>>(r.raw(2), r.raw(3)));
      r.special(1, std::make_shared<ScatterValueEdge<T>>(ReduceOp::None, r.raw(2), r.raw(3), r.size(0)));
      return;
    case DiffOp::ScatterAdd:
      r.identity(0);
      r.special(1, std::make_shared<ScatterValueEdge<T>>(ReduceOp::Add, r.raw(2), r.raw(3), r.size(0)));
      return;
    case DiffOp::Sum: r.identity(0); return;  // the one-lane result sums the lanes' tangents
    case DiffOp::Prod: r.scale(0, y / r.arg(0)); return;
    case DiffOp::ReduceMin: case DiffOp::ReduceMax: r.mask(0, r.arg(0) == y); return;
    case DiffOp::PrefixSum: r.special(0, std::make_shared<PrefixSumEdge<T>>(r.parameter != 0)); return;
    case DiffOp::BlockSum: r.special(0, std::make_shared<BlockSumEdge<T>>(r.parameter, r.size(0))); return;
  }
  // clang-format on
  throw InternalError(std::string("kiln: AD: no derivative rule for ") + diff_op_name(op));
}

/// The library function's value on detached arguments.
template <typename T> Array<T> math_value(DiffOp op, const AdOperand* operands) {
  Array<T> x = Array<T>::borrow(operands[0].value);
  auto second = [&] { return Array<T>::borrow(operands[1].value); };
  switch (op) {
    case DiffOp::Exp: return exp(x);
    case DiffOp::Exp2: return exp2(x);
    case DiffOp::Expm1: return expm1(x);
    case DiffOp::Log: return log(x);
    case DiffOp::Log1p: return log1p(x);
    case DiffOp::Log2: return log2(x);
    case DiffOp::Pow: return pow(x, second());
    case DiffOp::Sin: return sin(x);
    case DiffOp::Cos: return cos(x);
    case DiffOp::Tan: return tan(x);
    case DiffOp::Asin: return asin(x);
    case DiffOp::Acos: return acos(x);
    case DiffOp::Atan: return atan(x);
    case DiffOp::Atan2: return atan2(x, second());
    case DiffOp::Sinh: return sinh(x);
    case DiffOp::Cosh: return cosh(x);
    case DiffOp::Tanh: return tanh(x);
    case DiffOp::Erf: return erf(x);
    case DiffOp::Erfinv: return erfinv(x);
    case DiffOp::Cbrt: return cbrt(x);
    // Not math functions: IR ops (ad_trace), scatters (ad_scatter), horizontal ops (ad_horizontal).
    // clang-format off
    case DiffOp::Neg: case DiffOp::Abs: case DiffOp::Sqrt: case DiffOp::Rcp: case DiffOp::Rsqrt: case DiffOp::Cast:
    case DiffOp::Add: case DiffOp::Sub: case DiffOp::Mul: case DiffOp::Div: case DiffOp::Mod: case DiffOp::Min:
    case DiffOp::Max: case DiffOp::Fma: case DiffOp::Select: case DiffOp::Gather: case DiffOp::Scatter:
    case DiffOp::ScatterAdd: case DiffOp::Sum: case DiffOp::Prod: case DiffOp::ReduceMin: case DiffOp::ReduceMax:
    case DiffOp::PrefixSum: case DiffOp::BlockSum:
      // clang-format on
      break;
  }
  throw InternalError(std::string("kiln: ad_math(): ") + diff_op_name(op) + " is not a math function");
}

/// Records the AD node of `value` (a new reference that the result takes over) with
/// `op`'s edges. Returns the value alone when recording is off or nothing is float.
template <typename T> AdValue record(DiffOp op, Index value, const AdOperand* operands, size_t parameter = 0) {
  GraphLock lock(graph().mutex);
  AdIndex target = new_node(node_type(value), node_size(value));
  Rule<T> rule{operands, Array<T>::borrow(value), target, parameter};
  apply_rule(op, rule);
  return {value, target};
}

AdValue record_typed(DiffOp op, Index value, const AdOperand* operands, size_t parameter = 0) {
  VarType type = node_type(value);
  if (type == VarType::Float64) return record<double>(op, value, operands, parameter);
  if (type == VarType::Float32) return record<float>(op, value, operands, parameter);
  return {value, 0};
}

}  // namespace
}  // namespace kiln::detail::ad

namespace kiln::detail {

using namespace ad;

AdValue ad_trace(Op op, const AdOperand* operands, size_t count, VarType type) {
  Index args[3] = {0, 0, 0};
  for (size_t i = 0; i < count; ++i) args[i] = operands[i].value;
  Index value = trace(op, args[0], args[1], args[2], type);
  std::optional<DiffOp> rule = rule_of(op);
  if (!rule || !ad_recording()) return {value, 0};
  if (op == Op::Cast && !is_float(node_type(operands[0].value))) return {value, 0};
  return record_typed(*rule, value, operands);
}

AdValue ad_math(DiffOp op, const AdOperand* operands, size_t count) {
  (void)count;
  VarType type = node_type(operands[0].value);
  Index value = (type == VarType::Float64 ? handle_of(math_value<double>(op, operands))
                                          : handle_of(math_value<float>(op, operands)))
                    .release();
  if (!ad_recording()) return {value, 0};
  return record_typed(op, value, operands);
}

AdValue ad_horizontal(DiffOp op, AdOperand operand, size_t parameter) {
  Index value = 0;
  switch (op) {
    case DiffOp::Sum: value = reduce(Reduction::Sum, operand.value); break;
    case DiffOp::Prod: value = reduce(Reduction::Prod, operand.value); break;
    case DiffOp::ReduceMin: value = reduce(Reduction::Min, operand.value); break;
    case DiffOp::ReduceMax: value = reduce(Reduction::Max, operand.value); break;
    case DiffOp::PrefixSum: value = prefix_sum(operand.value, parameter != 0); break;
    case DiffOp::BlockSum: value = block_sum(operand.value, parameter); break;
    // Not horizontal: IR ops (ad_trace), math functions (ad_math), scatters (ad_scatter).
    // clang-format off
    case DiffOp::Neg: case DiffOp::Abs: case DiffOp::Sqrt: case DiffOp::Rcp: case DiffOp::Rsqrt: case DiffOp::Cast:
    case DiffOp::Add: case DiffOp::Sub: case DiffOp::Mul: case DiffOp::Div: case DiffOp::Mod: case DiffOp::Min:
    case DiffOp::Max: case DiffOp::Fma: case DiffOp::Select: case DiffOp::Exp: case DiffOp::Exp2:
    case DiffOp::Expm1: case DiffOp::Log: case DiffOp::Log2: case DiffOp::Log1p: case DiffOp::Pow: case DiffOp::Sin:
    case DiffOp::Cos: case DiffOp::Tan: case DiffOp::Asin: case DiffOp::Acos: case DiffOp::Atan: case DiffOp::Atan2:
    case DiffOp::Sinh: case DiffOp::Cosh: case DiffOp::Tanh: case DiffOp::Erf: case DiffOp::Erfinv:
    case DiffOp::Cbrt: case DiffOp::Gather: case DiffOp::Scatter: case DiffOp::ScatterAdd:
      // clang-format on
      throw InternalError(std::string("kiln: ad_horizontal(): ") + diff_op_name(op) + " is not horizontal");
  }
  if (!ad_recording()) return {value, 0};
  return record_typed(op, value, &operand, parameter);
}

void ad_scatter(ReduceOp reduce, AdValue& target, AdOperand value, Index index, Index mask) {
  if (reduce != ReduceOp::None && reduce != ReduceOp::Add)
    throw ValueError(std::string("kiln: scatter_reduce(") + reduce_op_name(reduce) +
                     "): only plain scatters and scatter_add have derivatives; detach() the target "
                     "and the value (block_reduce() differentiates block minima, maxima and products)");
  AdOperand old_target{target.value, target.ad};
  Index t = target.value;
  trace_scatter(reduce, t, value.value, index, mask);
  if (t == target.value) inc_ref(t);  // the caller's array keeps its own reference
  Handle mask_handle = mask ? Handle::borrow(mask) : Handle::steal(make_literal(VarType::Bool, 1, 1));
  {
    // The mask the scatter wrote with: its own and the lanes of its loop, branch or call.
    StateLock lock(state().mutex);
    mask_handle = Handle::steal(apply_current_mask(mask_handle.index()));
  }
  target = AdValue{t, 0};
  if (!ad_recording()) return;
  AdOperand operands[4] = {old_target, value, {index, 0}, {mask_handle.index(), 0}};
  target = record_typed(reduce == ReduceOp::Add ? DiffOp::ScatterAdd : DiffOp::Scatter, t, operands);
}

}  // namespace kiln::detail
