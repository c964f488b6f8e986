// graphviz(): the pending graph behind some arrays as Graphviz DOT text (one node per IR
// node with its op, type, size and label; edges from operands to users), for looking at
// what a kernel will contain before it is evaluated.
#include <kiln/detail/trace_api.h>

#include "ir/host_function.h"
#include "ir/node.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace kiln::detail {
namespace {

/// Escapes `text` for a double-quoted DOT string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string graphviz(const Index* indices, size_t count) {
  StateLock lock(state().mutex);
  std::vector<Index> stack, reached;
  std::unordered_set<Index> seen;
  for (size_t i = 0; i < count; ++i) {
    check_live(indices[i], "graphviz");
    stack.push_back(indices[i]);
  }
  while (!stack.empty()) {
    Index index = stack.back();
    stack.pop_back();
    if (!seen.insert(index).second) continue;
    reached.push_back(index);
    const Node& n = node(index);
    for (int k = 0; k < op_arity(n.op); ++k) stack.push_back(n.operands[k]);
  }
  std::sort(reached.begin(), reached.end(), [](Index a, Index b) { return node(a).serial < node(b).serial; });

  std::ostringstream out;
  out << "digraph kiln {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (Index index : reached) {
    const Node& n = node(index);
    std::string text = std::string(op_name(n.op)) + " " + type_name(n.type) + "[" + std::to_string(n.size) + "]";
    if (n.op == Op::Literal || n.op == Op::Param) {
      std::ostringstream bits;
      bits << " 0x" << std::hex << n.literal;
      text += bits.str();
    }
    if (std::string host = describe_host_node(n.op, n.literal); !host.empty()) text += " " + host;
    if (n.labelled) text += "\\n" + state().notes.at(index).label;
    const char* style = n.op == Op::Data          ? ", style=filled, fillcolor=lightgray"
                        : op_is_side_effect(n.op) ? ", style=filled, fillcolor=lightpink"
                                                  : "";
    out << "  n" << n.serial << " [label=" << quoted(text) << style << "];\n";
    for (int k = 0; k < op_arity(n.op); ++k) out << "  n" << node(n.operands[k]).serial << " -> n" << n.serial << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace kiln::detail
