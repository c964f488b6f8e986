// The AD graph's bookkeeping: nodes and edges with reference counts, gradient storage and
// the per-thread recording and isolation scopes.
#include "ad/graph.h"

#include <kiln/array.h>
#include <kiln/errors.h>

#include "ir/node.h"
#include "ir/op_info.h"

#include <bit>
#include <cmath>
#include <string>

namespace kiln::detail::ad {

Graph& graph() {
  static Graph* instance = new Graph();  // never destroyed: arrays may outlive statics
  return *instance;
}

namespace {
thread_local std::vector<bool> recording_stack;
thread_local std::vector<Isolation> isolations;

/// Inside a symbolic loop or call (a derivative statement's body) no horizontal sum can
/// run, so the gradient of a one-lane value used on many lanes stays lane by lane there.
bool inside_region() {
  StateLock lock(state().mutex);
  return current_region() != 0;
}

/// An evaluated buffer that scatters recorded inside the open symbolic statement write.
bool is_scatter_buffer(Index index) {
  StateLock lock(state().mutex);
  const detail::Node& n = node(index);
  return current_region() != 0 && n.op == Op::Data && n.dirty_size != 0;
}

/// Detaches edge `e` from both ends; returns its source.
AdIndex unlink_edge(uint32_t e) {
  Graph& g = graph();
  Edge& edge = g.edges[e];
  AdIndex source = edge.source, target = edge.target;
  edge = Edge();
  g.free_edges.push_back(e);
  --g.live_edges;
  Node& s = g.nodes[source];
  std::erase(s.out_edges, e);
  if (s.hub)
    for (AdIndex& out : s.hub->outputs)
      if (out == target) out = 0;
  --s.refs_int;
  return source;
}

/// Frees `index` when nothing refers to it, and then whatever that releases (a worklist,
/// not recursion: chains of a million nodes are common).
void release_unused(AdIndex index) {
  Graph& g = graph();
  std::vector<AdIndex> work{index};
  while (!work.empty()) {
    AdIndex i = work.back();
    work.pop_back();
    Node& n = g.nodes[i];
    if (!n.live || n.refs_ext != 0 || n.refs_int != 0) continue;
    std::vector<uint32_t> in = std::move(n.in_edges);
    n = Node();  // drops the gradient and the hub
    g.free_nodes.push_back(i);
    --g.live_nodes;
    for (uint32_t e : in) work.push_back(unlink_edge(e));
  }
}

/// Adds a gradient of `contribution`'s width to the pending sums of a broadcast node (one
/// per width, summed over the lanes by settle()).
void add_wide(Node& n, Handle contribution) {
  size_t size = node_size(contribution.index());
  for (Handle& pending : n.wide)
    if (node_size(pending.index()) == size) {
      pending = Handle::steal(trace(Op::Add, pending.index(), contribution.index()));
      return;
    }
  n.wide.push_back(std::move(contribution));
}

}  // namespace

AdIndex new_node(VarType type, size_t size) {
  Graph& g = graph();
  AdIndex index;
  if (!g.free_nodes.empty()) {
    index = g.free_nodes.back();
    g.free_nodes.pop_back();
  } else {
    index = AdIndex(g.nodes.size());
    g.nodes.emplace_back();
  }
  Node& n = g.nodes[index];
  n.refs_ext = 1;
  n.type = type;
  n.size = size;
  n.serial = g.next_serial++;
  n.live = true;
  ++g.live_nodes;
  return index;
}

void add_edge(AdIndex source, AdIndex target, EdgeKind kind, Handle weight,
              std::shared_ptr<const SpecialEdge> special) {
  Graph& g = graph();
  uint32_t e;
  if (!g.free_edges.empty()) {
    e = g.free_edges.back();
    g.free_edges.pop_back();
  } else {
    e = uint32_t(g.edges.size());
    g.edges.emplace_back();
  }
  g.edges[e] = Edge{source, target, kind, std::move(weight), std::move(special)};
  g.nodes[source].out_edges.push_back(e);
  g.nodes[source].consumed_out = false;  // new uses after a backward() are traversable
  ++g.nodes[source].refs_int;
  g.nodes[target].in_edges.push_back(e);
  ++g.live_edges;
}

void free_in_edges(AdIndex index) {
  Graph& g = graph();
  std::vector<uint32_t> in = std::move(g.nodes[index].in_edges);
  g.nodes[index].in_edges.clear();
  for (uint32_t e : in) {
    AdIndex source = unlink_edge(e);
    g.nodes[source].consumed_out = true;
    release_unused(source);
  }
}

void accumulate(AdIndex index, Handle contribution) {
  if (!contribution) return;
  Node& n = graph().nodes[index];
  if (node_type(contribution.index()) != n.type)
    contribution = Handle::steal(trace(Op::Cast, contribution.index(), 0, 0, n.type));
  if (!isolations.empty() && isolations.back().collect && n.serial < isolations.back().boundary) {
    if (is_scatter_buffer(contribution.index())) {
      isolations.back().collected_buffers[index].push_back(std::move(contribution));
      return;
    }
    // Outside a symbolic body, a one-lane node's contributions from many lanes are summed
    // at once: they may come from computations of different widths (the compacted lanes of
    // each instance of an evaluated call), or from one-lane ones, which must not be
    // counted once per lane.
    if (n.size == 1 && node_size(contribution.index()) != 1 && !inside_region())
      contribution = Handle::steal(reduce(Reduction::Sum, contribution.index()));
    Handle& sum = isolations.back().collected[index];
    sum = sum ? Handle::steal(trace(Op::Add, sum.index(), contribution.index())) : std::move(contribution);
    return;
  }
  size_t size = node_size(contribution.index());
  if (size != n.size) {
    if (n.size != 1 && size != 1)
      throw InternalError("kiln: AD: a gradient of " + std::to_string(size) + " lanes reached a node of " +
                          std::to_string(n.size));
    // A one-lane node inside a loop body keeps its gradient lane by lane (see inside_region).
    if (n.size != 1) {  // a one-lane gradient (a seed, a sum's adjoint) of a wide node: gathers need every lane
      contribution =
          Handle::steal(trace(Op::Add, contribution.index(), Handle::steal(make_literal(n.type, 0, n.size)).index()));
    } else if (!inside_region()) {  // the node was broadcast: its gradient is the sum over the lanes
      add_wide(n, std::move(contribution));
      return;
    }
  }
  // Tracing creates IR nodes only, never AD nodes, so `n` still refers to the node.
  n.grad = n.grad ? Handle::steal(trace(Op::Add, n.grad.index(), contribution.index())) : std::move(contribution);
}

void settle(const std::vector<AdIndex>& nodes) {
  Graph& g = graph();
  std::vector<Index> pending;
  std::vector<AdIndex> owner;
  for (AdIndex i : nodes)
    for (const Handle& w : g.nodes[i].wide) {
      pending.push_back(w.index());
      owner.push_back(i);
    }
  if (pending.empty()) return;
  std::vector<Index> totals = sum_each(pending.data(), pending.size());  // one kernel, one parallel pass
  for (AdIndex i : nodes) g.nodes[i].wide.clear();
  for (size_t k = 0; k < totals.size(); ++k) {
    Handle total = Handle::steal(totals[k]);
    Node& n = g.nodes[owner[k]];
    n.grad = n.grad ? Handle::steal(trace(Op::Add, n.grad.index(), total.index())) : std::move(total);
  }
}

namespace {

/// Whether `weight` is a literal with a finite value (a constant partial such as Neg's -1).
bool finite_literal(Index weight) {
  StateLock lock(state().mutex);
  const detail::Node& n = node(weight);
  if (n.op != Op::Literal) return false;
  if (n.type == VarType::Float32) return std::isfinite(std::bit_cast<float>(uint32_t(n.literal)));
  if (n.type == VarType::Float64) return std::isfinite(std::bit_cast<double>(n.literal));
  return true;
}

/// `grad` times the partial derivative `weight`, where a zero gradient gives 0 even if the
/// partial is infinite or undefined (0 · ∞, 0 · NaN): sqrt, rsqrt, cbrt and log at 0, asin
/// and acos at ±1, pow, atan2 at the origin, a division by 0, the branch a select did not
/// take. A lane whose tangent or adjoint is 0 does not depend on the input there, so its
/// contribution is 0; the weight is zeroed before the product, so no NaN ever appears.
Handle scaled(Index grad, Index weight) {
  if (finite_literal(weight)) return Handle::steal(trace(Op::Mul, grad, weight));
  Handle zero = Handle::steal(make_literal(node_type(grad), 0, 1));
  Handle zero_grad = Handle::steal(trace(Op::Eq, grad, zero.index()));
  Handle guarded = Handle::steal(trace(Op::Select, zero_grad.index(), zero.index(), weight));
  return Handle::steal(trace(Op::Mul, grad, guarded.index()));
}

/// While a special edge traces a derivative, no current mask and no watched inputs: its
/// gathers and scatters carry the mask that was in effect where the primal op ran (the
/// lanes of its loop, branch or call), whereas the traversal may run under another
/// statement's mask, of other lanes (an evaluated call's compacted lanes, differentiated
/// in the body of the evaluated loop around it); and they mirror a primal op that was
/// already checked where it was traced (an evaluated call's gathers of its per-lane
/// arguments, whose tangents are per-lane loop state when the loop is differentiated).
class AsWherePrimalRan {
 public:
  AsWherePrimalRan() {
    StateLock lock(state().mutex);
    push_mask(0);
    state().input_watches.push_back(nullptr);  // a barrier
  }
  ~AsWherePrimalRan() {
    StateLock lock(state().mutex);
    state().input_watches.pop_back();
    pop_mask();
  }
  AsWherePrimalRan(const AsWherePrimalRan&) = delete;
  AsWherePrimalRan& operator=(const AsWherePrimalRan&) = delete;
};

}  // namespace

Handle forward_contribution(const Edge& edge, Index source_grad) {
  switch (edge.kind) {
    case EdgeKind::Scale: return edge.weight ? scaled(source_grad, edge.weight.index()) : Handle::borrow(source_grad);
    case EdgeKind::Mask: {
      Handle zero = Handle::steal(make_literal(node_type(source_grad), 0, 1));
      return Handle::steal(trace(Op::Select, edge.weight.index(), source_grad, zero.index()));
    }
    case EdgeKind::Special: {
      AsWherePrimalRan primal_context;
      return edge.special->forward(source_grad);
    }
    case EdgeKind::Structural: return {};
  }
  return {};
}

Handle backward_contribution(const Edge& edge, Index target_grad) {
  if (edge.kind == EdgeKind::Special) {
    AsWherePrimalRan primal_context;
    return edge.special->backward(target_grad);
  }
  return forward_contribution(edge, target_grad);  // lane-wise edges are symmetric
}

bool backward_into_shared_buffer(const Edge& edge, Index target_grad) {
  if (edge.kind != EdgeKind::Special || isolations.empty() || !isolations.back().collect || !inside_region() ||
      graph().nodes[edge.source].serial >= isolations.back().boundary)
    return false;
  // One buffer per source for the statement: a texture read with many taps and channels
  // would otherwise hold one buffer of the whole texture per gather.
  std::vector<Handle>& buffers = isolations.back().collected_buffers[edge.source];
  Handle buffer;
  if (!buffers.empty()) {
    buffer = std::move(buffers.back());  // held only here while the scatter writes it in place
    buffers.pop_back();
  }
  bool written = backward_into(edge, target_grad, buffer);
  if (buffer) buffers.push_back(std::move(buffer));
  return written;
}

bool backward_into(const Edge& edge, Index target_grad, Handle& buffer) {
  AsWherePrimalRan primal_context;
  return edge.special->backward_into(target_grad, buffer);
}

std::vector<Isolation>& isolation_stack() { return isolations; }
uint64_t isolation_boundary() { return isolations.empty() ? 0 : isolations.back().boundary; }

}  // namespace kiln::detail::ad

