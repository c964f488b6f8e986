// Building the BVH of bvh_build.h: Embree's builder calls back to make Kiln's temporary
// nodes (in Embree's thread-local memory, freed with the builder's BVH object), which are
// then flattened depth first.
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

void flatten(const BuildNode& node, const Box& bounds, Bvh& bvh) {
  uint32_t index = uint32_t(bvh.nodes.size());
  bvh.nodes.push_back({bounds});
  if (node.leaf) {
    bvh.nodes[index].first = uint32_t(bvh.primitives.size());
    bvh.nodes[index].count = node.count;
    bvh.primitives.insert(bvh.primitives.end(), node.primitives, node.primitives + node.count);
  } else {
    flatten(*node.children[0], node.bounds[0], bvh);
    bvh.nodes[index].first = uint32_t(bvh.nodes.size());
    flatten(*node.children[1], node.bounds[1], bvh);
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
  if (boxes.size() > std::numeric_limits<uint32_t>::max())
    throw ValueError("kiln.render: a BVH over more than 2^32 - 1 primitives");
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
  bvh.nodes.reserve(2 * primitives.size());
  bvh.primitives.reserve(primitives.size());
  flatten(*static_cast<const BuildNode*>(root), scene, bvh);
  return bvh;
}

}  // namespace kiln::render
