// A binary bounding volume hierarchy over primitives' boxes, built on the host by Embree's
// BVH builder (rtcBuildBVH, SAH, into Kiln's own nodes) and flattened depth first into
// arrays that a traversal written as Kiln code reads: each node's left child follows it,
// and each node knows where its subtree ends, so a traversal may keep a stack (the right
// child) or none (skip to the end of the subtree). Private to render/accel/.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::render {

/// The deepest path from the root to a leaf (the size of a traversal's stack).
constexpr unsigned kMaxBvhDepth = 48;

/// An axis-aligned box.
struct Box {
  float lower[3], upper[3];
};

/// One node of a flattened BVH.
struct BvhNode {
  Box bounds;
  /// A leaf: its primitives are Bvh::primitives[first, first + count). An inner node
  /// (count 0): `first` is its right child; its left child is the next node.
  uint32_t first = 0, count = 0;
  /// The node after this subtree in depth-first order (the node count past the last one).
  uint32_t skip = 0;
};

struct Bvh {
  std::vector<BvhNode> nodes;        ///< depth first, the root at 0; empty without primitives
  std::vector<uint32_t> primitives;  ///< primitive indices in leaf order
};

/// Builds the BVH of primitives with these boxes (a primitive's index is its position)
/// with at most `max_leaf_size` primitives per leaf (1 to 32). Boxes with a NaN or an
/// inverted extent are left out (no ray can hit them). InternalError when Embree fails.
Bvh build_bvh(const std::vector<Box>& boxes, unsigned max_leaf_size = 4);

}  // namespace kiln::render
