// Collects the statements of a kernel by depth-first traversal from its side effects (in
// program order) and roots, stopping at evaluated Data nodes, which become inputs.
#include "form/schedule.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::detail {

std::vector<KernelGroup> group_by_size(const std::vector<Index>& roots, const std::vector<Index>& effects) {
  std::vector<KernelGroup> groups;
  auto group_for = [&](const Node& n) -> KernelGroup& {
    for (KernelGroup& g : groups)
      if (g.size == n.size && g.device == n.device) return g;
    groups.push_back(KernelGroup{n.size, n.device, {}, {}});
    return groups.back();
  };
  for (Index e : effects) group_for(node(e)).effects.push_back(e);
  for (Index r : roots) group_for(node(r)).roots.push_back(r);
  std::stable_partition(groups.begin(), groups.end(), [](const KernelGroup& g) { return !g.effects.empty(); });
  return groups;
}

namespace {

class KernelBuilder {
 public:
  KernelBuilder(bool checks, uint32_t packet_width, size_t lanes) : pass_(++state().schedule_passes), lanes_(lanes) {
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
        if (n.op == Op::Loop)
          emit_loop(index);
        else if (n.op == Op::LoopResult)
          place_at(index, node(phi_of(index)).schedule_position);
        else
          emit(index);
        continue;
      }
      stack.push_back({index, true});
      if (n.op == Op::Loop) {
        // What the loop reads from outside its body is computed before it.
        std::vector<Index> needs = loop_inputs(index);
        for (auto it = needs.rbegin(); it != needs.rend(); ++it)
          if (!placed(*it)) stack.push_back({*it, false});
        continue;
      }
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

  /// A side effect of the group: the pending list's reference to it goes with the kernel.
  void note_effect(Index effect) { effects_.push_back(effect); }

