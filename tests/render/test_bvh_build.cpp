// The BVH builder of render/accel/bvh_build.h: over random boxes, clustered and degenerate
// ones, in each octant's layout every valid primitive is in exactly one leaf, invalid ones in
// none; every node's box holds its children's and its primitives' boxes; the depth-first
// layout (first child next, second child and skip links) is consistent; leaves respect their
// size and have the same primitives in every layout; depth stays within kMaxBvhDepth; the
// tree is better than no tree, a layout ordered for a ray's octant finds its closest hit
// with fewer box tests than the opposite octant's (box tests counted), and the skip links
// test the same boxes in the same order as a traversal with a stack.
#include "accel/bvh_build.h"

#include <kiln/errors.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>

using namespace kiln;
using namespace kiln::render;

namespace {

bool contains(const Box& outer, const Box& inner) {
  for (int a = 0; a < 3; ++a)
    if (inner.lower[a] < outer.lower[a] || inner.upper[a] > outer.upper[a]) return false;
  return true;
}

std::vector<Box> random_boxes(size_t n, uint32_t seed, float extent) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> position(-10.f, 10.f), size(0.f, extent);
  std::vector<Box> boxes(n);
  for (Box& b : boxes)
    for (int a = 0; a < 3; ++a) {
      b.lower[a] = position(rng);
      b.upper[a] = b.lower[a] + size(rng);
    }
  return boxes;
}

/// Checks every structural property of every layout; returns the depth of the deepest leaf.
unsigned check_structure(const Bvh& bvh, const std::vector<Box>& boxes, unsigned max_leaf, size_t valid) {
  EXPECT_EQ(bvh.nodes.size(), kOctants * bvh.layout_size);
  EXPECT_EQ(bvh.primitives.size(), valid);
  unsigned deepest = 0;
  std::vector<std::pair<uint32_t, uint32_t>> first_layout_leaves;
  for (uint32_t octant = 0; octant < kOctants; ++octant) {
    SCOPED_TRACE("octant " + std::to_string(octant));
    const uint32_t begin = octant * bvh.layout_size, end = begin + bvh.layout_size;
    std::vector<int> seen(boxes.size(), 0);
    std::vector<std::pair<uint32_t, uint32_t>> leaves;
    std::function<void(uint32_t, unsigned)> visit = [&](uint32_t index, unsigned depth) {
      ASSERT_GE(index, begin);
      ASSERT_LT(index, end);
      const BvhNode& node = bvh.nodes[index];
      deepest = std::max(deepest, depth);
      if (node.count) {
        EXPECT_LE(node.count, max_leaf);
        EXPECT_EQ(node.skip, index + 1);
        leaves.push_back({node.first, node.count});
        for (uint32_t k = node.first; k < node.first + node.count; ++k) {
          uint32_t primitive = bvh.primitives[k];
          ++seen[primitive];
          EXPECT_TRUE(contains(node.bounds, boxes[primitive])) << "leaf " << index << " primitive " << primitive;
        }
        return;
      }
      uint32_t first = index + 1, second = node.first;
      EXPECT_EQ(second, bvh.nodes[first].skip) << "the second child follows the first one's subtree";
      EXPECT_EQ(node.skip, bvh.nodes[second].skip);
      EXPECT_TRUE(contains(node.bounds, bvh.nodes[first].bounds));
      EXPECT_TRUE(contains(node.bounds, bvh.nodes[second].bounds));
      visit(first, depth + 1);
      visit(second, depth + 1);
    };
    visit(begin, 1);
    EXPECT_EQ(bvh.nodes[begin].skip, end);
    for (size_t i = 0; i < boxes.size(); ++i) {
      bool ok = boxes[i].lower[0] <= boxes[i].upper[0] && boxes[i].lower[1] <= boxes[i].upper[1] &&
                boxes[i].lower[2] <= boxes[i].upper[2];
      EXPECT_EQ(seen[i], ok ? 1 : 0) << "primitive " << i;
    }
    std::sort(leaves.begin(), leaves.end());
    if (octant == 0) first_layout_leaves = leaves;
    EXPECT_EQ(leaves, first_layout_leaves) << "every layout has the same leaves";
  }
  EXPECT_LE(deepest, kMaxBvhDepth);
  return deepest;
}

