// A BVH (bvh_build.h) as Kiln arrays, and its traversal written as Kiln code: one symbolic
// loop per ray that walks the depth-first node order of the layout for the ray's octant
// without a stack (a node's box missed or a leaf done: jump to the end of its subtree; an
// inner node's box hit: go on to its first child, the nearer one), testing one node's box
// per iteration and the primitives of a leaf it enters in a loop of their own. What a primitive is, the
// loop does not know: a leaf test says whether the ray hits the primitive in a leaf slot.
// Private to render/accel/.
#pragma once

#include "accel/bvh_build.h"

#include <kiln/render/ray.h>

#include <functional>

namespace kiln::render {

/// A BVH's nodes as arrays on the default device, one per field (in node order: all its
/// layouts).
struct BvhArrays {
  Array3f lower, upper;
  UInt32 first, count, skip;
  uint32_t layout_size = 0;

  explicit BvhArrays(const Bvh& bvh);
};

/// A ray as the traversal reads it, derived once before the loop.
struct TraversalRay {
  Array3f o, d;       ///< detached: traversal carries no derivatives
  Array3f inverse_d;  ///< 1 / d, with ±1e30 for a zero component (keeps 0 · inf out of the box test)
  Float maxt;
  UInt32 octant;  ///< the octant of d (bvh_build.h's numbering)
  Bool valid;     ///< accel.h's rule: finite, bounded components, d ≠ 0, maxt >= 0 (not NaN)

  explicit TraversalRay(const Ray3f& ray);
};

/// Whether a ray hits the primitive in a leaf slot, and where: t in [0, tmax], the
/// primitive's (u, v).
struct PrimitiveHit {
  Bool found;
  Float t, u, v;
};

/// The primitive test of one kind of primitive: (leaf slot, tmax, active) → hit.
using LeafTest = std::function<PrimitiveHit(const UInt32& slot, const Float& tmax, const Bool& active)>;

/// The closest hit found by a traversal: the leaf slot (~0u when none), t (`maxt` when
/// none), u, v.
struct TraversalHit {
  UInt32 slot;
  Float t, u, v;
};

/// The closest primitive hit by each active, valid ray within [0, maxt]; `name` names the
/// loop in kernel listings.
TraversalHit closest_hit(const BvhArrays& bvh, const TraversalRay& ray, const Float& maxt, const Bool& active,
                         const LeafTest& leaf_test, const char* name);

/// Whether each active, valid ray hits any primitive within [0, ray.maxt]: the traversal
/// ends at the first hit.
Bool any_hit(const BvhArrays& bvh, const TraversalRay& ray, const Bool& active, const LeafTest& leaf_test,
             const char* name);

}  // namespace kiln::render