  ScheduledKernel finish() {
    // Every live result of a loop with side effects run here is stored: running the loop
    // again for a result read later would repeat them. A pure loop the first time it runs
    // stores the results read once the kernel is done through an array or a pending value
    // of their own, not those read only through values computed from them here and kept
    // (the adjoints a reverse pass leaves pending, which reference a render's calls by the
    // hundred); a kernel that runs it again stores all it still needs, so none runs it a
    // third time. The results read only inside the kernel are never stored (a render's ray
    // traversals would keep memory per ray for values nobody reads).
    Outliving outliving = top_level_loops_.empty() ? Outliving{} : outliving_nodes();
    for (Index loop : top_level_loops_) {
      Region& body = region(uint32_t(node(loop).literal));
      bool rerun = !body.effects.empty() || body.runs > 0;
      for (Index result : body.results) {
        if (!is_result_of(result, loop)) continue;
        bool needed = !placed(result) || outliving.referenced.count(result) || (rerun && outliving.kept.count(result));
        if (!body.effects.empty() || needed) mark_output(result);
      }
      ++body.runs;
    }
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
    // A one-lane launch reads element 0 either way: it shares the kernel of wider launches
    // (marking its inputs broadcast would make a new kernel shape out of a lane count).
    s.broadcast = n.size == 1 && lanes_ != 1;
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

  /// Calls `f` on each node `index` holds a reference to: its operands and, for a loop,
  /// what its body holds (src/ir/region.cpp).
  template <typename F> static void for_each_held(Index index, F&& f) {
    const Node& n = node(index);
    for (Index operand : n.operands)
      if (operand) f(operand);
    if (n.op != Op::Loop) return;
    const Region& body = region(uint32_t(n.literal));
    for (Index phi : body.phis) f(phi);
    for (Index update : body.updates)
      if (update) f(update);
    if (body.cond) f(body.cond);
    for (Index effect : body.effects) f(effect);
  }

  struct Outliving {
    std::unordered_set<Index> referenced;  ///< referred to from outside the kernel
    std::unordered_set<Index> kept;        ///< those and what they read, up to stored values
  };

  /// The nodes placed in this kernel that something still refers to once it has run: a
  /// reference from outside the kernel (an array, a pending node of another kernel) keeps
  /// a node, and a kept node that is not stored keeps what it reads. Stored nodes become
  /// Data and the group's side effects leave the pending list, dropping what they read.
  Outliving outliving_nodes() const {
    std::unordered_map<Index, uint32_t> references_here;
    for (Index index : placed_nodes_) for_each_held(index, [&](Index held) { ++references_here[held]; });
    for (Index effect : effects_) ++references_here[effect];
    std::unordered_set<Index> stored(kernel_.outputs.begin(), kernel_.outputs.end());
    Outliving outliving;
    std::vector<Index> stack;
    for (Index index : placed_nodes_) {
      const Node& n = node(index);
      if (n.ref_ext > 0 || n.ref_int > references_here[index]) {
        outliving.referenced.insert(index);
        stack.push_back(index);
      }
    }
    while (!stack.empty()) {
      Index index = stack.back();
      stack.pop_back();
      if (!placed(index) || !outliving.kept.insert(index).second || stored.count(index) || node(index).op == Op::Data)
        continue;
      for_each_held(index, [&](Index held) { stack.push_back(held); });
    }
    return outliving;
  }

  // ---- symbolic loops (src/ir/region.h) ----
  static bool is_result_of(Index result, Index loop) {
    const Node& n = node(result);
    return n.ref_ext + n.ref_int > 0 && n.op == Op::LoopResult && n.operands[0] == loop;
  }
  static Index phi_of(Index result) {
    const Node& n = node(result);
    return region(uint32_t(node(n.operands[0]).literal)).phis[n.literal];
  }

  /// The nodes outside the loop's body (and the bodies nested in it) that it reads.
  std::vector<Index> loop_inputs(Index loop) {
    uint32_t id = uint32_t(node(loop).literal);
    std::vector<Index> inputs, stack;
    std::unordered_set<Index> seen;
    auto push_region = [&](uint32_t r) {
      const Region& body = region(r);
      stack.insert(stack.end(), body.phis.begin(), body.phis.end());
      stack.push_back(body.cond);
      stack.insert(stack.end(), body.effects.begin(), body.effects.end());
      for (Index u : body.updates)
        if (u) stack.push_back(u);
    };
    push_region(id);
    while (!stack.empty()) {
      Index i = stack.back();
      stack.pop_back();
      if (!seen.insert(i).second) continue;
      const Node& n = node(i);
      if (!scope_within(n.scope, id) || n.op == Op::Data) {
        inputs.push_back(i);
        continue;
      }
      if (n.op == Op::Loop) push_region(uint32_t(n.literal));
      for (int k = 0; k < op_arity(n.op); ++k) stack.push_back(n.operands[k]);
    }
    std::sort(inputs.begin(), inputs.end(), [](Index a, Index b) { return node(a).serial < node(b).serial; });
    return inputs;
  }

  /// LoopBegin, a LoopPhi per carried state variable, the condition and LoopCond, the
  /// body's side effects, a LoopUpdate per carried variable, LoopEnd.
  void emit_loop(Index loop) {
    uint32_t id = uint32_t(node(loop).literal);
    uint32_t begin = push_structure(loop, Op::LoopBegin, VarType::Bool, {});
    const Region& body = region(id);
    kernel_.form.statements[begin].literal = body.once;
    std::vector<uint32_t> phi_positions(body.phis.size());
    for (size_t i = 0; i < body.phis.size(); ++i) {
      Index phi = body.phis[i];
      uint32_t init = node(node(phi).operands[0]).schedule_position;
      if (!body.updates[i]) {
        place_at(phi, init);  // not carried: the body reads the initial value
        continue;
      }
      phi_positions[i] = push_structure(phi, Op::LoopPhi, node(phi).type, {init});
      place_at(phi, phi_positions[i]);
    }
    visit(body.cond);
    for (Index effect : region(id).effects) visit(effect);
    for (size_t i = 0; i < region(id).phis.size(); ++i) {
      Index update = region(id).updates[i];
      if (!update) continue;
      uint32_t value = visit(update);
      push_structure(loop, Op::LoopUpdate, node(update).type, {phi_positions[i], value});
    }
    push_structure(loop, Op::LoopEnd, VarType::Bool, {begin});
    place_at(loop, begin);
    if (node(loop).scope == 0) top_level_loops_.push_back(loop);
  }

  /// A statement of the loop structure (no node of its own; `owner` for diagnostics).
  uint32_t push_structure(Index owner, Op op, VarType type, std::initializer_list<uint32_t> operands) {
    KernelStatement s{};
    s.op = op;
    s.type = s.operand_type = type;
    s.input_slot = kNoSlot;
    s.output_slot = kNoSlot;
    int k = 0;
    for (uint32_t position : operands) s.operands[k++] = position;
    uint32_t position = uint32_t(kernel_.form.statements.size());
    kernel_.form.statements.push_back(s);
    kernel_.statements.push_back(owner);
    return position;
  }

  /// Marks a node as placed at an existing statement (no statement of its own).
  void place_at(Index index, uint32_t position) {
    Node& n = node(index);
    if (n.schedule_pass != pass_) placed_nodes_.push_back(index);
    n.schedule_pass = pass_;
    n.schedule_position = position;
  }

  void push(Index index, const KernelStatement& s) {
    Node& n = node(index);
    placed_nodes_.push_back(index);
    n.schedule_pass = pass_;
    n.schedule_position = uint32_t(kernel_.form.statements.size());
    kernel_.form.statements.push_back(s);
    kernel_.statements.push_back(index);
  }

  ScheduledKernel kernel_;
  bool placed(Index index) const { return node(index).schedule_pass == pass_; }

  uint64_t pass_;
  size_t lanes_;
  std::vector<Index> top_level_loops_;
  std::vector<Index> placed_nodes_;  ///< every node placed in the kernel, once
  std::vector<Index> effects_;       ///< the group's side effects
};

}  // namespace

ScheduledKernel schedule_kernel(const KernelGroup& group, bool checks, uint32_t packet_width) {
  KernelBuilder builder(checks, packet_width, group.size);
  for (Index effect : group.effects) {
    builder.visit(effect);
    builder.note_effect(effect);
    // A counter's old values outlive the kernel when anything still uses them.
    const Node& n = node(effect);
    if (n.op == Op::ScatterInc && (n.ref_ext > 0 || n.ref_int > 1)) builder.mark_output(effect);
  }
  for (Index root : group.roots) builder.mark_output(root);
  return builder.finish();
}

}  // namespace kiln::detail