/// The distance at which the ray o + t d enters `box` within [0, tmax], or none.
std::optional<float> entry(const Box& box, const float o[3], const float d[3], float tmax) {
  float t0 = 0, t1 = tmax;
  for (int a = 0; a < 3; ++a) {
    float near = (box.lower[a] - o[a]) / d[a], far = (box.upper[a] - o[a]) / d[a];
    t0 = std::max(t0, std::min(near, far));
    t1 = std::min(t1, std::max(near, far));
  }
  return t0 <= t1 ? std::optional(t0) : std::nullopt;
}

/// tmax after the primitives of `leaf` that the ray enters before it (their boxes stand for
/// the primitives, as a closest-hit query's hits shorten the ray).
float shortened(const Bvh& bvh, const BvhNode& leaf, const std::vector<Box>& boxes, const float o[3], const float d[3],
                float tmax) {
  for (uint32_t k = leaf.first; k < leaf.first + leaf.count; ++k)
    tmax = std::min(tmax, entry(boxes[bvh.primitives[k]], o, d, tmax).value_or(tmax));
  return tmax;
}

/// The nodes whose boxes a traversal with a stack tests, in order, for the closest primitive
/// box along o + t d (without `boxes`: every primitive along the ray) in the layout of
/// `octant`: at an inner node entered, push the second child and go on to the first (the
/// same child order as the layout's), pop when a subtree is done.
std::vector<uint32_t> stack_order(const Bvh& bvh, const std::vector<Box>* boxes, const float o[3], const float d[3],
                                  uint32_t octant) {
  std::vector<uint32_t> tested, stack = {octant * bvh.layout_size};
  float tmax = INFINITY;
  while (!stack.empty()) {
    uint32_t index = stack.back();
    stack.pop_back();
    const BvhNode& node = bvh.nodes[index];
    tested.push_back(index);
    if (!entry(node.bounds, o, d, tmax)) continue;
    if (node.count) {
      if (boxes) tmax = shortened(bvh, node, *boxes, o, d, tmax);
    } else {
      stack.push_back(node.first);
      stack.push_back(index + 1);
    }
  }
  return tested;
}

/// The same for the stackless traversal (skip links) that render/accel/bvh_traverse.cpp runs.
std::vector<uint32_t> stackless_order(const Bvh& bvh, const std::vector<Box>* boxes, const float o[3], const float d[3],
                                      uint32_t octant = 0) {
  std::vector<uint32_t> tested;
  float tmax = INFINITY;
  for (uint32_t index = octant * bvh.layout_size; index < (octant + 1) * bvh.layout_size;) {
    const BvhNode& node = bvh.nodes[index];
    tested.push_back(index);
    bool entered = entry(node.bounds, o, d, tmax).has_value();
    if (entered && node.count && boxes) tmax = shortened(bvh, node, *boxes, o, d, tmax);
    index = entered && !node.count ? index + 1 : node.skip;
  }
  return tested;
}

}  // namespace

TEST(BvhBuild, RandomBoxesAtSeveralLeafSizes) {
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(1000), size_t(100000)})
    for (unsigned leaf : {1u, 4u, 32u}) {
      SCOPED_TRACE(std::to_string(n) + " boxes, leaves of " + std::to_string(leaf));
      std::vector<Box> boxes = random_boxes(n, uint32_t(n + leaf), 0.5f);
      Bvh bvh = build_bvh(boxes, leaf);
      check_structure(bvh, boxes, leaf, n);
    }
}

