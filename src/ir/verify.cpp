// The IR verifier (see verify.h).
#include "ir/verify.h"

#include "ir/node.h"

#include <vector>

namespace kiln::detail {

std::string verify_ir() {
  State& s = state();
  StateLock lock(s.mutex);
  std::vector<uint32_t> int_refs(s.nodes.size(), 0);
  auto fail = [](Index i, const std::string& what) { return "node " + std::to_string(i) + ": " + what; };
  for (Index i = 1; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    if (n.ref_ext + n.ref_int == 0) continue;
    int arity = op_arity(n.op);
    for (int k = 0; k < 4; ++k) {
      Index op = n.operands[k];
      if (k >= arity) {
        if (op) return fail(i, "operand beyond the op's arity");
        continue;
      }
      if (!op || op >= s.nodes.size()) return fail(i, "missing operand");
      const Node& o = s.nodes[op];
      if (o.ref_ext + o.ref_int == 0) return fail(i, "operand was freed");
      if (o.serial >= n.serial) return fail(i, "operand created after its user");
      if (!scope_within(n.scope, o.scope)) return fail(i, "operand from a loop body the node is not in");
      bool memory = op_has_buffer_operand(n.op) && k == 0;
      if (memory && o.op != Op::Data) return fail(i, "memory operand is not evaluated");
      if (!memory && o.size != 1 && o.size != n.size) return fail(i, "operand size does not broadcast");
      int_refs[op]++;
    }
    if ((n.op == Op::Data) != bool(n.buffer)) return fail(i, "Data node without buffer (or the reverse)");
  }
  for (Index e : s.side_effects) int_refs[e]++;
  for (Index m : s.masks)
    if (m) int_refs[m]++;
  for (const auto& [id, r] : s.regions) {
    for (Index i : r.phis) int_refs[i]++;
    for (Index i : r.updates)
      if (i) int_refs[i]++;
    if (r.cond) int_refs[r.cond]++;
    for (Index i : r.effects) int_refs[i]++;
  }
  for (Index e : s.scheduled) int_refs[e]++;
  size_t pending = 0;
  for (Index i = 1; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    if (n.ref_ext + n.ref_int == 0) continue;
    pending += n.op != Op::Data;
    if (n.ref_int != int_refs[i])
      return fail(i, "internal reference count " + std::to_string(n.ref_int) + " but " + std::to_string(int_refs[i]) +
                         " users");
  }
  if (pending != s.pending_nodes)
    return "the pending node count is " + std::to_string(s.pending_nodes) + " but " + std::to_string(pending) +
           " live nodes are not Data";
  return {};
}

}  // namespace kiln::detail
