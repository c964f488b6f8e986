// Deterministic IR printer: every pending node reachable from live arrays, renumbered in
// creation order, with labels; no pointers, no timings.
#include <kiln/runtime.h>

#include "ir/host_function.h"
#include "ir/node.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace kiln {

std::string ir_listing() {
  using namespace detail;
  State& s = state();
  StateLock lock(s.mutex);
  std::vector<Index> live;
  for (Index i = 1; i < s.nodes.size(); ++i)
    if (s.nodes[i].ref_ext + s.nodes[i].ref_int > 0) live.push_back(i);
  std::sort(live.begin(), live.end(), [&](Index a, Index b) { return s.nodes[a].serial < s.nodes[b].serial; });
  std::unordered_map<Index, size_t> number;
  std::ostringstream out;
  for (Index i : live) {
    const Node& n = s.nodes[i];
    size_t id = number.size() + 1;
    number[i] = id;
    out << "%" << id << " = " << type_name(n.type) << "[" << n.size << "] " << op_name(n.op);
    for (int k = 0; k < op_arity(n.op); ++k) out << (k ? ", %" : " %") << number[n.operands[k]];
    if (n.op == Op::Literal || n.op == Op::Param) out << " 0x" << std::hex << n.literal << std::dec;
    if (std::string host = describe_host_node(n.op, n.literal); !host.empty()) out << " " << host;
    if (n.dirty_size) out << " (pending writes)";
    auto note = s.notes.find(i);
    if (note != s.notes.end() && !note->second.label.empty()) out << "  # " << note->second.label;
    out << "\n";
  }
  return out.str();
}

}  // namespace kiln
