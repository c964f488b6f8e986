// Symbolic regions (see region.h): recording loop bodies, scopes and the mask stack.
#include "ir/region.h"

#include <kiln/errors.h>

#include "ir/node.h"

#include <algorithm>
#include <utility>

namespace kiln::detail {

Region& region(uint32_t id) {
  auto it = state().regions.find(id);
  if (it == state().regions.end()) throw InternalError("kiln: unknown loop region " + std::to_string(id));
  return it->second;
}

const Region* find_region(uint32_t id) {
  auto it = state().regions.find(id);
  return it == state().regions.end() ? nullptr : &it->second;
}

uint32_t current_region() {
  const auto& open = state().open_regions;
  return open.empty() ? 0 : open.back();
}

namespace {
std::string loop_title(const Region* r) {
  if (!r) return "a symbolic loop or call";
  return (r->name.empty() ? "a symbolic " + r->statement : "the symbolic " + r->statement + " '" + r->name + "'");
}
}  // namespace

uint32_t open_region(const std::string& statement, const std::string& name, size_t size, bool once) {
  State& s = state();
  uint32_t id = s.next_region++;
  Region r;
  r.parent = current_region();
  r.depth = r.parent ? region(r.parent).depth + 1 : 1;
  r.statement = statement;
  r.once = once;
  r.name = name;
  r.size = size;
  s.regions.emplace(id, std::move(r));
  s.open_regions.push_back(id);
  return id;
}

Index make_loop_phi(uint32_t id, Index init) {
  Node n;
  n.op = Op::LoopPhi;
  n.type = node(init).type;
  n.size = region(id).size;
  n.operands[0] = init;
  Index phi = create_node(n);
  node(phi).scope = id;
  region(id).phis.push_back(phi);
  inc_ref_int(phi);
  return phi;
}

Index make_loop_cond(uint32_t id, Index cond) {
  Region& r = region(id);
  if (node(cond).type != VarType::Bool || (node(cond).size != 1 && node(cond).size != r.size))
    throw InternalError("kiln: a loop condition must be a Bool array of the loop's lanes (checked by the statement)");
  Node n;
  n.op = Op::LoopCond;
  n.type = VarType::Bool;
  n.size = r.size;
  n.operands[0] = cond;
  Index active = create_node(n);
  node(active).scope = id;
  r.cond = active;
  inc_ref_int(active);
  return active;
}

namespace {
void pop_open(uint32_t id) {
  auto& open = state().open_regions;
  if (open.empty() || open.back() != id) throw InternalError("kiln: loop regions closed out of order");
  open.pop_back();
  region(id).open = false;
}
}  // namespace

std::vector<Index> close_region(uint32_t id, const std::vector<Index>& updates) {
  pop_open(id);
  Region& r = region(id);
  std::vector<Index> results(r.phis.size());
  for (size_t i = 0; i < r.phis.size(); ++i) {
    Index phi = r.phis[i], init = node(phi).operands[0], next = updates[i];
    bool unchanged = next == phi || next == init;
    r.updates.push_back(unchanged ? 0 : next);
    if (!unchanged) inc_ref_int(next);
  }
  // The loop runs where its state and the arrays it writes are (it has no operands).
  std::vector<Index> placing(r.targets);
  for (size_t i = 0; i < r.phis.size(); ++i)
    placing.push_back(r.updates[i] ? r.updates[i] : node(r.phis[i]).operands[0]);
  std::optional<Device> device = placed_device(placing.data(), int(placing.size()), "while_loop");
  Node n;
  n.op = Op::Loop;
  n.size = r.size;
  n.literal = id;
  n.device = device.value_or(default_device());
  Index loop = create_node(n);
  node(loop).scope = r.parent;
  node(loop).placed = device.has_value();
  for (size_t i = 0; i < r.phis.size(); ++i) {
    if (!r.updates[i]) {
      results[i] = node(r.phis[i]).operands[0];
      inc_ref(results[i]);
      continue;
    }
    Node result;
    result.op = Op::LoopResult;
    result.type = node(r.phis[i]).type;
    result.size = r.size;
    result.literal = i;
    result.operands[0] = loop;
    results[i] = create_node(result);
    region(id).results.push_back(results[i]);
  }
  Region& closed = region(id);
  if (!closed.effects.empty()) {
    // The loop is a side effect of the enclosing body (or pending at the top level); the
    // arrays it writes are dirty there.
    std::vector<Index>& effects = closed.parent ? region(closed.parent).effects : state().side_effects;
    effects.push_back(loop);
    inc_ref_int(loop);
    for (Index target : closed.targets) {
      node(target).dirty_size = closed.size;
      node(target).dirty_scope = closed.parent;
      if (closed.parent) region(closed.parent).targets.push_back(target);
    }
  }
  dec_ref(loop);  // the results and the effect list hold it (or nothing does: dead loop)
  return results;
}

void abandon_region(uint32_t id) {
  auto& open = state().open_regions;
  // Close anything opened inside it that an error left open as well.
  while (!open.empty() && open.back() != id) abandon_region(open.back());
  pop_open(id);
  release_region(id);
}

void release_region(uint32_t id) {
  auto it = state().regions.find(id);
  if (it == state().regions.end()) return;
  Region r = std::move(it->second);
  state().regions.erase(it);
  for (Index i : r.phis) dec_ref_int(i);
  for (Index i : r.updates)
    if (i) dec_ref_int(i);
  if (r.cond) dec_ref_int(r.cond);
  for (Index i : r.effects) dec_ref_int(i);
}

uint32_t scope_of_operands(const Index* operands, int count, const char* what) {
  uint32_t scope = 0, depth = 0;
  for (int k = 0; k < count; ++k) {
    if (!operands[k]) continue;
    uint32_t s = node(operands[k]).scope;
    if (!s || s == scope) continue;
    const Region* r = find_region(s);
    if (!r || !r->open)
      throw ValueError(std::string("kiln: ") + what + "(): uses a value computed inside the body of " + loop_title(r) +
                       " outside of it; such values only exist inside the kernel's loop or call — "
                       "return it from the body (as part of the loop state) or function instead");
    if (r->depth > depth) {
      scope = s;
      depth = r->depth;
    }
  }
  return scope;
}

bool scope_within(uint32_t inner, uint32_t outer) {
  if (outer == 0) return true;
  while (inner && inner != outer) {
    const Region* r = find_region(inner);
    inner = r ? r->parent : 0;
  }
  return inner == outer;
}

bool scope_open(uint32_t id) {
  for (const Region* r = find_region(id); r; r = find_region(r->parent))
    if (r->open) return true;
  return false;
}

TopLevelScope::TopLevelScope()
    : open_regions_(std::move(state().open_regions)),
      creation_watch_(std::exchange(state().creation_watch, nullptr)),
      substitutions_(std::exchange(state().substitutions, nullptr)) {
  state().open_regions.clear();
  state().masks.push_back(0);  // all lanes (the masks below stay referenced where they are)
  state().input_watches.push_back(nullptr);
}

TopLevelScope::~TopLevelScope() {
  state().input_watches.pop_back();
  state().masks.pop_back();
  state().open_regions = std::move(open_regions_);
  state().creation_watch = creation_watch_;
  state().substitutions = substitutions_;
}

void check_evaluable(Index index, const char* what) {
  const Node& n = node(index);
  if (n.dirty_size && n.dirty_scope)
    throw ValueError(std::string("kiln: ") + what + "(): the array is written inside the body of " +
                     loop_title(find_region(n.dirty_scope)) +
                     ", which is still being recorded; read it after the loop");
  uint32_t s = n.scope;
  if (!s) return;
  const Region* r = find_region(s);
  if (r && r->open)
    throw ValueError(
        std::string("kiln: ") + what + "(): cannot evaluate a value of " + loop_title(r) +
        " inside its body: it is recorded once into the kernel and has no value yet. Use "
        "print_async() to see per-lane values, a Recorder to keep them, or run the statement in evaluated mode");
  throw ValueError(std::string("kiln: ") + what + "(): uses a value computed inside the body of " + loop_title(r) +
                   " outside of it; return it from the body (as part of the loop state) or function instead");
}

std::string statement_title(const std::string& statement, const std::string& name) {
  return name.empty() ? statement + "()" : statement + "('" + name + "')";
}

namespace {
[[noreturn]] void buffer_input_error(const std::string& statement, const std::string& title, bool loop_state,
                                     size_t position, VarType type, const char* use) {
  std::string value =
      std::string(loop_state ? "state[" : "args[") + std::to_string(position) + "] (a " + type_name(type) + " array)";
  if (loop_state)
    throw ValueError("kiln: " + title + ": the loop " + use + " " + value +
                     ", but loop state is per lane: a symbolic loop carries it lane by lane and an evaluated one "
                     "compacts it to the lanes still running, so it cannot be indexed as a buffer. Use the array "
                     "from the enclosing scope instead of passing it as state (gathers then read all of it, and "
                     "scatters into it are kept)");
  throw ValueError("kiln: " + title + ": a function " + use + " " + value + ", but arguments are per lane: a " +
                   "symbolic " + statement +
                   " selects them lane by lane and an evaluated one gathers the lanes "
                   "that take each function, so they cannot be indexed as buffers. Use the array from the "
                   "enclosing scope instead of passing it as an argument (gathers then read all of it, and "
                   "scatters into it are kept)");
}
}  // namespace

void check_buffer_operand(Index buffer, const char* use) {
  const State& s = state();
  const Node& n = node(buffer);
  if (n.op == Op::LoopPhi) {
    const Region& r = region(n.scope);
    size_t position = size_t(std::find(r.phis.begin(), r.phis.end(), buffer) - r.phis.begin());
    buffer_input_error(r.statement, statement_title(r.statement, r.name), !r.once, position, n.type, use);
  }
  for (auto w = s.input_watches.rbegin(); w != s.input_watches.rend() && *w; ++w) {
    const InputWatch* watch = *w;
    auto it = std::find(watch->inputs.begin(), watch->inputs.end(), buffer);
    if (it == watch->inputs.end()) continue;
    buffer_input_error(watch->statement, statement_title(watch->statement, watch->name), watch->loop_state,
                       size_t(it - watch->inputs.begin()), n.type, use);
  }
}

Index current_mask() {
  const auto& masks = state().masks;
  return masks.empty() ? 0 : masks.back();
}

void push_mask(Index mask) {
  state().masks.push_back(mask);
  if (mask) inc_ref_int(mask);
}

void pop_mask() {
  auto& masks = state().masks;
  if (masks.empty()) throw InternalError("kiln: mask stack underflow");
  Index mask = masks.back();
  masks.pop_back();
  if (mask) dec_ref_int(mask);
}

Index apply_current_mask(Index mask) {
  Index outer = current_mask();
  if (!outer) {
    inc_ref(mask);
    return mask;
  }
  return trace(Op::And, mask, outer);
}

}  // namespace kiln::detail
