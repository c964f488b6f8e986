// A triangle mesh's silhouette seen from a point (mesh_silhouette.h): edges found on the
// host each render (the mesh moves between renders), points sampled on them in kernels.
#include "shapes/mesh_silhouette.h"

#include "shapes/host_vector.h"
#include "shapes/mesh_edge_tree.h"

#include <kiln/autodiff.h>
#include <kiln/construct.h>
#include <kiln/math.h>
#include <kiln/render/distribution.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace kiln::render {
namespace {

using Point = host::Vec;

/// Vertex `i` of `host`, in double.
Point host_vertex(const MeshData& host, uint32_t i) {
  return Point{host.positions[3 * i], host.positions[3 * i + 1], host.positions[3 * i + 2]};
}

/// A triangle's side of an edge: the edge (welded vertices, lower index first), the
/// triangle's third vertex, its own (unwelded) vertices of the edge as one number, and
/// whether it winds from a to b.
struct EdgeSide {
  uint32_t a, b, opposite;
  uint64_t own;
  bool forward;
  bool operator<(const EdgeSide& o) const { return std::tie(a, b) < std::tie(o.a, o.b); }
};

/// Each vertex's lowest-numbered vertex at the same position: meshes split vertices where
/// normals or uvs differ (a cube's sides), and the edges there are no boundary.
std::vector<uint32_t> welded_vertices(const MeshData& host) {
  size_t n = host.vertex_count();
  std::vector<uint32_t> order(n), welded(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  auto position = [&](uint32_t i) {
    return std::tie(host.positions[3 * i], host.positions[3 * i + 1], host.positions[3 * i + 2]);
  };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return position(a) < position(b); });
  for (size_t i = 0; i < n; ++i)
    welded[order[i]] = i > 0 && position(order[i]) == position(order[i - 1]) ? welded[order[i - 1]] : order[i];
  return welded;
}

/// Mesh edges to sample silhouette points on: vertices `a`, `b` and `inside` (a vertex on the
/// mesh's side of the edge), chosen by a `Choice`. An edge
/// counts for a lane's viewpoint when `always` (open boundaries, creases, edges already
/// found on the host) or when its triangles (third vertices `inside` and `other`) lie on one
/// side of the plane through the edge and the viewpoint; a `crease` (shading jumps across it)
/// that does not fold away is seen head on.
class MeshSilhouette : public Silhouette {
 public:
  struct Edges {
    std::vector<uint32_t> a, b, inside, other;
    std::vector<bool> always, crease;
  };
  /// The edge each lane's sample picks seen from its viewpoint, and its probability.
  using Choice = std::function<std::pair<UInt32, Float>(const Float&, const Array3f&)>;

  MeshSilhouette(float weight, const Float& positions, const Edges& edges, Choice choice)
      : positions_(positions),
        a_(upload(edges.a)),
        b_(upload(edges.b)),
        inside_(upload(edges.inside)),
        other_(upload(edges.other)),
        choice_(std::move(choice)) {
    std::vector<uint32_t> always(edges.always.begin(), edges.always.end()),
        crease(edges.crease.begin(), edges.crease.end());
    always_ = upload(always) != 0u;
    crease_ = upload(crease) != 0u;
    weight_ = weight;
  }

  SilhouetteSample sample(const Array2f& sample, const Array3f& viewpoint) const override {
    auto [edge, probability] = choice_(sample.x, viewpoint);
    Array3f pa = vertex(gather(a_, edge)), pb = vertex(gather(b_, edge));
    Array3f inside = detach(vertex(gather(inside_, edge))), other = detach(vertex(gather(other_, edge)));
    SilhouetteSample ss;
    ss.p = pa + (pb - pa) * sample.y;
    Array3f along = detach(pb - pa), start = detach(pa), p = detach(ss.p);
    Float length = norm(along);
    ss.tangent = along / length;
    Array3f normal = normalize(cross(ss.tangent, p - viewpoint));
    ss.normal = mulsign(normal, -dot(normal, inside - p));
    ss.pdf = probability / length;
    Array3f plane = cross(along, viewpoint - start);
    Bool folded = dot(plane, inside - start) * dot(plane, other - start) > 0.0f;
    ss.valid = (length > 0.0f) & (probability > 0.0f) & (gather(always_, edge) | folded);
    ss.crease = gather(crease_, edge) & !folded;
    ss.inside_plane = normalize(cross(along, inside - start));
    ss.outside_plane = normalize(cross(along, other - start));
    return ss;
  }