TEST(BvhBuild, ClusteredIdenticalAndFlatBoxes) {
  std::vector<Box> boxes = random_boxes(5000, 3, 0.01f);
  for (size_t i = 0; i < 2000; ++i) boxes[i] = {{1, 1, 1}, {1, 1, 1}};         // identical points
  for (size_t i = 2000; i < 3000; ++i) boxes[i].upper[2] = boxes[i].lower[2];  // flat, like triangles in a plane
  Bvh bvh = build_bvh(boxes, 4);
  check_structure(bvh, boxes, 4, boxes.size());
}

TEST(BvhBuild, InvalidBoxesAreLeftOutAndNoneGiveAnEmptyTree) {
  std::vector<Box> boxes = random_boxes(100, 5, 1.f);
  boxes[10].lower[0] = NAN;
  boxes[20].upper[1] = boxes[20].lower[1] - 1.f;  // inverted
  Bvh bvh = build_bvh(boxes, 4);
  check_structure(bvh, boxes, 4, 98);
  EXPECT_TRUE(build_bvh({}, 4).nodes.empty());
  EXPECT_TRUE(build_bvh({boxes[10]}, 4).nodes.empty());
  EXPECT_THROW(build_bvh(boxes, 0), ValueError);
  EXPECT_THROW(build_bvh(boxes, 33), ValueError);
}

TEST(BvhBuild, ARayTestsFarFewerBoxesThanThereArePrimitives) {
  std::vector<Box> boxes = random_boxes(100000, 9, 0.05f);
  Bvh bvh = build_bvh(boxes, 4);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  size_t total = 0;
  for (int r = 0; r < 100; ++r) {
    float o[3] = {normal(rng), normal(rng), normal(rng)}, d[3] = {normal(rng), normal(rng), normal(rng)};
    total += stackless_order(bvh, nullptr, o, d).size();
  }
  EXPECT_LT(total / 100, boxes.size() / 20) << "a tree should prune most of the scene";
}

TEST(BvhBuild, TheLayoutForARaysOctantFindsItsClosestHitWithFewerBoxTests) {
  std::vector<Box> boxes = random_boxes(100000, 11, 0.3f);  // a ray passes through ~20
  Bvh bvh = build_bvh(boxes, 4);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  size_t ordered = 0, reversed = 0;
  for (int r = 0; r < 200; ++r) {
    float o[3] = {3 * normal(rng), 3 * normal(rng), 3 * normal(rng)}, d[3] = {normal(rng), normal(rng), normal(rng)};
    uint32_t octant = (d[0] < 0) | (d[1] < 0) << 1 | (d[2] < 0) << 2;
    ordered += stackless_order(bvh, &boxes, o, d, octant).size();
    reversed += stackless_order(bvh, &boxes, o, d, kOctants - 1 - octant).size();
  }
  EXPECT_LT(ordered, reversed * 3 / 4) << ordered << " box tests in the ray's octant's layout, " << reversed
                                       << " in the opposite one's";
}

TEST(BvhBuild, SkipLinksTestTheBoxesAStackWouldInTheSameOrder) {
  // Why the Kiln BVH keeps no stack: with children in the same order, a traversal with a
  // stack tests exactly the boxes the skip links lead to, in the same order, and would only
  // add a per-lane stack's memory traffic.
  std::vector<Box> boxes = random_boxes(20000, 13, 0.3f);
  Bvh bvh = build_bvh(boxes, 4);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal;
  for (int r = 0; r < 100; ++r) {
    float o[3] = {3 * normal(rng), 3 * normal(rng), 3 * normal(rng)}, d[3] = {normal(rng), normal(rng), normal(rng)};
    uint32_t octant = (d[0] < 0) | (d[1] < 0) << 1 | (d[2] < 0) << 2;
    ASSERT_EQ(stackless_order(bvh, &boxes, o, d, octant), stack_order(bvh, &boxes, o, d, octant)) << "ray " << r;
  }
}
