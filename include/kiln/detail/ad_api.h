// The runtime-typed automatic-differentiation interface that Array<T>, autodiff.h and the
// Python binding forward to. An array that carries derivatives holds, beside its IR node,
// the index of an AD node (0: none); AD nodes form a graph of their own (src/ad/graph.h)
// whose edges hold partial derivatives as traced arrays.
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/// Every differentiable operation, one derivative rule each (src/ad/rules.cpp).
/// X(name, arity)
// clang-format off
#define KILN_DIFF_TABLE(X)                                                               \
  X(Neg, 1) X(Abs, 1) X(Sqrt, 1) X(Rcp, 1) X(Rsqrt, 1) X(Cast, 1)                         \
  X(Add, 2) X(Sub, 2) X(Mul, 2) X(Div, 2) X(Mod, 2) X(Min, 2) X(Max, 2)        \
  X(Fma, 3) X(Select, 3)                                                                  \
  X(Exp, 1) X(Exp2, 1) X(Expm1, 1) X(Log, 1) X(Log2, 1) X(Log1p, 1) X(Pow, 2)            \
  X(Sin, 1) X(Cos, 1) X(Tan, 1) X(Asin, 1) X(Acos, 1) X(Atan, 1) X(Atan2, 2)              \
  X(Sinh, 1) X(Cosh, 1) X(Tanh, 1) X(Erf, 1) X(Erfinv, 1) X(Cbrt, 1)                      \
  X(Gather, 3) X(Scatter, 4) X(ScatterAdd, 4)                                             \
  X(Sum, 1) X(Prod, 1) X(ReduceMin, 1) X(ReduceMax, 1) X(PrefixSum, 1) X(BlockSum, 1)
// clang-format on

