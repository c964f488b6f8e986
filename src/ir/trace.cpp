// Recording operations: type and size checks, broadcasting, literal folding, and the
// creation of leaves (literals, copies, wrapped memory), side effects (scatters) and host
// calls.
#include <kiln/detail/trace_api.h>
#include <kiln/errors.h>

#include "ir/host_function.h"
#include "ir/node.h"
#include "ir/op_info.h"
#include "ir/read_barrier.h"
#include "ir/scalar_ops.h"
#include "memory/device_memory.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kiln::detail {

namespace {
/// A literal whose bits are zero (0, +0.0, false).
bool is_zero_literal(const Node& n) { return n.op == Op::Literal && n.literal == 0; }

std::string describe(Index index) {
  const Node& n = node(index);
  return std::string(type_name(n.type)) + "[" + std::to_string(n.size) + "]";
}

[[noreturn]] void type_error(Op op, const std::string& detail) {
  throw TypeError(std::string("kiln: ") + op_name(op) + "(): " + detail);
}

/// Size of the result of `call` ("gather()") on operands of the given sizes (1 broadcasts).
size_t broadcast_size(const std::string& call, const Index* operands, int count) {
  size_t size = 1;
  for (int i = 0; i < count; ++i) {
    size_t s = node(operands[i]).size;
    if (s == size || s == 1) continue;
    if (size != 1) {
      std::string sizes;
      for (int j = 0; j < count; ++j) sizes += (j ? " and " : "") + std::to_string(node(operands[j]).size);
      throw SizeError("kiln: " + call + ": incompatible array sizes " + sizes +
                      "; only arrays of size 1 broadcast, so make the sizes equal");
    }
    size = s;
  }
  return size;
}

/// Evaluates pending scatters into any dirty operand, so that reads see them (scatters
/// recorded in a loop body run in the same kernel as the reads, in program order).
void flush_dirty(const Index* operands, int count) {
  for (int i = 0; i < count; ++i)
    if (node(operands[i]).dirty_size && !node(operands[i]).dirty_scope) {
      evaluate_for_read(nullptr, 0);
      return;
    }
}

/// Result type of `op` by its type rule (op_info.h), after checking its operand types.
VarType result_type(Op op, const Index* operands, VarType cast_type) {
  VarType a = node(operands[0]).type;
  auto require_same = [&](int first, int last) {
    for (int i = first + 1; i <= last; ++i)
      if (node(operands[i]).type != node(operands[first]).type)
        type_error(op, "operands have different types (" + describe(operands[first]) + " and " + describe(operands[i]) +
                           "); convert one with cast<T>()");
  };
  /// The operands' one type, which must be one the op is `defined_for`.
  auto common_type = [&](bool defined_for) {
    require_same(0, op_arity(op) - 1);
    if (!defined_for) type_error(op, std::string("not defined for ") + type_name(a) + " arrays");
    return a;
  };
  switch (op_type_rule(op)) {
    case TypeRule::Numeric: return common_type(a != VarType::Bool);
    case TypeRule::Bitwise: return common_type(!is_float(a));
    case TypeRule::Integer: return common_type(is_int(a));
    case TypeRule::Float: return common_type(is_float(a));
    case TypeRule::Equality: common_type(true); return VarType::Bool;
    case TypeRule::Ordering:
      require_same(0, 1);
      if (a == VarType::Bool) type_error(op, "Bool values can only be compared with == and !=");
      return VarType::Bool;
    case TypeRule::Cast: return cast_type;
    case TypeRule::Bitcast:
      if (type_size(a) != type_size(cast_type) || a == VarType::Bool || cast_type == VarType::Bool)
        type_error(op, std::string("cannot reinterpret ") + type_name(a) + " as " + type_name(cast_type) +
                           "; the widths differ");
      return cast_type;
    case TypeRule::Select:
      if (a != VarType::Bool) type_error(op, "the mask must be Bool, not " + describe(operands[0]));
      require_same(1, 2);
      return node(operands[1]).type;
    case TypeRule::Own: break;
  }
  throw InternalError(std::string("kiln: ") + op_name(op) + " is typed where it is created, not by its operands");
}

void check_index_operands(const char* what, Index index, Index mask) {
  if (node(index).type != VarType::UInt32)
    throw TypeError(std::string("kiln: ") + what + "(): the index must be UInt32, not " + describe(index) +
                    "; convert it with cast<uint32_t>()");
  if (node(mask).type != VarType::Bool)
    throw TypeError(std::string("kiln: ") + what + "(): the mask must be Bool, not " + describe(mask));
}

/// A literal folded from labelled literals is labelled with the names it was computed
/// from ("to_world.3, fov"; the note says it is derived), so compilation reasons can name it.
void label_folded(Index folded, const Index* operands, int arity) {
  std::vector<std::string> sources;
  for (int i = 0; i < arity; ++i) {
    if (!node(operands[i]).labelled) continue;
    const NodeNote& note = state().notes.at(operands[i]);
    std::string names = note.label;
    for (size_t start = 0, end; start < names.size(); start = end + 2) {
      end = note.derived ? std::min(names.find(", ", start), names.size()) : names.size();
      std::string name = names.substr(start, end - start);
      if (std::find(sources.begin(), sources.end(), name) == sources.end()) sources.push_back(name);
    }
  }
  if (sources.empty()) return;
  NodeNote& note = state().notes[folded];
  for (size_t i = 0; i < sources.size(); ++i) note.label += (i ? ", " : "") + sources[i];
  note.derived = true;
  node(folded).labelled = true;
}

/// A Data node of `count` copies of a literal's bits, on `device`.
Index make_filled(const Node& literal, Device device) {
  size_t count = literal.size, width = type_size(literal.type);
  StagedBuffer staged(count * width, device);
  auto* bytes = static_cast<uint8_t*>(staged.data());
  if (literal.literal == 0) {
    std::memset(bytes, 0, count * width);
  } else {
    for (size_t i = 0; i < count; ++i)
      std::memcpy(bytes + i * width, &literal.literal, width);  // the low bytes: little endian
  }
  return make_data(literal.type, count, staged.finish());
}

/// An evaluated copy of a Data node, on its device.
Index make_duplicate(Index index) {
  VarType type = node(index).type;
  size_t count = node(index).size;
  Device device = node(index).device;
  Index copy = make_empty(type, count, device);
  if (count)
    device_memory(device).within(node(copy).buffer->data(), node(index).buffer->data(), count * type_size(type));
  return copy;
}

/// Materializes `target` as a Data node that only this array uses, so that a scatter may
/// write it in place (copy on write). While a node is dirty, its internal references come
/// only from the pending scatters into it (any other use flushes them first).
Index writable_target(Index target, size_t scatter_size, std::optional<Device> device) {
  // A constant (zeros for a gradient or a histogram) is filled here rather than by a kernel,
  // whose grouping with pending work of the same size would make the kernels' shapes depend
  // on whether the sizes happen to match.
  if (node(target).op == Op::Literal) return make_filled(node(target), device.value_or(node(target).device));
  if (node(target).op != Op::Data) evaluate_for_read(&target, 1);
  const Node& n = node(target);
  bool shared = n.dirty_size ? n.ref_ext > 1 : n.ref_ext + n.ref_int > 1 || n.buffer.use_count() > 1;
  if (n.dirty_size && n.dirty_scope) {
    // Written earlier in the loop body being recorded: copying now would lose those writes.
    if (shared)
      throw ValueError(
          "kiln: scatter(): the target is shared with another array and was already written in "
          "this symbolic loop body; copy it before the loop");
    return target;
  }
  // Pending scatters of another size would land in another kernel: keep program order.
  if ((shared || n.dirty_size != scatter_size) && n.dirty_size) evaluate_for_read(nullptr, 0);
  if (!shared) return target;
  return make_duplicate(target);
}

/// Replaces `target` by its writable version and records the scatter node on it.
Index record_scatter(Index& target, Node prototype) {
  // A constant target is filled where the values, indices or mask are.
  std::optional<Device> device = placed_device(prototype.operands + 1, 3, op_name(prototype.op));
  target = writable_target(target, prototype.size, device);  // the caller releases the old one
  prototype.operands[0] = target;
  prototype.type = node(target).type;
  Index index = create_node(prototype);
  uint32_t body = current_region();
  if (body) {  // runs once per iteration, inside the loop's kernel
    region(body).effects.push_back(index);
    region(body).targets.push_back(target);
  } else {
    state().side_effects.push_back(index);
  }
  inc_ref_int(index);
  node(target).dirty_size = prototype.size;
  node(target).dirty_scope = body;
  return index;
}

/// Arrays are capped at 2^40 elements, so that no byte count overflows.
void check_array_size(size_t count, const char* op) {
  if (count > (size_t(1) << 40))
    throw SizeError("kiln: " + std::string(op) + "(): " + std::to_string(count) +
                    " elements is more than the supported 2^40; split the work into smaller arrays");
}

Index make_scalar(Op op, VarType type, uint64_t bits, size_t size, std::source_location where,
                  Device device = default_device()) {
  StateLock lock(state().mutex);
  check_array_size(size, op == Op::Param ? "opaque" : "full");
  Node n;
  n.op = op;
  n.type = type;
  n.device = device;
  n.literal = type == VarType::Bool ? (bits & 1) : bits;
  n.size = size;
  n.created = where;
  return create_node(n);
}
}  // namespace