 private:
  static UInt32 upload(const std::vector<uint32_t>& values) { return UInt32::from(values.data(), values.size()); }

  Array3f vertex(const UInt32& index) const {
    UInt32 first = index * 3u;
    return Array3f(gather(positions_, first), gather(positions_, first + 1u), gather(positions_, first + 2u));
  }

  Float positions_;
  UInt32 a_, b_, inside_, other_;
  Bool always_, crease_;
  Choice choice_;
};

/// An edge of the welded mesh: its vertices, the third vertex of each of its triangles
/// (`other` = `inside` for an open boundary), whether shading jumps across it, whether the
/// inside triangle winds from a to b, and whether the two wind it in opposite directions
/// (as a consistently oriented surface's do).
struct MeshEdge {
  uint32_t a, b, inside, other;
  bool open, crease, inside_forward, consistent;
};

/// Whether the triangles (a, b, c) and (a, b, d) lie in one plane (to 1e-6 radians).
bool coplanar(const MeshData& host, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  Point origin = host_vertex(host, a),
        n = host::cross(host::minus(host_vertex(host, b), origin), host::minus(host_vertex(host, c), origin));
  Point to_d = host::minus(host_vertex(host, d), origin);
  return std::abs(host::dot(n, to_d)) <= 1e-6 * std::sqrt(host::dot(n, n) * host::dot(to_d, to_d));
}

/// The mesh's edges (three or more triangles on one edge: left out). On a `flat_shaded`
/// mesh, shading jumps across every edge but those between coplanar triangles.
std::vector<MeshEdge> mesh_edges(const MeshData& host, bool flat_shaded) {
  std::vector<uint32_t> welded = welded_vertices(host);
  std::vector<EdgeSide> sides;
  sides.reserve(host.faces.size());
  for (size_t f = 0; f < host.faces.size(); f += 3)
    for (size_t k = 0; k < 3; ++k) {
      uint32_t own_a = host.faces[f + k], own_b = host.faces[f + (k + 1) % 3];
      uint32_t a = welded[own_a], b = welded[own_b];
      sides.push_back({std::min(a, b), std::max(a, b), host.faces[f + (k + 2) % 3],
                       uint64_t(std::min(own_a, own_b)) << 32 | std::max(own_a, own_b), a < b});
    }
  std::sort(sides.begin(), sides.end());
  std::vector<MeshEdge> edges;
  for (size_t i = 0; i < sides.size();) {
    size_t j = i;
    while (j < sides.size() && sides[j].a == sides[i].a && sides[j].b == sides[i].b) ++j;
    const EdgeSide& side = sides[i];
    // Where the triangles do not share their vertices (normals or uvs split there), shading
    // jumps across the edge.
    if (j - i == 1) edges.push_back({side.a, side.b, side.opposite, side.opposite, true, false, side.forward, false});
    if (j - i == 2) {
      uint32_t other = sides[i + 1].opposite;
      bool crease =
          side.own != sides[i + 1].own || (flat_shaded && !coplanar(host, side.a, side.b, side.opposite, other));
      edges.push_back(
          {side.a, side.b, side.opposite, other, false, crease, side.forward, side.forward != sides[i + 1].forward});
    }
    i = j;
  }
  return edges;
}

}  // namespace