namespace kiln {

/// Differentiable operations, generated from KILN_DIFF_TABLE.
enum class DiffOp : uint8_t {
#define KILN_DIFF_ENUM(name, arity) name,
  KILN_DIFF_TABLE(KILN_DIFF_ENUM)
#undef KILN_DIFF_ENUM
};
const char* diff_op_name(DiffOp op);
inline constexpr size_t kDiffOpCount = 0
#define KILN_DIFF_COUNT(name, arity) +1
    KILN_DIFF_TABLE(KILN_DIFF_COUNT)
#undef KILN_DIFF_COUNT
    ;

/// What the last forward or reverse traversal visited: only the AD nodes and edges on
/// paths between the requested sources and targets.
struct TraversalStats {
  size_t nodes = 0;
  size_t edges = 0;
};

namespace detail {

/// Index of an AD node; 0 means "no derivative".
using AdIndex = uint32_t;

void ad_inc_ref(AdIndex index);
void ad_dec_ref(AdIndex index);

/// A traced value and the AD node it carries (0 when none); returned with one reference
/// to each.
struct AdValue {
  Index value = 0;
  AdIndex ad = 0;
};
/// An operand of a differentiable operation (borrowed references).
struct AdOperand {
  Index value = 0;
  AdIndex ad = 0;
};

/// Records IR op `op` (as trace()) and, when an operand carries derivatives and
/// recording is on, an AD node with that op's partials. Ops without a derivative rule
/// (comparisons, integer and bit operations, rounding, bitcasts) stop gradients.
AdValue ad_trace(Op op, const AdOperand* operands, size_t count, VarType type = VarType::Bool);
/// A math-library function (DiffOp::Exp ... DiffOp::Cbrt) on operands that may carry
/// derivatives: the value is the library's, the derivative the rule's.
AdValue ad_math(DiffOp op, const AdOperand* operands, size_t count);
/// Horizontal operations with derivatives (DiffOp::Sum ... DiffOp::BlockSum; `parameter`
/// is `exclusive` for PrefixSum and the block size for BlockSum).
AdValue ad_horizontal(DiffOp op, AdOperand operand, size_t parameter = 0);
/// A scatter (ReduceOp None or Add) into `target` where the target or the value carries
/// derivatives: `target` is updated in place (new value node and new AD node).
void ad_scatter(ReduceOp reduce, AdValue& target, AdOperand value, Index index, Index mask);

/// A new leaf AD node for `value` (a Float or Float64 node); throws TypeError otherwise.
AdIndex ad_enable(Index value);
/// The gradient accumulated at `ad` as a new reference (0 when there is none yet).
Index ad_grad(AdIndex ad);
/// Replaces the gradient at `ad` (`grad` may be 0 to clear it); checks type and size.
void ad_set_grad(AdIndex ad, Index grad);
/// Adds to the gradient at `ad`.
void ad_accumulate_grad(AdIndex ad, Index grad);
/// Lanes and type of an AD node (as recorded).
size_t ad_size(AdIndex ad);
VarType ad_type(AdIndex ad);

/// Throws when a traversal (`what`: "backward_from()") is started while a loop, branch or
/// call traces its functions: a symbolic one traces them once for all lanes and
/// iterations, an evaluated one per active lane, so it must start after the statement.
void ad_check_traversal_allowed(const char* what);
/// Reverse mode: propagates the gradients set on `targets` back through every edge on a
/// path to a node without incoming edges (inputs), and clears the gradients of the
/// nodes in between. Frees the visited edges unless `retain_graph`.
void ad_backward(const AdIndex* targets, size_t count, bool retain_graph);
/// Reverse mode restricted to paths that start at `sources`, from every node on them that
/// has a gradient set: the adjoints accumulate on `sources` (and stay there).
void ad_backward_to(const AdIndex* sources, size_t count, bool retain_graph);
/// Forward mode: propagates the gradients set on `sources` along every outgoing path.
/// Nodes referenced by arrays keep their gradients; the others are cleared.
void ad_forward(const AdIndex* sources, size_t count);
/// Forward mode restricted to paths that end in `targets`, from every node on them that
/// has a gradient set.
void ad_forward_to(const AdIndex* targets, size_t count);
/// The sizes of the last traversal.
TraversalStats ad_last_traversal();

/// `x` on `device` (a copy, or `x` where it is): with derivatives, tangents are copied
/// forward and adjoints back to `x`'s device.
AdValue ad_to_device(AdOperand x, Device device);

/// Whether operations record AD nodes now (false inside suspend_grad()).
bool ad_recording();
/// Pushes a recording state (suspend_grad / resume_grad scopes) and pops it.
void ad_push_recording(bool enabled);
void ad_pop_recording();
/// isolate_grad(): traversals started inside stop at nodes created before the scope;
/// their gradients are propagated further when the scope ends. With `collect`, what
/// reaches those nodes is kept per node, lane by lane, for ad_collected() instead (the
/// derivative statements of symbolic loops and calls), and nothing propagates further.
void ad_push_isolation(bool collect = false);
/// What traversals inside the innermost collecting scope passed to `ad` (a new
/// reference; 0 when nothing).
Index ad_collected(AdIndex ad);
/// The buffers that scatters inside the statement write as contributions to `ad` (the
/// adjoints of gathers from a captured array; new references): they accumulate over the
/// statement's iterations themselves, so they are not carried lane by lane.
std::vector<Index> ad_collected_buffers(AdIndex ad);
/// Ends the innermost isolate_grad() scope. With `propagate`, the gradients that reached
/// its boundary continue in a reverse traversal; without (a scope left by an exception,
/// whose computation failed), they are dropped, so ending a scope never throws while an
/// exception unwinds.
void ad_pop_isolation(bool propagate = true);

/// The creation number the next AD node will get.
uint64_t ad_next_serial();
/// The AD nodes created before `first_serial` that the nodes created since (starting
/// from `roots`) reach directly: the differentiable arrays a traced function read from
/// outside. A root that is itself older counts.
std::vector<AdIndex> ad_frontier(const AdIndex* roots, size_t count, uint64_t first_serial);

/// Live AD nodes and edges (tests and leak checks).
size_t ad_node_count();
size_t ad_edge_count();

}  // namespace detail

namespace detail {
/// The runtime-typed callbacks of a differentiable operation whose derivatives the user
/// writes (autodiff.h's CustomOp, Python's kiln.CustomOp). Gradients are plain
/// (derivative-free) node indices, 0 where there is none; returned indices are new
/// references. Callbacks may record AD nodes and run traversals of their own.
class CustomCallbacks {
 public:
  virtual ~CustomCallbacks() = default;
  /// A name for diagnostics (error messages).
  virtual std::string name() const { return "CustomOp"; }
  /// Output tangents (one per output) from input tangents.
  virtual std::vector<Index> forward_grads(const std::vector<Index>& grad_inputs) = 0;
  /// Input adjoints (one per input) from output adjoints.
  virtual std::vector<Index> backward_grads(const std::vector<Index>& grad_outputs) = 0;
};
}  // namespace detail

namespace detail {
/// Connects `outputs` (plain values computed by the caller from `inputs` with gradients
/// suspended) to `inputs` through `op`: returns the outputs (new references) with AD
/// nodes whose derivatives `op` computes. Outputs that are not floating point, or all of
/// them when no input carries derivatives, get no AD node.
std::vector<AdValue> ad_custom(std::shared_ptr<CustomCallbacks> op, const std::vector<AdOperand>& inputs,
                               const std::vector<Index>& outputs);
}  // namespace detail

}  // namespace kiln