Index make_literal(VarType type, uint64_t bits, size_t size, std::source_location where) {
  return make_scalar(Op::Literal, type, bits, size, where);
}

Index make_param(VarType type, uint64_t bits, size_t size, std::source_location where) {
  return make_scalar(Op::Param, type, bits, size, where);
}

Index make_opaque(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "make_opaque");
  const Node& n = node(index);
  if (n.op == Op::Literal) return make_scalar(Op::Param, n.type, n.literal, n.size, n.created, n.device);
  if (n.op != Op::Data || n.dirty_size) evaluate_for_read(&index, 1);
  inc_ref(index);
  return index;
}

Index make_data(VarType type, size_t count, std::shared_ptr<Buffer> buffer) {
  Node n;
  n.op = Op::Data;
  n.type = type;
  n.size = count;
  n.device = buffer->device();
  n.buffer = std::move(buffer);
  return create_node(n);
}

Index make_empty(VarType type, size_t count, Device device) {
  StateLock lock(state().mutex);
  check_array_size(count, "empty");
  return make_data(type, count, Buffer::allocate(count * type_size(type), device));
}

Index make_copy(VarType type, const void* data, size_t count, Device device) {
  StateLock lock(state().mutex);
  Index index = make_empty(type, count, device);
  node(index).buffer->from_host(data, count * type_size(type));
  return index;
}