std::unique_ptr<Silhouette> mesh_silhouette(const MeshData& host, bool flat_shaded, const Float& positions,
                                            const std::array<float, 3>& viewpoint) {
  auto vertex = [&](uint32_t i) { return host_vertex(host, i); };
  Point eye{viewpoint[0], viewpoint[1], viewpoint[2]};
  MeshSilhouette::Edges chosen;
  std::vector<float> weights;
  double total = 0.0;
  std::vector<MeshEdge> edges = mesh_edges(host, flat_shaded);
  for (const MeshEdge& edge : edges) {
    Point pa = vertex(edge.a), pb = vertex(edge.b);
    // The plane through the edge and the eye: the edge is on the silhouette when its
    // triangles are on one side of it.
    Point plane = host::cross(host::minus(pb, pa), host::minus(eye, pa));
    bool folded =
        host::dot(plane, host::minus(vertex(edge.inside), pa)) * host::dot(plane, host::minus(vertex(edge.other), pa)) >
        0.0;
    Point middle{0.5 * (pa[0] + pb[0]), 0.5 * (pa[1] + pb[1]), 0.5 * (pa[2] + pb[2])};
    double length = std::sqrt(host::dot(host::minus(pb, pa), host::minus(pb, pa)));
    double distance = std::sqrt(host::dot(host::minus(middle, eye), host::minus(middle, eye)));
    if ((edge.open || edge.crease || folded) && length > 0.0 && distance > 0.0) {
      chosen.a.push_back(edge.a);
      chosen.b.push_back(edge.b);
      chosen.inside.push_back(edge.inside);
      chosen.other.push_back(edge.other);
      chosen.always.push_back(true);
      chosen.crease.push_back(edge.crease);
      weights.push_back(float(length / distance));
      total += length / distance;
    }
  }
  if (weights.empty()) return nullptr;
  // By length in the image; the kernels' shape is fixed by the mesh's edge count.
  DiscreteDistribution distribution(weights, edges.size());
  auto choice = [distribution](const Float& sample, const Array3f&) {
    UInt32 edge = distribution.sample(sample);
    return std::pair{edge, distribution.probability(edge)};
  };
  return std::make_unique<MeshSilhouette>(float(total), positions, chosen, choice);
}

std::unique_ptr<Silhouette> mesh_silhouettes(const MeshData& host, bool flat_shaded, const Float& positions) {
  MeshSilhouette::Edges all;
  std::vector<MeshEdgeTree::Edge> tree_edges;
  double total = 0.0;
  std::vector<MeshEdge> edges = mesh_edges(host, flat_shaded);
  // A triangle's unit normal as it winds (zero where it has no area).
  auto winding_normal = [&](const MeshEdge& edge, uint32_t third, bool forward) {
    Point pa = host_vertex(host, edge.a),
          n = host::cross(host::minus(host_vertex(host, edge.b), pa), host::minus(host_vertex(host, third), pa));
    double norm = std::sqrt(host::dot(n, n));
    double scale = norm > 0.0 ? (forward ? 1.0 : -1.0) / norm : 0.0;
    return Point{n[0] * scale, n[1] * scale, n[2] * scale};
  };
  for (const MeshEdge& edge : edges) {
    MeshEdgeTree::Edge bounds{host_vertex(host, edge.a), host_vertex(host, edge.b),
                              winding_normal(edge, edge.inside, edge.inside_forward),
                              winding_normal(edge, edge.other, !edge.inside_forward)};
    double length = std::sqrt(host::dot(host::minus(bounds.b, bounds.a), host::minus(bounds.b, bounds.a)));
    if (length == 0.0) continue;
    // Where the silhouette test needs more than the two triangles' facing, the edge is
    // never culled.
    bounds.always = edge.open || edge.crease || !edge.consistent ||
                    host::dot(bounds.normal_inside, bounds.normal_inside) == 0.0 ||
                    host::dot(bounds.normal_outside, bounds.normal_outside) == 0.0;
    tree_edges.push_back(bounds);
    all.a.push_back(edge.a);
    all.b.push_back(edge.b);
    all.inside.push_back(edge.inside);
    all.other.push_back(edge.other);
    all.always.push_back(edge.open || edge.crease);
    all.crease.push_back(edge.crease);
    total += length;
  }
  if (tree_edges.empty()) return nullptr;
  auto tree = std::make_shared<const MeshEdgeTree>(tree_edges, edges.size());
  auto choice = [tree](const Float& sample, const Array3f& viewpoint) { return tree->sample(sample, viewpoint); };
  return std::make_unique<MeshSilhouette>(float(total), positions, all, choice);
}

}  // namespace kiln::render
