// Forward and reverse traversals of the AD graph. Each first collects the nodes on paths
// between the requested sources and targets (nothing else is visited), then walks them in
// creation order (reverse: newest first) and emits the contributions as traced code with
// recording suspended, so gradients fuse into kernels like any other computation.
#include "ad/graph.h"
#include "eval/growth_watch.h"

#include <kiln/errors.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::detail {

using namespace ad;

namespace {

/// Suspends AD recording while a traversal emits derivative code; CustomOp callbacks
/// run with the caller's recording state restored (they may record and traverse).
struct RecordingOff {
  RecordingOff() { ad_push_recording(false); }
  ~RecordingOff() { ad_pop_recording(); }
  GrowthWatchPause growth_by_design;  // see growth_watch.h
};
struct RecordingAsCaller {
  explicit RecordingAsCaller(bool enabled) { ad_push_recording(enabled); }
  ~RecordingAsCaller() { ad_pop_recording(); }
};

/// Nodes reachable from `roots` against the edges (`upstream`: through incoming edges, not
/// expanding nodes older than the isolation boundary) or along them (through outgoing
/// edges). Counts the edges it crosses; `what` names the traversal in errors.
std::vector<AdIndex> collect(const AdIndex* roots, size_t count, bool upstream, size_t& edges, const char* what) {
  Graph& g = graph();
  uint64_t boundary = upstream ? isolation_boundary() : 0;
  std::unordered_set<AdIndex> seen;
  std::vector<AdIndex> order, work(roots, roots + count);
  while (!work.empty()) {
    AdIndex i = work.back();
    work.pop_back();
    if (!i || !seen.insert(i).second) continue;
    order.push_back(i);
    Node& n = g.nodes[i];
    if (n.serial < boundary) continue;
    if (upstream ? n.consumed : n.consumed_out)
      throw ValueError(std::string("kiln: ") + what + "(): the derivatives " + (upstream ? "through" : "from") +
                       " this part of the graph were already used and freed by an earlier backward(); pass "
                       "retain_graph=true to that backward() to traverse it again");
    for (uint32_t e : upstream ? n.in_edges : n.out_edges) {
      ++edges;
      work.push_back(upstream ? g.edges[e].source : g.edges[e].target);
    }
  }
  return order;
}

void sort_by_creation(std::vector<AdIndex>& nodes, bool newest_first) {
  Graph& g = graph();
  std::sort(nodes.begin(), nodes.end(), [&](AdIndex a, AdIndex b) {
    return newest_first ? g.nodes[a].serial > g.nodes[b].serial : g.nodes[a].serial < g.nodes[b].serial;
  });
}

std::vector<Index> borrowed_grads(const std::vector<AdIndex>& nodes, const std::unordered_set<AdIndex>* within) {
  std::vector<Index> grads;
  for (AdIndex i : nodes) {
    bool usable = i && (!within || within->count(i));
    grads.push_back(usable ? graph().nodes[i].grad.index() : 0);
  }
  return grads;
}

/// Runs a CustomOp's callback and adds the results to `receivers` (by position).
void run_custom(AdIndex hub_index, bool reverse, const std::unordered_set<AdIndex>* within, bool recording) {
  Graph& g = graph();
  std::shared_ptr<CustomCallbacks> op = g.nodes[hub_index].hub->op;
  std::vector<AdIndex> givers = reverse ? g.nodes[hub_index].hub->outputs : g.nodes[hub_index].hub->inputs;
  std::vector<AdIndex> receivers = reverse ? g.nodes[hub_index].hub->inputs : g.nodes[hub_index].hub->outputs;
  settle(givers);
  std::vector<Index> grads = borrowed_grads(givers, within);
  if (std::all_of(grads.begin(), grads.end(), [](Index i) { return i == 0; })) return;
  std::vector<Index> results;
  {
    RecordingAsCaller as_caller(recording);
    results = reverse ? op->backward_grads(grads) : op->forward_grads(grads);
  }
  std::vector<Handle> owned;
  for (Index r : results) owned.push_back(Handle::steal(r));
  if (owned.size() != receivers.size())
    throw ValueError("kiln: " + op->name() + "." + (reverse ? "backward" : "forward") + "() returned " +
                     std::to_string(owned.size()) + " gradients, expected " + std::to_string(receivers.size()) +
                     " (one per " + (reverse ? "input" : "output") + "; 0 / None where there is none)");
  for (size_t k = 0; k < receivers.size(); ++k) {
    if (!receivers[k] || !owned[k]) continue;
    if (within && !within->count(receivers[k])) continue;
    size_t lanes = node_size(owned[k].index()), expected = g.nodes[receivers[k]].size;
    if (lanes != expected && lanes != 1 && expected != 1)
      throw ValueError("kiln: " + op->name() + "." + (reverse ? "backward" : "forward") + "() returned a gradient of " +
                       std::to_string(lanes) + " lanes for " + (reverse ? "input " : "output ") + std::to_string(k) +
                       ", which has " + std::to_string(expected) + "; return one lane or " + std::to_string(expected));
    accumulate(receivers[k], std::move(owned[k]));
  }
}

/// Pushes the tangents of `order` (sorted oldest first) along the edges into `within`.
void propagate_forward(const std::vector<AdIndex>& order, const std::unordered_set<AdIndex>& within, bool recording) {
  Graph& g = graph();
  for (AdIndex i : order) {
    if (g.nodes[i].hub) {
      run_custom(i, /*reverse=*/false, &within, recording);
      continue;
    }
    settle({i});
    if (!g.nodes[i].grad) continue;
    Handle grad = g.nodes[i].grad;
    std::vector<uint32_t> out = g.nodes[i].out_edges;
    for (uint32_t e : out) {
      Edge edge = g.edges[e];  // a copy: accumulating may grow the edge table
      if (within.count(edge.target)) accumulate(edge.target, forward_contribution(edge, grad.index()));
    }
  }
}

}  // namespace