Index make_wrapped(VarType type, void* data, size_t count, std::shared_ptr<void> owner, Device device) {
  StateLock lock(state().mutex);
  if (!data && count) throw SizeError("kiln: wrap(): null pointer for " + std::to_string(count) + " elements");
  return make_data(type, count, Buffer::wrap(data, count * type_size(type), std::move(owner), device));
}

Index make_on_device(Index index, Device device) {
  StateLock lock(state().mutex);
  check_live(index, "to");
  const Node& n = node(index);
  if (n.device == device) {
    inc_ref(index);
    return index;
  }
  if (n.op == Op::Literal || n.op == Op::Param) return make_scalar(n.op, n.type, n.literal, n.size, n.created, device);
  if (n.op != Op::Data || n.dirty_size) evaluate_for_read(&index, 1);
  VarType type = node(index).type;
  size_t count = node(index).size;
  std::shared_ptr<Buffer> source = node(index).buffer;
  if (device == Device::CPU) {  // straight into host memory
    Index copy = make_empty(type, count, device);
    source->to_host(node(copy).buffer->data(), count * type_size(type));
    return copy;
  }
  HostView host(*source);
  return make_copy(type, host.data(), count, device);
}

Index make_prefix(Index index, size_t count) {
  StateLock lock(state().mutex);
  check_live(index, "make_prefix");
  if (node(index).op != Op::Data || node(index).dirty_size) evaluate_for_read(&index, 1);
  const Node& source = node(index);
  if (count > source.size)
    throw SizeError("kiln: make_prefix(): " + std::to_string(count) + " elements of an array of " +
                    std::to_string(source.size));
  std::shared_ptr<Buffer> owner = source.buffer;
  return make_wrapped(source.type, owner->data(), count, owner, source.device);
}

Index make_counter(size_t size) {
  // One lane is lane 0: a literal, which broadcasts into wider kernels (a one-lane Counter
  // there would read the wider kernel's lane index).
  if (size == 1) return make_literal(VarType::UInt32, 0, 1);
  StateLock lock(state().mutex);
  if (size > UINT32_MAX)
    throw SizeError("kiln: arange(): " + std::to_string(size) + " lanes exceed the UInt32 lane index; split the work");
  Node n;
  n.op = Op::Counter;
  n.type = VarType::UInt32;
  n.size = size;
  n.device = default_device();
  return create_node(n);
}

