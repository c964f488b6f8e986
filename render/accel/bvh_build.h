// A binary bounding volume hierarchy over primitives' boxes, built on the host by Embree's
// BVH builder (rtcBuildBVH, SAH, into Kiln's own nodes) and flattened depth first into
// arrays that a traversal written as Kiln code reads: each node's first child follows it,
// and each node knows where its subtree ends, so a traversal may keep a stack (the second
// child) or none (skip to the end of the subtree). The tree is flattened once per octant of
// ray directions, with the child nearer to such rays first, so that a traversal without a
// stack still visits near subtrees first (and so finds close hits early and culls more).
// Private to render/accel/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::render {

/// The deepest path from the root to a leaf (the size of a traversal's stack).
constexpr unsigned kMaxBvhDepth = 48;

/// An axis-aligned box.
struct Box {
  float lower[3], upper[3];
};

/// The octants of ray directions, numbered by their signs: bit a is set where a ray's
/// direction along axis a is negative (or -0).
constexpr unsigned kOctants = 8;

/// The most primitives a BVH holds: its kOctants layouts of up to 2n - 1 nodes each are
/// indexed by 32-bit integers.
constexpr size_t kMaxBvhPrimitives = size_t(1) << 28;

/// One node of a flattened BVH.
struct BvhNode {
  Box bounds;
  /// A leaf: its primitives are Bvh::primitives[first, first + count). An inner node
  /// (count 0): `first` is its second child; its first child is the next node.
  uint32_t first = 0, count = 0;
  /// The node after this subtree in depth-first order (the end of its layout past the
  /// last one).
  uint32_t skip = 0;
};

struct Bvh {
  /// kOctants layouts of layout_size nodes, one after another (indices are absolute): the
  /// layout of octant k starts with the root at k · layout_size and orders each node's
  /// children nearer-first for directions in octant k. Empty without primitives.
  std::vector<BvhNode> nodes;
  uint32_t layout_size = 0;
  std::vector<uint32_t> primitives;  ///< primitive indices in leaf order (the same in every layout)
};

/// Builds the BVH of primitives with these boxes (a primitive's index is its position)
/// with at most `max_leaf_size` primitives per leaf (1 to 32). Boxes with a NaN or an
/// inverted extent are left out (no ray can hit them). InternalError when Embree fails.
Bvh build_bvh(const std::vector<Box>& boxes, unsigned max_leaf_size = 4);

}  // namespace kiln::render
