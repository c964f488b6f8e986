// A bounding hierarchy over a mesh's edges that draws, for a viewpoint per lane, only among
// edges that can be on the silhouette seen from it: a subtree whose triangles all face the
// viewpoint, or all face away, holds no silhouette edge and is never entered. The indirect
// visibility term picks edges this way from each shading point. On a sphere of about 3,300
// edges seen from four points (tests/render/test_mesh_edge_tree.cpp), 9-30% of the draws
// are silhouette edges, against 1.4-1.9% drawn by length among all edges.
//
// What it guarantees:
// - sample() returns an edge and the probability it was drawn with, the product of the
//   choices down the tree, each child not culled in proportion to its edges' length: never
//   less than drawing by length among all edges gives it. 0 where the descent found every
//   child of a node culled (the lane's sample is then invalid: conservative bounds keep
//   nodes near the silhouette whose edges turn out not to be on it, 60-90% of the draws on
//   that sphere). A leaf is tested exactly (its two triangles face the viewpoint on
//   opposite sides).
// - Culling is conservative: an edge whose two triangles face the viewpoint on opposite
//   sides is never culled, nor is an edge marked `always` (an open boundary, a crease, an
//   edge whose triangles wind inconsistently), whatever the viewpoint.
// - The tree's depth is fixed by the capacity, so a mesh whose edge count changes within it
//   reuses its kernels.
#pragma once

#include <kiln/render/common.h>

#include <array>
#include <utility>
#include <vector>

namespace kiln::render {

class MeshEdgeTree {
 public:
  /// An edge to draw: its end points, the unit normals of its two triangles as they wind
  /// (facing the same side of the surface), and whether it may never be culled.
  struct Edge {
    std::array<double, 3> a, b, normal_inside, normal_outside;
    bool always = false;
  };

  /// The tree over `edges` (ordered in it along a space-filling curve: edges near one
  /// another are neighbours, and get nearby sample numbers), for up to `capacity` edges.
  MeshEdgeTree(const std::vector<Edge>& edges, size_t capacity);

  /// An edge index for each lane of `sample` (uniform in [0, 1)) seen from `viewpoint`, and
  /// its probability.
  std::pair<UInt32, Float> sample(const Float& sample, const Array3f& viewpoint) const;

 private:
  uint32_t depth_ = 0;  ///< levels above the leaves, one leaf per edge slot
  size_t edge_count_ = 0;
  UInt32 edge_of_leaf_;                         ///< the index in `edges` of each leaf's edge
  Float normal_inside_[3], normal_outside_[3];  ///< each leaf's triangles' normals
  /// Per node (heap order: node i's children are 2i + 1 and 2i + 2): the bounding sphere of
  /// its edges, the cone of its triangles' normals (axis, half-angle; π where it may not be
  /// culled) as its sine and cosine, and its edges' total length.
  Float center_[3], radius_, axis_[3], sin_angle_, cos_angle_, length_;
};

}  // namespace kiln::render