namespace {

/// The reverse pass over `order` (the nodes on the requested paths): adjoints start at
/// the `seeded` nodes and flow against the edges to nodes of `order`; `kept` nodes (the
/// destinations of backward_to()) keep theirs.
void reverse_pass(std::vector<AdIndex> order, const std::unordered_set<AdIndex>& seeded,
                  const std::unordered_set<AdIndex>& kept, TraversalStats visited, bool retain_graph) {
  Graph& g = graph();
  bool recording = ad_recording();
  RecordingOff off;
  sort_by_creation(order, /*newest_first=*/true);
  uint64_t boundary = isolation_boundary();
  // Adjoints start at zero between the targets and the inputs (a forward traversal may
  // have left tangents there).
  std::unordered_set<AdIndex> within(order.begin(), order.end());
  for (AdIndex i : order)
    if (!seeded.count(i) && !kept.count(i) && g.nodes[i].serial >= boundary && !g.nodes[i].in_edges.empty())
      g.nodes[i].grad = Handle();
  // The adjoints of every gather from one node scatter into one buffer, added to the node's
  // gradient when the pass reaches the node (all its consumers done). Adding each gather's
  // buffer as it came would read it, evaluating the scatters pending so far: one kernel per
  // gather, each recomputing the primal values it needs (a silhouette's six vertex reads).
  std::unordered_map<AdIndex, Handle> scattered;
  auto add_scattered = [&](AdIndex i) {
    auto it = scattered.find(i);
    if (it == scattered.end()) return;
    accumulate(i, std::move(it->second));
    scattered.erase(it);
  };
  for (AdIndex i : order) {
    add_scattered(i);
    if (g.nodes[i].serial < boundary) continue;
    if (g.nodes[i].hub) {
      run_custom(i, /*reverse=*/true, &within, recording);  // outputs off the path hold no adjoint
      continue;
    }
    if (g.nodes[i].in_edges.empty()) continue;  // an input: its sums are settled at the end
    settle({i});
    if (!g.nodes[i].grad) continue;
    Handle grad = g.nodes[i].grad;
    std::vector<uint32_t> in = g.nodes[i].in_edges;
    for (uint32_t e : in) {
      Edge edge = g.edges[e];  // a copy: accumulating may grow the edge table
      if (!within.count(edge.source) || backward_into_shared_buffer(edge, grad.index())) continue;
      if (edge.kind == EdgeKind::Special && g.nodes[edge.source].serial >= boundary &&
          backward_into(edge, grad.index(), scattered[edge.source]))
        continue;
      accumulate(edge.source, backward_contribution(edge, grad.index()));
    }
  }
  for (AdIndex i : order) add_scattered(i);  // inputs: never reached with in-edges
  g.last = visited;                          // set after the callbacks: a CustomOp's own traversals would replace it
  settle(order);
  // Gradients stay on the inputs (nodes without incoming edges), on the kept nodes and on
  // nodes at the isolation boundary, which propagate further when their scope ends.
  for (AdIndex i : order) {
    Node& n = g.nodes[i];
    if (n.serial < boundary) {
      if (n.grad && !isolation_stack().back().collect) {
        ad_inc_ref(i);
        isolation_stack().back().postponed.push_back(i);
      }
      continue;
    }
    if (n.in_edges.empty() || kept.count(i)) continue;
    n.grad = Handle();
    if (!retain_graph) {
      n.consumed = true;
      free_in_edges(i);
    }
  }
}

}  // namespace