Index trace(Op op, Index a, Index b, Index c, VarType type) {
  StateLock lock(state().mutex);
  if (const auto* substitutions = state().substitutions) {
    Index* replaceable[3] = {&a, &b, &c};
    for (int i = op == Op::Gather ? 1 : 0; i < 3; ++i) {  // a gather's source stays
      auto it = substitutions->find(*replaceable[i]);
      if (it != substitutions->end()) *replaceable[i] = it->second;
    }
  }
  Index operands[4] = {a, b, c, 0};
  int arity = op_arity(op);
  if (op == Op::Gather) {
    for (int i = 0; i < 3; ++i) check_live(operands[i], "gather");
    check_index_operands("gather", b, c);
    check_buffer_operand(a, "gathers from");
    flush_dirty(operands, 3);
    if (node(a).op != Op::Data) evaluate_for_read(&a, 1);
    Node n;
    n.op = Op::Gather;
    n.type = node(a).type;
    Index sized[3] = {b, c, current_mask()};  // inside a loop or branch: its lanes too
    n.size = broadcast_size("gather()", sized, sized[2] ? 3 : 2);
    Ref mask(apply_current_mask(c));  // inactive lanes of loops and branches read nothing
    n.operands[0] = a;
    n.operands[1] = b;
    n.operands[2] = mask.get();
    return create_node(n);
  }
  if (!op_is_pure(op) || arity == 0)
    throw InternalError(std::string("kiln: trace(): ") + op_name(op) + " cannot be traced directly");
  for (int i = 0; i < arity; ++i) check_live(operands[i], op_name(op));
  flush_dirty(operands, arity);
  Node n;
  n.op = op;
  n.type = result_type(op, operands, type);
  n.size = broadcast_size(std::string(op_name(op)) + "()", operands, arity);
  for (int i = 0; i < arity; ++i) n.operands[i] = operands[i];

  bool all_literal = true;
  for (int i = 0; i < arity; ++i) all_literal &= node(operands[i]).op == Op::Literal;
  if (all_literal && is_scalar_evaluable(op)) {
    uint64_t lanes[3] = {0, 0, 0};
    for (int i = 0; i < arity; ++i) lanes[i] = node(operands[i]).literal;
    VarType in = node(operands[op == Op::Select ? 1 : 0]).type;
    uint64_t value = eval_scalar(op, n.type, in, lanes[0], lanes[1], lanes[2]);
    Index folded = make_scalar(Op::Literal, n.type, value, n.size, node(operands[0]).created, node(operands[0]).device);
    label_folded(folded, operands, arity);
    return folded;
  }
  if (op == Op::Cast && n.type == node(a).type) {
    node(a).ref_ext++;
    return a;
  }
  return create_node(n);
}

void trace_scatter(ReduceOp reduce, Index& target, Index value, Index index, Index mask) {
  StateLock lock(state().mutex);
  const char* what = reduce == ReduceOp::None ? "scatter" : "scatter_reduce";
  for (Index i : {target, value, index, mask}) check_live(i, what);
  check_index_operands(what, index, mask);
  if (node(value).type != node(target).type)
    throw TypeError(std::string("kiln: ") + what + "(): the value (" + describe(value) + ") and the target (" +
                    describe(target) + ") have different types");
  if (reduce != ReduceOp::None && node(target).type == VarType::Bool)
    throw TypeError(std::string("kiln: ") + what + "(): reductions are not defined for Bool");
  if ((reduce == ReduceOp::And || reduce == ReduceOp::Or) && !is_int(node(target).type))
    throw TypeError(std::string("kiln: ") + what + "(" + reduce_op_name(reduce) +
                    "): bitwise reductions need integer arrays (Int32, UInt32, Int64, UInt64), got " +
                    describe(target));
  check_buffer_operand(target, "scatters into");
  // Adding zeros known while tracing changes nothing (the values of a render traced for its
  // derivatives alone): no kernel does it.
  if (reduce == ReduceOp::Add && is_zero_literal(node(value))) return;
  Index operands[4] = {value, index, mask, current_mask()};
  flush_dirty(operands, 3);
  Node n;
  n.op = Op::Scatter;
  // Once per lane of a loop or branch.
  n.size = broadcast_size(std::string(what) + "()", operands, operands[3] ? 4 : 3);
  n.literal = uint64_t(reduce);
  Ref active(apply_current_mask(mask));  // only the lanes of the enclosing loop or branch
  n.operands[1] = value;
  n.operands[2] = index;
  n.operands[3] = active.get();
  dec_ref(record_scatter(target, n));  // only the pending list holds it
}