namespace kiln::detail {

using namespace ad;

void ad_inc_ref(AdIndex index) {
  if (!index) return;
  GraphLock lock(graph().mutex);
  ++graph().nodes[index].refs_ext;
}

void ad_dec_ref(AdIndex index) {
  if (!index) return;
  GraphLock lock(graph().mutex);
  ad::Node& n = graph().nodes[index];
  if (n.refs_ext == 0) throw InternalError("kiln: AD: reference count underflow");
  --n.refs_ext;
  release_unused(index);
}

bool ad_recording() { return ad::recording_stack.empty() || ad::recording_stack.back(); }
void ad_push_recording(bool enabled) { ad::recording_stack.push_back(enabled); }
void ad_pop_recording() {
  if (ad::recording_stack.empty()) throw InternalError("kiln: resume_grad/suspend_grad scopes are unbalanced");
  ad::recording_stack.pop_back();
}

AdIndex ad_enable(Index value) {
  VarType type = node_type(value);
  if (type != VarType::Float32 && type != VarType::Float64)
    throw TypeError(std::string("kiln: enable_grad(): the array is of type ") + type_name(type) +
                    "; only Float and Float64 arrays carry gradients (cast it first)");
  GraphLock lock(graph().mutex);
  return new_node(type, node_size(value));
}

Index ad_grad(AdIndex index) {
  GraphLock lock(graph().mutex);
  settle({index});
  return Handle(graph().nodes[index].grad).release();
}

namespace {
/// A gradient given for `n` must be floating point, of n's lanes or of one (or, when
/// `summed`, of any size for a one-lane node: it receives the sum, as a broadcast does).
void check_gradient(const ad::Node& n, Index grad, const char* what, bool summed) {
  VarType type = node_type(grad);
  if (type != VarType::Float32 && type != VarType::Float64)
    throw TypeError(std::string("kiln: ") + what + "(): the gradient is of type " + type_name(type) +
                    "; pass a Float or Float64 array");
  size_t size = node_size(grad);
  if (size != 1 && size != n.size && !(summed && n.size == 1))
    throw SizeError(std::string("kiln: ") + what + "(): the gradient has " + std::to_string(size) +
                    " lanes but the array has " + std::to_string(n.size) + "; pass " + std::to_string(n.size) +
                    " lanes or one");
}
}  // namespace

void ad_set_grad(AdIndex index, Index grad) {
  GraphLock lock(graph().mutex);
  ad::Node& n = graph().nodes[index];
  n.wide.clear();
  if (!grad) {
    n.grad = Handle();
    return;
  }
  check_gradient(n, grad, "set_grad", /*summed=*/false);
  n.grad = Handle();
  accumulate(index, Handle::borrow(grad));
}

void ad_accumulate_grad(AdIndex index, Index grad) {
  GraphLock lock(graph().mutex);
  if (grad) check_gradient(graph().nodes[index], grad, "accumulate_grad", /*summed=*/true);
  accumulate(index, Handle::borrow(grad));
}

size_t ad_size(AdIndex index) {
  GraphLock lock(graph().mutex);
  return graph().nodes[index].size;
}
VarType ad_type(AdIndex index) {
  GraphLock lock(graph().mutex);
  return graph().nodes[index].type;
}

size_t ad_node_count() {
  GraphLock lock(graph().mutex);
  return graph().live_nodes;
}
size_t ad_edge_count() {
  GraphLock lock(graph().mutex);
  return graph().live_edges;
}

}  // namespace kiln::detail
