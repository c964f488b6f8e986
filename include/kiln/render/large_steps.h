// The "large steps" parameterization of vertex positions (Nicolet et al. 2021, "Large Steps
// in Inverse Rendering of Geometry"; Mitsuba 3's mi.ad.LargeSteps): an optimizer moves
// u = (I + λL) v instead of the positions v, where L is the mesh's combinatorial Laplacian,
// so a gradient step on u moves v smoothly.
//
// What an implementation guarantees:
// - Coincident vertices (a seam of texture coordinates or face normals) are fused into one
//   unknown, so they cannot drift apart; from_differential() gives every copy its value.
// - to_differential() is a sparse product; from_differential() solves (I + λL) v = u by
//   conjugate gradients in Kiln arrays (relative residual below 1e-6, warm-started from the
//   previous solution), on whatever device Kiln runs, with no factorization to keep. Both are
//   differentiable: the solve's derivative is the same solve (the matrix is symmetric).
#pragma once

#include <kiln/vector.h>

#include <cstdint>
#include <memory>

namespace kiln::render {

class LargeSteps {
 public:
  /// The system of the mesh with flat positions `positions` (3 per vertex) and `faces` (3
  /// per triangle); ValueError for sizes that are not whole vertices and triangles, an index
  /// past the vertices, or a negative or non-finite λ.
  LargeSteps(const Float& positions, const UInt32& faces, float lambda = 19.0f);

  /// u = (I + λL) v for flat positions v (3 per original vertex), flat (3 per fused vertex).
  Float to_differential(const Float& positions) const;
  /// v = (I + λL)⁻¹ u, flat positions of the original vertices.
  Float from_differential(const Float& differential) const;

  size_t vertex_count() const { return vertex_count_; }  ///< original vertices
  size_t unique_count() const { return unique_count_; }  ///< after fusing coincident ones

  /// (I + λL) x for fused positions x.
  Array3f apply(const Array3f& x) const;
  /// x with (I + λL) x = b (conjugate gradients from `start`).
  Array3f solve(const Array3f& b, const Array3f& start) const;

 private:
  size_t vertex_count_ = 0, unique_count_ = 0;
  float lambda_;
  UInt32 first_copy_;                       ///< per fused vertex: an original vertex at its place
  UInt32 fused_;                            ///< per original vertex: its fused vertex
  UInt32 edge_from_, edge_to_;              ///< each edge of the fused mesh, both ways
  Float degree_;                            ///< per fused vertex: its neighbours
  std::shared_ptr<Array3f> last_solution_;  ///< the warm start of the next solve
};

}  // namespace kiln::render