Index trace_scatter_inc(Index& target, Index index, Index mask) {
  StateLock lock(state().mutex);
  for (Index i : {target, index, mask}) check_live(i, "scatter_inc");
  check_index_operands("scatter_inc", index, mask);
  if (node(target).type != VarType::UInt32)
    throw TypeError("kiln: scatter_inc(): the target must be UInt32, not " + describe(target));
  check_buffer_operand(target, "scatters into");
  Index operands[3] = {index, mask, current_mask()};
  flush_dirty(operands, 2);
  Node n;
  n.op = Op::ScatterInc;
  n.size = broadcast_size("scatter_inc()", operands, operands[2] ? 3 : 2);
  Ref active(apply_current_mask(mask));
  n.operands[1] = index;
  n.operands[2] = active.get();
  return record_scatter(target, n);
}

std::vector<Index> trace_host_call(uint64_t id, Index fn, Index context, const std::vector<Index>& inputs,
                                   Index active) {
  StateLock lock(state().mutex);
  const HostSignature& signature = host_signature(id);
  std::string call = "host_call('" + signature.name + "')";
  if (inputs.size() != signature.inputs.size())
    throw TypeError("kiln: " + call + ": " + std::to_string(inputs.size()) +
                    " input arrays given, but the function takes " + std::to_string(signature.inputs.size()) + " " +
                    type_list(signature.inputs));
  for (size_t k = 0; k < inputs.size(); ++k) {
    check_live(inputs[k], "host_call");
    if (node(inputs[k]).type != signature.inputs[k])
      throw TypeError("kiln: " + call + ": input " + std::to_string(k) + " is " + describe(inputs[k]) +
                      ", but the function takes " + type_name(signature.inputs[k]) + " there " +
                      type_list(signature.inputs) + "; convert it with cast<T>()");
  }
  check_live(active, "host_call");
  if (node(active).type != VarType::Bool)
    throw TypeError("kiln: " + call + ": the mask must be Bool, not " + describe(active));
  std::vector<Index> sized = inputs;
  sized.push_back(active);
  if (current_mask()) sized.push_back(current_mask());  // inside a loop or branch: its lanes too
  size_t size = broadcast_size(call, sized.data(), int(sized.size()));
  flush_dirty(sized.data(), int(sized.size()));

  inc_ref(fn);
  Ref chain(fn);  // the argument list: HostArg cells, the first one on `fn`
  for (Index input : inputs) {
    Node cell;
    cell.op = Op::HostArg;
    cell.type = node(input).type;
    cell.size = node(chain.get()).size == 1 ? node(input).size : node(chain.get()).size;  // 1 broadcasts (to 0 too)
    cell.operands[0] = chain.get();
    cell.operands[1] = input;
    Index next = create_node(cell);
    chain = Ref(next);
  }
  Ref mask(apply_current_mask(active));  // inactive lanes of loops and branches call nothing
  Node n;
  n.op = Op::HostCall;
  n.type = VarType::Bool;
  n.size = size;
  n.literal = id;
  n.operands[0] = fn;
  n.operands[1] = context;
  n.operands[2] = mask.get();
  n.operands[3] = chain.get();
  Ref host_call(create_node(n));
  std::vector<Index> results;
  for (size_t k = 0; k < signature.outputs.size(); ++k) {
    Node result;
    result.op = Op::HostResult;
    result.type = signature.outputs[k];
    result.size = size;
    result.literal = k;
    result.operands[0] = host_call.get();
    results.push_back(create_node(result));
  }
  return results;
}

VarType node_type(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "type");
  return node(index).type;
}

size_t node_size(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "size");
  return node(index).size;
}

bool node_is_literal(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "is_literal");
  return node(index).op == Op::Literal;
}

bool node_is_zero(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "is_zero");
  return is_zero_literal(node(index));
}

Device node_device(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "device");
  return node(index).device;
}

void set_label(Index index, const std::string& label, std::source_location where) {
  set_label(index, label,
            where.line() ? std::string(where.file_name()) + ":" + std::to_string(where.line()) : std::string());
}

void set_label(Index index, const std::string& label, const std::string& where) {
  StateLock lock(state().mutex);
  check_live(index, "set_label");
  NodeNote& note = state().notes[index];
  node(index).labelled = true;
  note.label = label;
  note.derived = false;
  note.where = where;
}

std::string label(Index index) {
  StateLock lock(state().mutex);
  auto it = state().notes.find(index);
  return it == state().notes.end() ? std::string() : it->second.label;
}

}  // namespace kiln::detail