void ad_backward(const AdIndex* targets, size_t count, bool retain_graph) {
  GraphLock lock(graph().mutex);
  size_t edges = 0;
  std::vector<AdIndex> order = collect(targets, count, /*upstream=*/true, edges, "backward");
  TraversalStats visited{order.size(), edges};
  reverse_pass(std::move(order), std::unordered_set<AdIndex>(targets, targets + count), {}, visited, retain_graph);
}

void ad_backward_to(const AdIndex* sources, size_t count, bool retain_graph) {
  Graph& g = graph();
  GraphLock lock(g.mutex);
  size_t down_edges = 0, up_edges = 0;
  std::unordered_set<AdIndex> kept(sources, sources + count);
  std::vector<AdIndex> downstream = collect(sources, count, /*upstream=*/false, down_edges, "backward_to");
  std::vector<AdIndex> seeds;
  for (AdIndex i : downstream)
    if (!kept.count(i) && g.nodes[i].grad) seeds.push_back(i);
  std::unordered_set<AdIndex> below(downstream.begin(), downstream.end());
  std::vector<AdIndex> order;
  for (AdIndex i : collect(seeds.data(), seeds.size(), /*upstream=*/true, up_edges, "backward_to"))
    if (below.count(i)) order.push_back(i);
  for (AdIndex i : kept)
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  TraversalStats visited{order.size(), up_edges};
  reverse_pass(std::move(order), std::unordered_set<AdIndex>(seeds.begin(), seeds.end()), kept, visited, retain_graph);
}

void ad_forward(const AdIndex* sources, size_t count) {
  Graph& g = graph();
  GraphLock lock(g.mutex);
  bool recording = ad_recording();
  RecordingOff off;
  size_t edges = 0;
  std::vector<AdIndex> order = collect(sources, count, /*upstream=*/false, edges, "forward");
  TraversalStats visited{order.size(), edges};
  sort_by_creation(order, /*newest_first=*/false);
  std::unordered_set<AdIndex> within(order.begin(), order.end());
  // Tangents start at zero downstream of the sources (the same forward() twice gives the
  // same tangents; several sources at once: forward_from() on all of them, or forward_to()).
  std::unordered_set<AdIndex> seeded(sources, sources + count);
  uint64_t boundary = isolation_boundary();
  for (AdIndex i : order)
    if (!seeded.count(i) && g.nodes[i].serial >= boundary) {
      g.nodes[i].grad = Handle();
      g.nodes[i].wide.clear();
    }
  propagate_forward(order, within, recording);
  g.last = visited;        // set after the callbacks: a CustomOp's own traversals would replace it
  for (AdIndex i : order)  // an enclosing traversal owns the nodes older than the boundary
    if (g.nodes[i].refs_ext == 0 && !seeded.count(i) && g.nodes[i].serial >= boundary) g.nodes[i].grad = Handle();
}

