// The mesh edge tree (render/shapes/mesh_edge_tree.h) on a latitude-longitude sphere seen
// from points around it: each edge is drawn as often as the probability it returns says,
// every silhouette edge can be drawn, every edge drawn is one, and there are several times
// as many such draws as drawing by length among all edges gives. From inside the sphere
// nothing is a silhouette and every draw has probability 0.
#include "shapes/host_vector.h"
#include "shapes/mesh_edge_tree.h"

#include <gtest/gtest.h>

#include <kiln/construct.h>

#include <cmath>
#include <map>

using namespace kiln;
using namespace kiln::render;

namespace {

using host::cross, host::dot, host::unit, host::Vec;

struct Sphere {
  std::vector<Vec> points;
  std::vector<MeshEdgeTree::Edge> edges;
  std::vector<bool> folded;  ///< per edge, for the viewpoint last given to silhouette()

  /// A closed sphere of `rings` × `segments` quads split in two, wound outwards.
  Sphere(int rings, int segments) {
    for (int i = 0; i <= rings; ++i)
      for (int j = 0; j < segments; ++j) {
        double theta = M_PI * i / rings, phi = 2 * M_PI * j / segments;
        points.push_back({std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)});
      }
    auto at = [&](int i, int j) { return uint32_t(i * segments + (j % segments)); };
    std::vector<std::array<uint32_t, 3>> faces;
    for (int i = 0; i < rings; ++i)
      for (int j = 0; j < segments; ++j) {
        if (i > 0) faces.push_back({at(i, j), at(i + 1, j), at(i, j + 1)});
        if (i < rings - 1) faces.push_back({at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)});
      }
    // The edges between two faces (the poles' degenerate edges have one face each: left out).
    std::map<std::pair<uint32_t, uint32_t>, std::vector<Vec>> sides;
    for (const auto& f : faces) {
      Vec n = unit(cross(host::minus(points[f[1]], points[f[0]]), host::minus(points[f[2]], points[f[0]])));
      for (int k = 0; k < 3; ++k) {
        uint32_t a = f[k], b = f[(k + 1) % 3];
        sides[{std::min(a, b), std::max(a, b)}].push_back(n);
      }
    }
    for (const auto& [edge, normals] : sides)
      if (normals.size() == 2 && points[edge.first] != points[edge.second])
        edges.push_back({points[edge.first], points[edge.second], normals[0], normals[1], false});
  }

  /// Which edges' triangles face `viewpoint` on opposite sides.
  void silhouette(const Vec& viewpoint) {
    folded.clear();
    for (const auto& e : edges) {
      Vec to = host::minus(viewpoint, e.a);
      folded.push_back((dot(e.normal_inside, to) > 0) != (dot(e.normal_outside, to) > 0));
    }
  }
};

/// Draws `count` stratified samples seen from `viewpoint`: per edge, how often it was drawn
/// and the probability it came with.
std::map<uint32_t, std::pair<double, double>> draws(const MeshEdgeTree& tree, const Vec& viewpoint, uint32_t count) {
  Float u = (cast<float>(arange<UInt32>(count)) + 0.5f) * (1.0f / float(count));
  Array3f at(full<Float>(float(viewpoint[0]), count), full<Float>(float(viewpoint[1]), count),
             full<Float>(float(viewpoint[2]), count));
  auto [edge, probability] = tree.sample(u, at);
  std::vector<uint32_t> edges = edge.to_vector();
  std::vector<float> probabilities = probability.to_vector();
  std::map<uint32_t, std::pair<double, double>> result;
  for (uint32_t i = 0; i < count; ++i) {
    auto& [frequency, p] = result[edges[i]];
    frequency += 1.0 / count;
    if (p != 0.0) EXPECT_FLOAT_EQ(float(p), probabilities[i]) << "edge " << edges[i];
    p = probabilities[i];
  }
  return result;
}

TEST(MeshEdgeTree, DrawsSilhouetteEdgesWithTheProbabilitiesItReturns) {
  Sphere sphere(24, 48);
  MeshEdgeTree tree(sphere.edges, sphere.edges.size() + 100);
  for (const Vec& viewpoint : {Vec{0, 0, 3}, Vec{2.5, -1, 0.3}, Vec{0.2, 1.5, -1.2}, Vec{40, 3, -7}}) {
    sphere.silhouette(viewpoint);
    constexpr uint32_t count = 1 << 20;
    auto drawn = draws(tree, viewpoint, count);
    double total = 0, on_silhouette = 0, silhouette_length = 0, length = 0, dead = 0;
    for (const auto& [edge, frequency_p] : drawn) {
      auto [frequency, p] = frequency_p;
      if (p == 0.0) {  // the descent found no edge (every child culled below a node kept)
        dead += frequency;
        continue;
      }
      total += p;
      if (sphere.folded[edge]) on_silhouette += frequency;
      // Drawn as often as its probability says (binomial, five standard deviations).
      EXPECT_NEAR(frequency, p, 5 * std::sqrt(p / count) + 2.0 / count) << "edge " << edge;
    }
    // The probabilities of the edges drawn add up to the share of draws that found one.
    EXPECT_NEAR(total, 1.0 - dead, 2e-3);
    for (size_t e = 0; e < sphere.edges.size(); ++e) {
      double l = std::sqrt(
          dot(host::minus(sphere.edges[e].b, sphere.edges[e].a), host::minus(sphere.edges[e].b, sphere.edges[e].a)));
      length += l;
      if (!sphere.folded[e]) continue;
      silhouette_length += l;
      EXPECT_TRUE(drawn.count(uint32_t(e))) << "silhouette edge " << e << " never drawn";
    }
    // Draws on the silhouette: 3.6 to 13 times as many as drawing by length among all edges
    // would give (measured), every edge drawn on it.
    EXPECT_GT(on_silhouette, 3 * silhouette_length / length) << "dead " << dead;
    EXPECT_NEAR(on_silhouette, 1.0 - dead, 1e-9);
  }
}

TEST(MeshEdgeTree, NothingFromInsideAClosedSphere) {
  Sphere sphere(12, 24);
  MeshEdgeTree tree(sphere.edges, 0);
  for (const auto& [edge, frequency_p] : draws(tree, Vec{0.1, -0.2, 0.05}, 4096))
    EXPECT_EQ(frequency_p.second, 0.0) << "edge " << edge;
}

TEST(MeshEdgeTree, EdgesMarkedAlwaysAreNeverCulled) {
  Sphere sphere(12, 24);
  for (auto& edge : sphere.edges) edge.always = true;
  MeshEdgeTree tree(sphere.edges, 0);
  auto drawn = draws(tree, Vec{0.1, -0.2, 0.05}, 1 << 16);
  EXPECT_EQ(drawn.size(), sphere.edges.size());
}

}  // namespace
