// The BVH builder of render/accel/bvh_build.h: over random boxes, clustered and degenerate
// ones, every valid primitive is in exactly one leaf, invalid ones in none; every node's box
// holds its children's and its primitives' boxes; the depth-first layout (left child next,
// right child and skip links) is consistent; leaves respect their size; depth stays within
// kMaxBvhDepth; and the tree is better than no tree (a ray's box tests, counted).
#include "accel/bvh_build.h"

#include <kiln/errors.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
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

/// Checks every structural property; returns the depth of the deepest leaf.
unsigned check_structure(const Bvh& bvh, const std::vector<Box>& boxes, unsigned max_leaf, size_t valid) {
  std::vector<int> seen(boxes.size(), 0);
  unsigned deepest = 0;
  std::function<void(uint32_t, unsigned)> visit = [&](uint32_t index, unsigned depth) {
    ASSERT_LT(index, bvh.nodes.size());
    const BvhNode& node = bvh.nodes[index];
    deepest = std::max(deepest, depth);
    if (node.count) {
      EXPECT_LE(node.count, max_leaf);
      EXPECT_EQ(node.skip, index + 1);
      for (uint32_t k = node.first; k < node.first + node.count; ++k) {
        uint32_t primitive = bvh.primitives[k];
        ++seen[primitive];
        EXPECT_TRUE(contains(node.bounds, boxes[primitive])) << "leaf " << index << " primitive " << primitive;
      }
      return;
    }
    uint32_t left = index + 1, right = node.first;
    EXPECT_EQ(right, bvh.nodes[left].skip) << "the right child follows the left subtree";
    EXPECT_EQ(node.skip, bvh.nodes[right].skip);
    EXPECT_TRUE(contains(node.bounds, bvh.nodes[left].bounds));
    EXPECT_TRUE(contains(node.bounds, bvh.nodes[right].bounds));
    visit(left, depth + 1);
    visit(right, depth + 1);
  };
  visit(0, 1);
  EXPECT_EQ(bvh.nodes[0].skip, bvh.nodes.size());
  EXPECT_EQ(bvh.primitives.size(), valid);
  for (size_t i = 0; i < boxes.size(); ++i) {
    bool ok = boxes[i].lower[0] <= boxes[i].upper[0] && boxes[i].lower[1] <= boxes[i].upper[1] &&
              boxes[i].lower[2] <= boxes[i].upper[2];
    EXPECT_EQ(seen[i], ok ? 1 : 0) << "primitive " << i;
  }
  EXPECT_LE(deepest, kMaxBvhDepth);
  return deepest;
}

/// Box tests of a stackless traversal (skip links) for the ray o + t d against every box.
size_t box_tests(const Bvh& bvh, const float o[3], const float d[3]) {
  size_t tests = 0;
  for (uint32_t index = 0; index < bvh.nodes.size();) {
    const BvhNode& node = bvh.nodes[index];
    ++tests;
    float t0 = 0, t1 = INFINITY;
    for (int a = 0; a < 3; ++a) {
      float near = (node.bounds.lower[a] - o[a]) / d[a], far = (node.bounds.upper[a] - o[a]) / d[a];
      t0 = std::max(t0, std::min(near, far));
      t1 = std::min(t1, std::max(near, far));
    }
    index = t0 <= t1 && !node.count ? index + 1 : node.skip;
  }
  return tests;
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
    total += box_tests(bvh, o, d);
  }
  EXPECT_LT(total / 100, boxes.size() / 20) << "a tree should prune most of the scene";
}