void ad_forward_to(const AdIndex* targets, size_t count) {
  Graph& g = graph();
  GraphLock lock(g.mutex);
  bool recording = ad_recording();
  RecordingOff off;
  size_t edges = 0;
  std::vector<AdIndex> order = collect(targets, count, /*upstream=*/true, edges, "forward_to");
  sort_by_creation(order, /*newest_first=*/false);
  std::unordered_set<AdIndex> within(order.begin(), order.end());
  std::unordered_set<AdIndex> kept(targets, targets + count);
  uint64_t boundary = isolation_boundary();  // an enclosing traversal owns the older nodes
  // The targets' tangents are this traversal's: what an earlier forward_to() left there is
  // not added to (a target that is an input keeps its seed).
  for (AdIndex i : kept)
    if (i && !g.nodes[i].in_edges.empty() && g.nodes[i].serial >= boundary) {
      g.nodes[i].grad = Handle();
      g.nodes[i].wide.clear();
    }
  propagate_forward(order, within, recording);
  g.last = TraversalStats{order.size(), edges};
  for (AdIndex i : order) {
    Node& n = g.nodes[i];
    if (!kept.count(i) && !n.in_edges.empty() && n.serial >= boundary) n.grad = Handle();
  }
}

uint64_t ad_next_serial() {
  GraphLock lock(graph().mutex);
  return graph().next_serial;
}

std::vector<AdIndex> ad_frontier(const AdIndex* roots, size_t count, uint64_t first_serial) {
  Graph& g = graph();
  GraphLock lock(g.mutex);
  std::unordered_set<AdIndex> seen;
  std::vector<AdIndex> frontier, work(roots, roots + count);
  while (!work.empty()) {
    AdIndex i = work.back();
    work.pop_back();
    if (!i || !seen.insert(i).second) continue;
    if (g.nodes[i].serial < first_serial) {
      frontier.push_back(i);
      continue;
    }
    for (uint32_t e : g.nodes[i].in_edges) work.push_back(g.edges[e].source);
  }
  return frontier;
}

std::vector<Index> ad_collected_buffers(AdIndex ad) {
  GraphLock lock(graph().mutex);
  std::vector<Index> out;
  if (isolation_stack().empty()) return out;
  auto& buffers = isolation_stack().back().collected_buffers;
  auto it = buffers.find(ad);
  if (it != buffers.end())
    for (const Handle& b : it->second) out.push_back(Handle(b).release());
  return out;
}

TraversalStats ad_last_traversal() {
  GraphLock lock(graph().mutex);
  return graph().last;
}

void ad_push_isolation(bool collect) {
  GraphLock lock(graph().mutex);
  Isolation scope;
  scope.boundary = graph().next_serial;
  scope.collect = collect;
  isolation_stack().push_back(std::move(scope));
}

Index ad_collected(AdIndex ad) {
  GraphLock lock(graph().mutex);
  if (isolation_stack().empty()) return 0;
  auto& collected = isolation_stack().back().collected;
  auto it = collected.find(ad);
  return it == collected.end() ? 0 : Handle(it->second).release();
}

void ad_pop_isolation(bool propagate) {
  std::vector<AdIndex> postponed;
  {
    GraphLock lock(graph().mutex);
    if (isolation_stack().empty()) throw InternalError("kiln: isolate_grad scopes are unbalanced");
    postponed = std::move(isolation_stack().back().postponed);
    isolation_stack().pop_back();
  }
  if (propagate && !postponed.empty()) {
    try {
      ad_backward(postponed.data(), postponed.size(), /*retain_graph=*/false);
    } catch (...) {
      for (AdIndex i : postponed) ad_dec_ref(i);
      throw;
    }
  }
  for (AdIndex i : postponed) ad_dec_ref(i);
}

}  // namespace kiln::detail
