// The stackless BVH traversal of bvh_traverse.h. Each iteration of a ray's loop tests the
// current node's box against the closest hit so far, then enters the first child (an inner
// node hit), tests the leaf's primitives in a nested loop and moves past it (a leaf hit), or
// skips the subtree (missed). The nested loop runs only while some lane of a packet (CPU) or
// warp (GPU) has primitives to test, so box tests and primitive tests are not paid together
// on every iteration (measured: 1.4 to 2 times the rays per second of a single loop that did
// one box or one primitive per iteration, bench/accel_bench.py).
#include "accel/bvh_traverse.h"

#include "accel/accel_shapes.h"

#include <kiln/autodiff.h>
#include <kiln/control.h>
#include <kiln/elementwise.h>

#include <limits>
#include <string>

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

/// The primitives [first, end) of a leaf the ray entered: the closest hit among them
/// closer than `t` (with `first_hit`: the first one found), or the hit given.
std::tuple<Float, UInt32, Float, Float> test_leaf(const LeafTest& leaf_test, const UInt32& first, const UInt32& end,
                                                  const Float& t, const UInt32& slot, const Float& u, const Float& v,
                                                  bool first_hit, const char* name) {
  const UInt32 no_slot(~0u);
  auto [cursor, leaf_end, t_out, slot_out, u_out, v_out] = while_loop(
      std::tuple(first, end, t, slot, u, v),
      [no_slot, first_hit](const UInt32& cursor, const UInt32& end, const Float&, const UInt32& slot, const Float&,
                           const Float&) {
        Bool running = cursor < end;
        return first_hit ? running & (slot == no_slot) : running;
      },
      [leaf_test](const UInt32& cursor, const UInt32& end, const Float& t, const UInt32& slot, const Float& u,
                  const Float& v) {
        PrimitiveHit hit = leaf_test(cursor, t, Bool(true));
        return std::tuple(cursor + 1u, end, select(hit.found, hit.t, t), select(hit.found, cursor, slot),
                          select(hit.found, hit.u, u), select(hit.found, hit.v, v));
      },
      ControlMode::Symbolic, name);
  return {t_out, slot_out, u_out, v_out};
}

/// The traversal loop: the closest hit, or with `first_hit` the first one found.
TraversalHit traverse(const BvhArrays& bvh, const TraversalRay& ray, const Float& maxt, const Bool& active,
                      const LeafTest& leaf_test, bool first_hit, const char* name) {
  // The layout size is a launch parameter: another scene's BVH reuses the compiled kernel.
  const UInt32 layout_size = opaque<UInt32>(bvh.layout_size), no_slot(~0u);
  const UInt32 node_end = (ray.octant + 1u) * layout_size;
  UInt32 start = select(active & ray.valid, ray.octant * layout_size, node_end);
  std::string leaf_name = std::string(name) + "_leaf";
  auto [node, t, slot, u, v] = while_loop(
      std::tuple(start, maxt, no_slot, Float(0.0f), Float(0.0f)),
      [node_end, no_slot, first_hit](const UInt32& node, const Float&, const UInt32& slot, const Float&, const Float&) {
        Bool running = node < node_end;
        return first_hit ? running & (slot == no_slot) : running;
      },
      [bvh, ray, leaf_test, first_hit, leaf_name](const UInt32& node, const Float& t, const UInt32& slot,
                                                  const Float& u, const Float& v) {
        UInt32 count = gather(bvh.count, node), first = gather(bvh.first, node);
        Bool entered = hits_box(bvh, ray, node, t, Bool(true));
        Bool enter_leaf = entered & (count > 0u);
        // A leaf entered: its primitives, in a loop of their own.
        auto [t_leaf, slot_leaf, u_leaf, v_leaf] = test_leaf(leaf_test, first, select(enter_leaf, first + count, first),
                                                             t, slot, u, v, first_hit, leaf_name.c_str());
        UInt32 next_node = select(entered & (count == 0u), node + 1u, gather(bvh.skip, node));
        return std::tuple(next_node, t_leaf, slot_leaf, u_leaf, v_leaf);
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
