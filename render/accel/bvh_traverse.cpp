// The stackless BVH traversal of bvh_traverse.h. Each iteration of a ray's loop does one of
// two things: with primitives of a leaf still to test, test the next one; otherwise test
// the current node's box against the closest hit so far, then enter the left child (inner
// node hit), take on the leaf's primitives and move past it (leaf hit), or skip the subtree
// (missed). Lanes of a packet (CPU) or a warp (GPU) run both steps and keep the one that
// applies, so an iteration costs one box test and one primitive test.
#include "accel/bvh_traverse.h"

#include "accel/accel_shapes.h"

#include <kiln/autodiff.h>
#include <kiln/control.h>
#include <kiln/elementwise.h>

#include <limits>

namespace kiln::render {
namespace {

/// 1 + 2γ(3), γ(n) = nε / (1 - nε): widening a box's far distance by this makes the slab
/// test conservative under float rounding (Ize, "Robust BVH ray traversal", 2013).
constexpr float kFarWidening = 1.0f + 2.0f * (3.0f * 0x1p-24f) / (1.0f - 3.0f * 0x1p-24f);

template <typename T> std::vector<T> field(const Bvh& bvh, T (*get)(const BvhNode&)) {
  std::vector<T> values;
  values.reserve(bvh.nodes.size());
  for (const BvhNode& node : bvh.nodes) values.push_back(get(node));
  return values;
}

template <int axis> float lower_of(const BvhNode& node) { return node.bounds.lower[axis]; }
template <int axis> float upper_of(const BvhNode& node) { return node.bounds.upper[axis]; }

/// Whether the ray enters `node`'s box within [0, tmax].
Bool hits_box(const BvhArrays& bvh, const TraversalRay& ray, const UInt32& node, const Float& tmax,
              const Bool& active) {
  Float near(0.0f), far = tmax;
  for (size_t axis = 0; axis < 3; ++axis) {
    Float t0 = (gather(bvh.lower[axis], node, active) - ray.o[axis]) * ray.inverse_d[axis];
    Float t1 = (gather(bvh.upper[axis], node, active) - ray.o[axis]) * ray.inverse_d[axis];
    near = max(near, min(t0, t1));
    far = min(far, max(t0, t1) * kFarWidening);
  }
  return active & (near <= far);
}

/// The traversal loop: the closest hit, or with `first_hit` the first one found.
TraversalHit traverse(const BvhArrays& bvh, const TraversalRay& ray, const Float& maxt, const Bool& active,
                      const LeafTest& leaf_test, bool first_hit, const char* name) {
  // The layout size is a launch parameter: another scene's BVH reuses the compiled kernel.
  const UInt32 layout_size = opaque<UInt32>(bvh.layout_size), no_slot(~0u);
  const UInt32 node_end = (ray.octant + 1u) * layout_size;
  UInt32 start = select(active & ray.valid, ray.octant * layout_size, node_end);
  UInt32 none(0u);
  auto [node, cursor, end, t, slot, u, v] = while_loop(
      std::tuple(start, none, none, maxt, no_slot, Float(0.0f), Float(0.0f)),
      [node_end, no_slot, first_hit](const UInt32& node, const UInt32& cursor, const UInt32& end, const Float&,
                                     const UInt32& slot, const Float&, const Float&) {
        Bool running = (cursor < end) | (node < node_end);
        return first_hit ? running & (slot == no_slot) : running;
      },
      [bvh, ray, leaf_test](const UInt32& node, const UInt32& cursor, const UInt32& end, const Float& t,
                            const UInt32& slot, const Float& u, const Float& v) {
        // A primitive of the current leaf ...
        Bool testing = cursor < end;
        PrimitiveHit hit = leaf_test(cursor, t, testing);
        Bool closer = testing & hit.found;
        // ... or the current node's box.
        Bool visiting = !testing;
        UInt32 count = gather(bvh.count, node, visiting);
        UInt32 first = gather(bvh.first, node, visiting);
        Bool entered = hits_box(bvh, ray, node, t, visiting);
        Bool enter_leaf = entered & (count > 0u);
        UInt32 next_node = select(entered & (count == 0u), node + 1u, gather(bvh.skip, node, visiting));
        return std::tuple(select(visiting, next_node, node),
                          select(enter_leaf, first, select(testing, cursor + 1u, cursor)),
                          select(enter_leaf, first + count, end), select(closer, hit.t, t),
                          select(closer, cursor, slot), select(closer, hit.u, u), select(closer, hit.v, v));
      },
      // Always in the kernel: one launch per node visited would be absurd, and the ray's
      // derived values are read from the enclosing scope, per lane.
      ControlMode::Symbolic, name);
  return {slot, t, u, v};
}
}  // namespace

BvhArrays::BvhArrays(const Bvh& bvh)
    : lower(Float::from(field(bvh, lower_of<0>)), Float::from(field(bvh, lower_of<1>)),
            Float::from(field(bvh, lower_of<2>))),
      upper(Float::from(field(bvh, upper_of<0>)), Float::from(field(bvh, upper_of<1>)),
            Float::from(field(bvh, upper_of<2>))),
      first(UInt32::from(field<uint32_t>(bvh, [](const BvhNode& node) { return node.first; }))),
      count(UInt32::from(field<uint32_t>(bvh, [](const BvhNode& node) { return node.count; }))),
      skip(UInt32::from(field<uint32_t>(bvh, [](const BvhNode& node) { return node.skip; }))),
      layout_size(bvh.layout_size) {}

TraversalRay::TraversalRay(const Ray3f& ray) : o(detach(ray.o)), d(detach(ray.d)), maxt(detach(ray.maxt)) {
  valid = (maxt >= 0.0f) & ((d.x != 0.0f) | (d.y != 0.0f) | (d.z != 0.0f));
  octant = select(d.x < 0.0f, UInt32(1u), UInt32(0u)) | select(d.y < 0.0f, UInt32(2u), UInt32(0u)) |
           select(d.z < 0.0f, UInt32(4u), UInt32(0u));
  for (size_t axis = 0; axis < 3; ++axis) {
    valid = valid & (abs(o[axis]) <= kLargestComponent) & (abs(d[axis]) <= kLargestComponent);
    inverse_d[axis] = select(d[axis] == 0.0f, copysign(Float(1e30f), d[axis]), 1.0f / d[axis]);
  }
}

TraversalHit closest_hit(const BvhArrays& bvh, const TraversalRay& ray, const Float& maxt, const Bool& active,
                         const LeafTest& leaf_test, const char* name) {
  return traverse(bvh, ray, maxt, active, leaf_test, /*first_hit=*/false, name);
}

Bool any_hit(const BvhArrays& bvh, const TraversalRay& ray, const Bool& active, const LeafTest& leaf_test,
             const char* name) {
  return traverse(bvh, ray, ray.maxt, active, leaf_test, /*first_hit=*/true, name).slot != ~0u;
}

}  // namespace kiln::render
