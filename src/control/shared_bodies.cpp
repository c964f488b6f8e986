// body_shape(): a traced body as a token string, with what differs between alike instances
// abstracted; OperandSubstitution: the trace() hook that replays a body on merged values.
#include "control/shared_bodies.h"

#include "ir/node.h"
#include "ir/op_info.h"
#include "ir/region.h"

namespace kiln::detail {
namespace {

/// Tokens that open a node's entry (op codes follow as numbers above these).
enum Token : uint64_t { kArgument = 1, kMask, kLeaf, kOuter, kRepeat, kOperation };

/// Walks a body's outputs depth-first, numbering nodes as it first meets them.
class ShapeWriter {
 public:
  ShapeWriter(BodyShape& shape, const Values& args, const std::vector<Index>& merged_args, uint64_t first_serial,
              Index mask)
      : shape_(shape), first_serial_(first_serial), mask_(mask) {
    for (size_t k = 0; k < args.size(); ++k) arguments_.emplace(args[k].index(), k);
    for (size_t k = 0; k < merged_args.size(); ++k)
      if (merged_args[k]) merged_.emplace(merged_args[k], k);
  }

  /// False when the body holds something a shared body cannot stand for.
  bool write(Index index) {
    auto seen = numbers_.find(index);
    if (seen != numbers_.end()) return put({kRepeat, seen->second});
    numbers_.emplace(index, numbers_.size());
    const Node& n = node(index);
    if (auto it = arguments_.find(index); it != arguments_.end()) return put({kArgument, it->second});
    if (auto it = merged_.find(index); it != merged_.end()) {
      // Standing for the first body's leaf it replaced: at that leaf's position.
      if (it->second != shape_.leaves.size()) return false;
      shape_.leaves.push_back(index);
      return put({kLeaf, it->second});
    }
    if (index == mask_) return put({kMask});
    if (n.op == Op::Literal) return put({kOperation + uint64_t(n.op), uint64_t(n.type), n.literal, n.size == 1});
    if (n.serial < first_serial_) {
      // From before the body: a one-element value is the instance's own (merged per lane
      // when instances differ there); anything else must be the same array.
      if (n.size != 1) return put({kOuter, index});
      shape_.leaves.push_back(index);
      return put({kLeaf, shape_.leaves.size() - 1});
    }
    if (!(op_is_pure(n.op) || n.op == Op::Gather)) return false;  // loops, calls, side effects
    put({kOperation + uint64_t(n.op), uint64_t(n.type), n.literal, n.size == 1});
    int arity = op_arity(n.op);
    for (int i = 0; i < arity; ++i) {
      if (n.op == Op::Gather && i == 0) {
        put({kOuter, n.operands[0]});  // the source is never merged
      } else if (!write(n.operands[i])) {
        return false;
      }
    }
    return true;
  }

 private:
  bool put(std::initializer_list<uint64_t> tokens) {
    shape_.tokens.insert(shape_.tokens.end(), tokens);
    return true;
  }

  BodyShape& shape_;
  uint64_t first_serial_;
  Index mask_;
  std::unordered_map<Index, uint64_t> arguments_, merged_, numbers_;
};

}  // namespace

BodyShape body_shape(const Values& outputs, const Values& args, uint32_t region_id, uint64_t first_serial,
                     const std::vector<Index>& merged_args) {
  BodyShape shape;
  const Region& body = region(region_id);
  if (!body.effects.empty() || !body.targets.empty()) return shape;
  for (const Handle& value : outputs)
    if (value.ad()) return shape;  // derivatives would be recorded against one instance's values
  ShapeWriter writer(shape, args, merged_args, first_serial, current_mask());
  for (const Handle& value : outputs)
    if (!writer.write(value.index())) return shape;
  shape.shareable = true;
  return shape;
}

OperandSubstitution::OperandSubstitution(const std::unordered_map<Index, Index>& substitutions)
    : saved_(state().substitutions) {
  state().substitutions = &substitutions;
}

OperandSubstitution::~OperandSubstitution() { state().substitutions = saved_; }

}  // namespace kiln::detail
