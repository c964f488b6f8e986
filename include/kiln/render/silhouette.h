// Silhouettes: the curves along which a shape, seen from a point, ends in front of what
// lies behind it. The projective integrators sample them to add the derivatives an image
// has because silhouettes move (visibility terms), which no pixel's interior derivative
// contains.
//
// What an implementation guarantees:
// - sample() is a point of the silhouette seen from its lane's viewpoint, with its density
//   per unit length of silhouette (world space) over the whole silhouette, every point
//   reachable (pdf > 0 where valid). A Silhouette prepared on the host for one viewpoint
//   (Shape::silhouette()) must be given that viewpoint.
// - `p` moves with the shape: its derivatives are those of the material point (a mesh edge's
//   point at a fixed fraction between its vertices, a point at fixed local coordinates of a
//   placed shape). Everything else is detached.
// - `normal` is unit, perpendicular to the view ray through p and to the silhouette, and
//   points away from the shape (towards what is seen past it); `tangent` is unit, along
//   the silhouette. At a crease, `normal` points from one side of it to the other.
#pragma once

#include <kiln/construct.h>
#include <kiln/render/common.h>

#include <array>

namespace kiln::render {

struct SilhouetteSample {
  Array3f p;        ///< on the silhouette, moving with the shape
  Array3f normal;   ///< away from the shape, perpendicular to the view ray and the silhouette
  Array3f tangent;  ///< along the silhouette
  Float pdf;        ///< per unit length of silhouette
  Bool valid;
  /// Where shading jumps across a mesh edge the view ray meets head on (a crease), not
  /// where it grazes the surface (a fold, an open boundary): the unit normals of the planes
  /// of its triangles inside and outside, in which what is seen either side must lie.
  Bool crease = Bool(false);
  Array3f inside_plane = Array3f(0.0f, 0.0f, 0.0f), outside_plane = Array3f(0.0f, 0.0f, 0.0f);
};

/// A host point (a viewpoint) as opaque kernel parameters: a new one compiles nothing.
inline Array3f opaque_point(const std::array<float, 3>& p) {
  return Array3f(opaque<Float>(p[0]), opaque<Float>(p[1]), opaque<Float>(p[2]));
}

/// A shape's silhouette seen from one viewpoint (host-side precomputation done).
class Silhouette {
 public:
  virtual ~Silhouette() = default;

  /// How a render shares its samples among shapes: about the silhouette's length in the
  /// image (its length over its distance from the viewpoint) for one prepared on the host,
  /// the length sampled for one that serves any viewpoint.
  float weight() const { return weight_; }
  /// A point of the silhouette seen from `viewpoint` (one per lane, or one for all) for each
  /// lane of `sample` (uniform in [0, 1)²).
  virtual SilhouetteSample sample(const Array2f& sample, const Array3f& viewpoint) const = 0;

 protected:
  float weight_ = 0.0f;
};

}  // namespace kiln::render
