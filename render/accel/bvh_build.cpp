// Building the BVH of bvh_build.h: Embree's builder calls back to make Kiln's temporary
// nodes (in Embree's thread-local memory, freed with the builder's BVH object), which are
// then flattened depth first, once per octant of ray directions.
#include "accel/bvh_build.h"

#include "accel/embree_device.h"

#include <embree3/rtcore_builder.h>
#include <kiln/errors.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace kiln::render {
namespace {

/// The builder's nodes: two children with their boxes, or a leaf's primitive indices.
struct BuildNode {
  bool leaf = false;
  Box bounds[2] = {};
  BuildNode* children[2] = {};
  uint32_t count = 0;
  uint32_t* primitives = nullptr;
  uint32_t first_slot = 0;  ///< a leaf's place in Bvh::primitives, set by the first layout
};

void* create_node(RTCThreadLocalAllocator allocator, unsigned int child_count, void*) {
  if (child_count != 2) return nullptr;  // the builder is asked for a binary tree
  return new (rtcThreadLocalAlloc(allocator, sizeof(BuildNode), 16)) BuildNode();
}

void set_children(void* node, void** children, unsigned int child_count, void*) {
  for (unsigned k = 0; k < child_count && k < 2; ++k)
    static_cast<BuildNode*>(node)->children[k] = static_cast<BuildNode*>(children[k]);
}

void set_bounds(void* node, const RTCBounds** bounds, unsigned int child_count, void*) {
  for (unsigned k = 0; k < child_count && k < 2; ++k)
    static_cast<BuildNode*>(node)->bounds[k] = {{bounds[k]->lower_x, bounds[k]->lower_y, bounds[k]->lower_z},
                                                {bounds[k]->upper_x, bounds[k]->upper_y, bounds[k]->upper_z}};
}

void* create_leaf(RTCThreadLocalAllocator allocator, const RTCBuildPrimitive* primitives, size_t count, void*) {
  auto* leaf = new (rtcThreadLocalAlloc(allocator, sizeof(BuildNode), 16)) BuildNode();
  leaf->leaf = true;
  leaf->count = uint32_t(count);
  leaf->primitives = static_cast<uint32_t*>(rtcThreadLocalAlloc(allocator, sizeof(uint32_t) * count, 4));
  for (size_t i = 0; i < count; ++i) leaf->primitives[i] = primitives[i].primID;
  return leaf;
}

/// Whether rays in `octant` should visit child 1 before child 0: along the axis on which the
/// children's centers lie furthest apart, child 1 comes first for such rays.
bool second_child_first(const BuildNode& node, unsigned octant) {
  int axis = 0;
  float widest = -1.0f, separation = 0.0f;
  for (int a = 0; a < 3; ++a) {
    float difference =
        (node.bounds[1].lower[a] + node.bounds[1].upper[a]) - (node.bounds[0].lower[a] + node.bounds[0].upper[a]);
    if (std::fabs(difference) > widest) axis = a, widest = std::fabs(difference), separation = difference;
  }
  bool negative = (octant >> axis) & 1;
  return negative ? separation > 0 : separation < 0;
}

/// Appends `node`'s subtree in depth-first order for rays in `octant`. The first layout
/// places the leaves' primitives; later ones reuse their slots.
void flatten(BuildNode& node, const Box& bounds, unsigned octant, Bvh& bvh) {
  uint32_t index = uint32_t(bvh.nodes.size());
  bvh.nodes.push_back({bounds});
  if (node.leaf) {
    if (octant == 0) {
      node.first_slot = uint32_t(bvh.primitives.size());
      bvh.primitives.insert(bvh.primitives.end(), node.primitives, node.primitives + node.count);
    }
    bvh.nodes[index].first = node.first_slot;
    bvh.nodes[index].count = node.count;
  } else {
    int first = second_child_first(node, octant) ? 1 : 0;
    flatten(*node.children[first], node.bounds[first], octant, bvh);
    bvh.nodes[index].first = uint32_t(bvh.nodes.size());
    flatten(*node.children[1 - first], node.bounds[1 - first], octant, bvh);
  }
  bvh.nodes[index].skip = uint32_t(bvh.nodes.size());
}

bool valid(const Box& box) {
  for (int a = 0; a < 3; ++a)
    if (!(box.lower[a] <= box.upper[a])) return false;  // NaN or inverted
  return true;
}

struct ReleaseBvh {
  void operator()(RTCBVH bvh) const { rtcReleaseBVH(bvh); }
};

}  // namespace

Bvh build_bvh(const std::vector<Box>& boxes, unsigned max_leaf_size) {
  if (max_leaf_size < 1 || max_leaf_size > RTC_BUILD_MAX_PRIMITIVES_PER_LEAF)
    throw ValueError("kiln.render: a BVH leaf holds 1 to 32 primitives, not " + std::to_string(max_leaf_size));
  if (boxes.size() > kMaxBvhPrimitives)
    throw ValueError("kiln.render: a BVH over more than 2^28 primitives (its " + std::to_string(kOctants) +
                     " layouts' node indices are 32-bit)");
  std::vector<RTCBuildPrimitive> primitives;
  Box scene = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Box& b = boxes[i];
    if (!valid(b)) continue;
    primitives.push_back({b.lower[0], b.lower[1], b.lower[2], 0, b.upper[0], b.upper[1], b.upper[2], uint32_t(i)});
    for (int a = 0; a < 3; ++a) {
      scene.lower[a] = std::min(scene.lower[a], b.lower[a]);
      scene.upper[a] = std::max(scene.upper[a], b.upper[a]);
    }
  }
  Bvh bvh;
  if (primitives.empty()) return bvh;
  std::unique_ptr<RTCBVHTy, ReleaseBvh> handle(rtcNewBVH(embree_device()));
  throw_on_embree_error("rtcNewBVH");
  RTCBuildArguments arguments = rtcDefaultBuildArguments();
  arguments.buildQuality = RTC_BUILD_QUALITY_MEDIUM;
  arguments.maxBranchingFactor = 2;
  arguments.maxDepth = kMaxBvhDepth;
  arguments.maxLeafSize = max_leaf_size;
  arguments.bvh = handle.get();
  arguments.primitives = primitives.data();
  arguments.primitiveCount = primitives.size();
  arguments.primitiveArrayCapacity = primitives.size();
  arguments.createNode = create_node;
  arguments.setNodeChildren = set_children;
  arguments.setNodeBounds = set_bounds;
  arguments.createLeaf = create_leaf;
  void* root = rtcBuildBVH(&arguments);
  throw_on_embree_error("rtcBuildBVH");
  if (!root) throw InternalError("kiln.render: Embree's BVH builder returned no tree");
  bvh.nodes.reserve(kOctants * 2 * primitives.size());
  bvh.primitives.reserve(primitives.size());
  for (unsigned octant = 0; octant < kOctants; ++octant) flatten(*static_cast<BuildNode*>(root), scene, octant, bvh);
  bvh.layout_size = uint32_t(bvh.nodes.size() / kOctants);
  return bvh;
}

}  // namespace kiln::render
