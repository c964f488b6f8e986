// The node table: creation with value numbering, reference counting and freeing.
#include "ir/node.h"

#include <kiln/errors.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace kiln::detail {

// Created when the library is loaded, before any user code can trace (nothing in Kiln
// traces during static initialization), and never destroyed: arrays may outlive main().
State* const global_state = new State();

namespace {
NodeKey key_of(const Node& n) {
  NodeKey key{};
  std::memset(&key, 0, sizeof(key));  // padding takes part in the hash
  key.op = n.op;
  key.type = n.type;
  for (int i = 0; i < 4; ++i) key.operands[i] = n.operands[i];
  key.literal = n.literal;
  key.size = n.size;
  return key;
}

/// Whether identical nodes of this op are merged. Literals and parameters are not merged
/// by value: if two equal literals shared a node (and so did the ops on them), a kernel's
/// structure would depend on whether two host values happen to be equal, and a changed
/// value would change the kernel's shape instead of one literal slot. Ops on the same
/// literal node still merge.
bool value_numbered(Op op) { return op_is_pure(op) && op != Op::Literal && op != Op::Param; }

/// Removes the node from the value-numbering table (it is about to change or go away).
void forget_value_number(Index index) {
  State& s = state();
  const Node& n = s.nodes[index];
  if (!value_numbered(n.op)) return;
  s.value_numbers.erase(key_of(n), index);
}

/// Frees one unreferenced node; operands whose last reference it held join the worklist.
void free_node(Index index) {
  State& s = state();
  forget_value_number(index);
  Node& n = s.nodes[index];
  Index operands[4];
  std::copy(n.operands, n.operands + 4, operands);
  if (n.labelled) s.notes.erase(index);
  if (n.op != Op::Data) s.pending_nodes--;
  uint32_t loop_region = n.op == Op::Loop ? uint32_t(n.literal) : 0;
  n = Node{};
  s.free_list.push_back(index);
  for (Index op : operands) {
    if (!op) continue;
    Node& o = s.nodes[op];
    if (o.ref_int == 0) throw InternalError("kiln: internal reference count underflow");
    if (--o.ref_int == 0 && o.ref_ext == 0) s.unreferenced.push_back(op);
  }
  if (loop_region) release_region(loop_region);
}

/// Frees the node if nothing references it, and then every node only it kept alive —
/// from a worklist, not by recursion: dependent chains of a million nodes are common.
/// A region released on the way calls back in (dec_ref_int); the outermost call drains.
void release_if_unused(Index index) {
  State& s = state();
  const Node& n = s.nodes[index];
  if (n.ref_ext != 0 || n.ref_int != 0) return;
  s.unreferenced.push_back(index);
  if (s.freeing) return;
  s.freeing = true;
  try {
    while (!s.unreferenced.empty()) {
      Index next = s.unreferenced.back();
      s.unreferenced.pop_back();
      free_node(next);
    }
  } catch (...) {
    s.unreferenced.clear();
    s.freeing = false;
    throw;
  }
  s.freeing = false;
}

/// Releases the internal references a node held on its operands.
void release_operands(const Index (&operands)[4]) {
  for (Index op : operands)
    if (op) dec_ref_int(op);
}

}  // namespace

std::optional<Device> placed_device(const Index* operands, int count, const char* what) {
  Index placed = 0;
  for (int i = 0; i < count; ++i) {
    if (!operands[i] || !node(operands[i]).placed) continue;
    Device device = node(operands[i]).device;
    if (!placed) {
      placed = operands[i];
    } else if (device != node(placed).device) {
      const char* first = device_name(node(placed).device);
      throw ValueError(std::string("kiln: ") + what + "(): the operands are on two devices, " + first + " and " +
                       device_name(device) + "; move one with x.to(\"" + first + "\") or x.to(\"" +
                       device_name(device) + "\")");
    }
  }
  if (!placed) return std::nullopt;
  return node(placed).device;
}

Index create_node(const Node& prototype) {
  State& s = state();
  uint32_t scope = scope_of_operands(prototype.operands, 4, op_name(prototype.op));
  // Placed where the operands that hold or derive from memory are; a node computed from
  // literals, parameters and lane indices alone is placed by its first operand's device.
  std::optional<Device> placed = placed_device(prototype.operands, 4, op_name(prototype.op));
  Device device = placed ? *placed : prototype.operands[0] ? node(prototype.operands[0]).device : prototype.device;
  if (s.creation_watch) s.creation_watch->creating(prototype);
  bool numbered = value_numbered(prototype.op);
  if (numbered) {
    if (Index existing = s.value_numbers.find(key_of(prototype))) {
      s.nodes[existing].ref_ext++;
      return existing;
    }
  }
  Index index;
  if (!s.free_list.empty()) {
    index = s.free_list.back();
    s.free_list.pop_back();
  } else {
    if (s.nodes.size() >= UINT32_MAX)
      throw InternalError("kiln: more than 2^32 live IR nodes; evaluate intermediate results");
    index = Index(s.nodes.size());
    s.nodes.emplace_back();
  }
  Node& n = s.nodes[index];
  n = prototype;
  n.ref_ext = 1;
  n.ref_int = 0;
  n.serial = s.next_serial++;
  n.scope = scope;
  n.device = device;
  n.placed = placed || n.op == Op::Data;
  if (n.op != Op::Data) s.pending_nodes++;
  for (Index op : n.operands)
    if (op) s.nodes[op].ref_int++;
  if (numbered) s.value_numbers.insert(key_of(n), index);
  return index;
}

void inc_ref_int(Index index) { node(index).ref_int++; }

void dec_ref_int(Index index) {
  Node& n = node(index);
  if (n.ref_int == 0) throw InternalError("kiln: internal reference count underflow");
  n.ref_int--;
  release_if_unused(index);
}

void collapse_to_data(Index index, std::shared_ptr<Buffer> buffer) {
  forget_value_number(index);
  Node& n = node(index);
  Index operands[4];
  std::copy(n.operands, n.operands + 4, operands);
  if (n.op != Op::Data) state().pending_nodes--;
  n.op = Op::Data;
  n.literal = 0;
  n.placed = true;
  std::fill(n.operands, n.operands + 4, 0);
  n.buffer = std::move(buffer);
  release_operands(operands);
}

void check_live(Index index, const char* what) {
  State& s = state();
  if (index == 0 || index >= s.nodes.size() || (s.nodes[index].ref_ext + s.nodes[index].ref_int) == 0)
    throw ValueError(std::string("kiln: ") + what +
                     "(): the array is empty (default-constructed) or was freed; assign it a value first");
}

void inc_ref(Index index) {
  if (!index) return;
  StateLock lock(state().mutex);
  node(index).ref_ext++;
}

void dec_ref(Index index) {
  if (!index) return;
  StateLock lock(state().mutex);
  Node& n = node(index);
  if (n.ref_ext == 0) throw InternalError("kiln: external reference count underflow");
  n.ref_ext--;
  release_if_unused(index);
}

}  // namespace kiln::detail

namespace kiln {
size_t live_nodes() {
  detail::State& s = detail::state();
  detail::StateLock lock(s.mutex);
  return s.nodes.size() - 1 - s.free_list.size();
}
}  // namespace kiln
