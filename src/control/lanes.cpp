// Helpers shared by the control-flow statements (see lanes.h).
#include "control/lanes.h"

#include "ir/node.h"

namespace kiln::detail {

Handle checked_operand(Index index, VarType type, const std::string& what, const char* role) {
  if (!index) throw ValueError("kiln: " + what + ": " + role + " is empty (default-constructed)");
  if (node_type(index) != type)
    throw TypeError("kiln: " + what + ": " + role + " must be a " + type_name(type) + " array, not " +
                    type_name(node_type(index)));
  return Handle::borrow(index);
}

Handle traced(Op op, const Handle& a, const Handle& b, const Handle& c) {
  if (!(a.ad() | b.ad() | c.ad())) return Handle::steal(trace(op, a.index(), b.index(), c.index()));
  AdOperand operands[3] = {a.operand(), b.operand(), c.operand()};
  return Handle::steal(ad_trace(op, operands, size_t(op_arity(op))));
}

Handle literal(VarType type, uint64_t bits, size_t size) { return Handle::steal(make_literal(type, bits, size)); }

Handle select_values(const Handle& mask, const Handle& t, const Handle& f) { return traced(Op::Select, mask, t, f); }

size_t common_size(const Values& values, const std::string& what, const std::string& hint) {
  size_t size = 1;
  for (const Handle& v : values) {
    size_t s = node_size(v.index());
    if (s == size || s == 1) continue;
    if (size != 1)
      throw SizeError("kiln: " + what + ": arrays of " + std::to_string(size) + " and " + std::to_string(s) +
                      " lanes; every array must have the same number of lanes (or 1)" + hint);
    size = s;
  }
  return size;
}

void eval_values(const Values& values) {
  std::vector<Index> indices;
  for (const Handle& v : values) indices.push_back(v.index());
  eval(indices.data(), indices.size());
}

Handle active_lanes(const Handle& mask) { return Handle::steal(compress(mask.index())); }

Values gather_values(const Values& values, const Handle& lanes, size_t width) {
  InputWatchScope compaction;  // per-lane values gathered by lane, not indexed
  Values out;
  Handle all = literal(VarType::Bool, 1);
  for (const Handle& v : values) out.push_back(node_size(v.index()) == width ? traced(Op::Gather, v, lanes, all) : v);
  return out;
}

Values fresh_values(const Values& values) {
  Values out;
  Handle all = literal(VarType::Bool, 1);
  for (const Handle& v : values) out.push_back(select_values(all, v, v));
  return out;
}

void check_like(const Values& expected, const Values& got, const std::string& what) {
  if (got.size() != expected.size())
    throw TypeError("kiln: " + what + " returned " + std::to_string(got.size()) + " arrays, expected " +
                    std::to_string(expected.size()) + " (the same structure as before)");
  for (size_t k = 0; k < got.size(); ++k) {
    if (!got[k]) throw ValueError("kiln: " + what + " returned an empty array at position " + std::to_string(k));
    VarType want = node_type(expected[k].index()), have = node_type(got[k].index());
    if (want != have)
      throw TypeError("kiln: " + what + " returned " + type_name(have) + " at position " + std::to_string(k) +
                      ", expected " + type_name(want) + " (the same types as before)");
  }
}

void check_lanes(const Values& values, size_t lanes, const std::string& what) {
  size_t size = common_size(values, what);
  if (size != 1 && size != lanes)
    throw SizeError("kiln: " + what + " returned arrays of " + std::to_string(size) + " lanes in a statement over " +
                    std::to_string(lanes) + "; a loop, branch or call keeps the number of lanes");
}

Values zeros_like(const Values& like, size_t size) {
  Values out;
  for (const Handle& v : like) out.push_back(literal(node_type(v.index()), 0, size));
  return out;
}

void scatter_values(Values& targets, const Values& values, const Handle& lanes) {
  Handle all = literal(VarType::Bool, 1);
  for (size_t k = 0; k < targets.size(); ++k) {
    if (targets[k].ad() || values[k].ad()) {  // with derivatives: the new target is a new AD node
      AdValue target{targets[k].index(), targets[k].ad()};
      ad_scatter(ReduceOp::None, target, values[k].operand(), lanes.index(), all.index());
      targets[k] = Handle::steal(target);
      continue;
    }
    Index target = targets[k].index();
    trace_scatter(ReduceOp::None, target, values[k].index(), lanes.index(), all.index());
    if (target != targets[k].index()) targets[k] = Handle::steal(target);  // copied on write
  }
}

MaskScope::MaskScope(Index mask) {
  StateLock lock(state().mutex);
  push_mask(mask);
}

MaskScope::~MaskScope() {
  StateLock lock(state().mutex);
  pop_mask();
}

InputWatchScope::InputWatchScope(const char* statement, const std::string& name, bool loop_state, const Values& inputs)
    : watch_{statement, name, loop_state, {}} {
  for (const Handle& v : inputs) watch_.inputs.push_back(v.index());
  StateLock lock(state().mutex);
  state().input_watches.push_back(&watch_);
}

InputWatchScope::InputWatchScope() {
  StateLock lock(state().mutex);
  state().input_watches.push_back(nullptr);
}

InputWatchScope::~InputWatchScope() {
  StateLock lock(state().mutex);
  state().input_watches.pop_back();
}

Handle enclosing_mask() {
  StateLock lock(state().mutex);
  return current_mask() ? Handle::borrow(current_mask()) : Handle();
}

Handle within_enclosing(const Handle& mask) {
  StateLock lock(state().mutex);
  return Handle::steal(apply_current_mask(mask.index()));
}

}  // namespace kiln::detail
