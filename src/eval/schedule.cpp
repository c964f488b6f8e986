// Collects the statements of a kernel by depth-first traversal from its side effects (in
// program order) and roots, stopping at evaluated Data nodes, which become inputs.
#include "eval/schedule.h"

#include <algorithm>

namespace kiln::detail {

std::vector<KernelGroup> group_by_size(const std::vector<Index>& roots,
                                       const std::vector<Index>& effects) {
  std::vector<KernelGroup> groups;
  auto group_for = [&](size_t size) -> KernelGroup& {
    for (KernelGroup& g : groups)
      if (g.size == size) return g;
    groups.push_back(KernelGroup{size, {}, {}});
    return groups.back();
  };
  for (Index e : effects) group_for(node(e).size).effects.push_back(e);
  for (Index r : roots) group_for(node(r).size).roots.push_back(r);
  std::stable_partition(groups.begin(), groups.end(),
                        [](const KernelGroup& g) { return !g.effects.empty(); });
  return groups;
}

namespace {

class KernelBuilder {
 public:
  KernelBuilder(bool checks, uint32_t packet_width) : pass_(++state().schedule_passes) {
    kernel_.form.checks = checks;
    kernel_.form.packet_width = packet_width;
  }

  /// Emits `root` and everything it needs that is not emitted yet; returns its position.
  uint32_t visit(Index root) {
    std::vector<std::pair<Index, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [index, expanded] = stack.back();
      stack.pop_back();
      if (placed(index)) continue;
      const Node& n = node(index);
      if (n.op == Op::Data) {
        emit_input(index);
        continue;
      }
      if (expanded) {
        emit(index);
        continue;
      }
      stack.push_back({index, true});
      int arity = op_arity(n.op);
      for (int k = arity - 1; k >= 0; --k)
        if (!placed(n.operands[k])) stack.push_back({n.operands[k], false});
    }
    return node(root).schedule_position;
  }

  void mark_output(Index index) {
    uint32_t position = visit(index);
    KernelStatement& s = kernel_.form.statements[position];
    if (s.output_slot != kNoSlot) return;
    s.output_slot = uint32_t(kernel_.outputs.size());  // renumbered after inputs are known
    kernel_.outputs.push_back(index);
  }

  ScheduledKernel finish() {
    KernelForm& form = kernel_.form;
    form.input_count = uint32_t(kernel_.inputs.size());
    form.output_count = uint32_t(kernel_.outputs.size());
    for (KernelStatement& s : form.statements)
      if (s.output_slot != kNoSlot) s.output_slot += form.input_count;
    return std::move(kernel_);
  }

 private:
  void emit_input(Index index) {
    const Node& n = node(index);
    KernelStatement s{};
    s.op = Op::Data;
    s.type = s.operand_type = n.type;
    s.broadcast = n.size == 1;
    s.input_slot = uint32_t(kernel_.inputs.size());
    s.output_slot = kNoSlot;
    kernel_.inputs.push_back(index);
    push(index, s);
  }

  void emit(Index index) {
    const Node& n = node(index);
    KernelStatement s{};
    s.op = n.op;
    s.type = n.type;
    s.literal = n.literal;
    if (n.op == Op::Literal || n.op == Op::Param) {  // a slot: its value goes beside the statements
      LiteralSlots& slots = kernel_.form.slots;
      slots.positions.push_back(uint32_t(kernel_.form.statements.size()));
      slots.values.push_back(n.literal);
      slots.opaque.push_back(n.op == Op::Param);
      s.op = Op::Literal;
      s.literal = 0;
    }
    s.input_slot = kNoSlot;
    s.output_slot = kNoSlot;
    int arity = op_arity(n.op);
    for (int k = 0; k < arity; ++k) s.operands[k] = node(n.operands[k]).schedule_position;
    int value_operand = n.op == Op::Select ? 1 : 0;
    s.operand_type = arity > 0 ? node(n.operands[value_operand]).type : n.type;
    push(index, s);
  }

  void push(Index index, const KernelStatement& s) {
    Node& n = node(index);
    n.schedule_pass = pass_;
    n.schedule_position = uint32_t(kernel_.form.statements.size());
    kernel_.form.statements.push_back(s);
    kernel_.statements.push_back(index);
  }

  ScheduledKernel kernel_;
  bool placed(Index index) const { return node(index).schedule_pass == pass_; }

  uint64_t pass_;
};

}  // namespace

ScheduledKernel schedule_kernel(const KernelGroup& group, bool checks, uint32_t packet_width) {
  KernelBuilder builder(checks, packet_width);
  for (Index effect : group.effects) {
    builder.visit(effect);
    // A counter's old values outlive the kernel when anything still uses them.
    const Node& n = node(effect);
    if (n.op == Op::ScatterInc && (n.ref_ext > 0 || n.ref_int > 1)) builder.mark_output(effect);
  }
  for (Index root : group.roots) builder.mark_output(root);
  return builder.finish();
}

}  // namespace kiln::detail
