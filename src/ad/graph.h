// The AD graph: nodes for values that carry derivatives and weighted edges from each
// operand to the result, beside the IR (DESIGN.md "AD").
//
// Start reading here for automatic differentiation. An operation on arrays that carry
// AD nodes records a new node and one edge per differentiable operand, holding that
// operand's partial derivative as a traced array (src/ad/rules.cpp fills them in). Edges
// hold a reference to their source, so everything upstream of a live node stays alive;
// arrays hold external references. Traversals (src/ad/traverse.cpp) visit only the nodes
// on paths between the requested sources and targets and emit ordinary traced code.
#pragma once

#include <kiln/detail/ad_api.h>
#include <kiln/detail/control_api.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln::detail::ad {

/// How an edge turns a gradient at one end into a contribution at the other.
enum class EdgeKind : uint8_t {
  Scale,       ///< multiply by `weight` (no weight: identity, e.g. Add or Cast)
  Mask,        ///< keep lanes where the Bool `weight` holds, zero elsewhere (select)
  Special,     ///< `special` computes both directions (gathers, scatters, scans)
  Structural,  ///< connects a CustomOp's inputs and outputs to its hub; carries nothing
};

/// An edge whose derivative is not a lane-wise product. Both functions take a gradient
/// (a borrowed node) and return the contribution as a new handle.
class SpecialEdge {
 public:
  virtual ~SpecialEdge() = default;
  virtual Handle forward(Index source_grad) const = 0;
  virtual Handle backward(Index target_grad) const = 0;
  /// For an edge whose backward is a scatter_add into a zero buffer of its source's size
  /// (a gather's adjoint): adds into `buffer` instead (made when empty) and returns true, so
  /// that many such edges into one source write one buffer. False: no such form.
  virtual bool backward_into(Index /*target_grad*/, Handle& /*buffer*/) const { return false; }
};

/// A CustomOp's node: inputs and outputs by position (0 where a position carries no
/// derivative or the output has been freed).
struct CustomHub {
  std::shared_ptr<CustomCallbacks> op;
  std::vector<AdIndex> inputs, outputs;
};

struct Edge {
  AdIndex source = 0, target = 0;
  EdgeKind kind = EdgeKind::Scale;
  Handle weight;
  std::shared_ptr<const SpecialEdge> special;
};

struct Node {
  uint32_t refs_ext = 0;  ///< arrays holding the node
  uint32_t refs_int = 0;  ///< edges whose source it is
  VarType type = VarType::Float32;
  size_t size = 0;
  uint64_t serial = 0;  ///< creation order: sources always precede targets
  Handle grad;          ///< accumulated gradient (empty: zero)
  /// Contributions over many lanes to a one-lane node, lane by lane (one per lane count),
  /// whose sums are still to be added to `grad` (settle()): a traversal evaluates all of
  /// them in one kernel instead of one reduction kernel per parameter.
  std::vector<Handle> wide;
  std::vector<uint32_t> in_edges, out_edges;
  std::unique_ptr<CustomHub> hub;
  /// A reverse traversal freed the incoming edges: gradients cannot pass any more.
  bool consumed = false;
  /// ... or outgoing edges of this node (until a new one is added): tangents cannot leave
  /// it along the old uses any more.
  bool consumed_out = false;
  bool live = false;
};

/// The global graph. All access holds `mutex` (recursive: CustomOp callbacks record AD
/// nodes and start nested traversals on the same thread).
struct Graph {
  std::recursive_mutex mutex;
  std::vector<Node> nodes{1};  // index 0 is "no node"
  std::vector<Edge> edges{1};
  std::vector<AdIndex> free_nodes;
  std::vector<uint32_t> free_edges;
  uint64_t next_serial = 1;
  size_t live_nodes = 0, live_edges = 0;
  TraversalStats last;
};
Graph& graph();
using GraphLock = std::lock_guard<std::recursive_mutex>;

/// A new node with one external reference.
AdIndex new_node(VarType type, size_t size);
/// An edge from `source` (which gains a reference) into `target`.
void add_edge(AdIndex source, AdIndex target, EdgeKind kind, Handle weight = {},
              std::shared_ptr<const SpecialEdge> special = nullptr);
/// Drops the incoming edges of `index` (their sources lose a reference).
void free_in_edges(AdIndex index);

/// Adds `contribution` to the gradient of `index`, converting its type and reducing a
/// broadcast (a contribution over many lanes to a one-lane node is summed).
void accumulate(AdIndex index, Handle contribution);
/// Adds the pending sums of wide contributions to the gradients of `nodes`, evaluating
/// all of them together first.
void settle(const std::vector<AdIndex>& nodes);
/// The contribution an edge passes forward (from its source's gradient) or backward
/// (from its target's gradient).
Handle forward_contribution(const Edge& edge, Index source_grad);
Handle backward_contribution(const Edge& edge, Index target_grad);
/// Passes edge `edge`'s backward contribution to its source where that is one scatter
/// buffer shared by every gather from it (collecting inside a symbolic statement, for a
/// source captured from outside): true when it did, false to accumulate() it instead.
bool backward_into_shared_buffer(const Edge& edge, Index target_grad);
/// Adds special edge `edge`'s backward contribution into `buffer` (made when empty) where
/// it has that form (SpecialEdge::backward_into): true when it did.
bool backward_into(const Edge& edge, Index target_grad, Handle& buffer);

/// Recording state of this thread (suspend_grad / resume_grad) and the isolation
/// boundary (isolate_grad): traversals do not expand nodes older than it.
struct Isolation {
  uint64_t boundary = 0;
  std::vector<AdIndex> postponed;  ///< nodes at the boundary that received gradients
  /// Collecting (derivative statements of symbolic loops and calls): contributions to
  /// nodes older than the boundary are kept here, lane by lane, instead of being added to
  /// their gradients (a one-lane node would need a horizontal sum inside the kernel).
  bool collect = false;
  std::unordered_map<AdIndex, Handle> collected;
  /// ... except contributions that are buffers written by scatters inside the statement
  /// (the adjoint of a gather from a captured array): those accumulate over the
  /// statement's iterations by themselves and are kept apart, one per scatter target.
  std::unordered_map<AdIndex, std::vector<Handle>> collected_buffers;
};
std::vector<Isolation>& isolation_stack();
uint64_t isolation_boundary();

}  // namespace kiln::detail::ad
