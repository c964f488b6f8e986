// A triangle mesh's silhouette seen from a point (mesh_silhouette.h): edges found on the
// host each render (the mesh moves between renders), points sampled on them in kernels.
#include "shapes/mesh_silhouette.h"

#include <kiln/autodiff.h>
#include <kiln/construct.h>
#include <kiln/math.h>
#include <kiln/render/distribution.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

namespace kiln::render {
namespace {

using Point = std::array<double, 3>;

Point minus(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot3(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Point cross3(const Point& a, const Point& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Vertex `i` of `host`, in double.
Point host_vertex(const MeshData& host, uint32_t i) {
  return Point{host.positions[3 * i], host.positions[3 * i + 1], host.positions[3 * i + 2]};
}

/// A triangle's side of an edge: the edge (welded vertices, lower index first), the
/// triangle's third vertex, and its own (unwelded) vertices of the edge as one number.
struct EdgeSide {
  uint32_t a, b, opposite;
  uint64_t own;
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
/// mesh's side of the edge), chosen with probability proportional to `weights`. An edge
/// counts for a lane's viewpoint when `always` (open boundaries, creases, edges already
/// found on the host) or when its triangles (third vertices `inside` and `other`) lie on one
/// side of the plane through the edge and the viewpoint; a `crease` (shading jumps across it)
/// that does not fold away is seen head on. The edges are a subset of the mesh's
/// `capacity` edges, which fixes the kernels' shape however many there are.
class MeshSilhouette : public Silhouette {
 public:
  struct Edges {
    std::vector<uint32_t> a, b, inside, other;
    std::vector<bool> always, crease;
    std::vector<float> weights;
  };

  MeshSilhouette(float weight, const Float& positions, const Edges& edges, size_t capacity)
      : positions_(positions),
        a_(upload(edges.a)),
        b_(upload(edges.b)),
        inside_(upload(edges.inside)),
        other_(upload(edges.other)),
        choice_(edges.weights, capacity) {
    std::vector<uint32_t> always(edges.always.begin(), edges.always.end()),
        crease(edges.crease.begin(), edges.crease.end());
    always_ = upload(always) != 0u;
    crease_ = upload(crease) != 0u;
    weight_ = weight;
  }

  SilhouetteSample sample(const Array2f& sample, const Array3f& viewpoint) const override {
    UInt32 edge = choice_.sample(sample.x);
    Array3f pa = vertex(gather(a_, edge)), pb = vertex(gather(b_, edge));
    Array3f inside = detach(vertex(gather(inside_, edge))), other = detach(vertex(gather(other_, edge)));
    SilhouetteSample ss;
    ss.p = pa + (pb - pa) * sample.y;
    Array3f along = detach(pb - pa), start = detach(pa), p = detach(ss.p);
    Float length = norm(along);
    ss.tangent = along / length;
    Array3f normal = normalize(cross(ss.tangent, p - viewpoint));
    ss.normal = mulsign(normal, -dot(normal, inside - p));
    ss.pdf = choice_.probability(edge) / length;
    Array3f plane = cross(along, viewpoint - start);
    Bool folded = dot(plane, inside - start) * dot(plane, other - start) > 0.0f;
    ss.valid = (length > 0.0f) & (gather(always_, edge) | folded);
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
  DiscreteDistribution choice_;
};

/// An edge of the welded mesh: its vertices, the third vertex of each of its triangles
/// (`other` = `inside` for an open boundary), and whether shading jumps across it.
struct MeshEdge {
  uint32_t a, b, inside, other;
  bool open, crease;
};

/// Whether the triangles (a, b, c) and (a, b, d) lie in one plane (to 1e-6 radians).
bool coplanar(const MeshData& host, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  Point origin = host_vertex(host, a),
        n = cross3(minus(host_vertex(host, b), origin), minus(host_vertex(host, c), origin));
  Point to_d = minus(host_vertex(host, d), origin);
  return std::abs(dot3(n, to_d)) <= 1e-6 * std::sqrt(dot3(n, n) * dot3(to_d, to_d));
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
                       uint64_t(std::min(own_a, own_b)) << 32 | std::max(own_a, own_b)});
    }
  std::sort(sides.begin(), sides.end());
  std::vector<MeshEdge> edges;
  for (size_t i = 0; i < sides.size();) {
    size_t j = i;
    while (j < sides.size() && sides[j].a == sides[i].a && sides[j].b == sides[i].b) ++j;
    const EdgeSide& side = sides[i];
    // Where the triangles do not share their vertices (normals or uvs split there), shading
    // jumps across the edge.
    if (j - i == 1) edges.push_back({side.a, side.b, side.opposite, side.opposite, true, false});
    if (j - i == 2) {
      uint32_t other = sides[i + 1].opposite;
      bool crease =
          side.own != sides[i + 1].own || (flat_shaded && !coplanar(host, side.a, side.b, side.opposite, other));
      edges.push_back({side.a, side.b, side.opposite, other, false, crease});
    }
    i = j;
  }
  return edges;
}

/// Interleaves the low 10 bits of `x` with two zero bits after each.
uint32_t spread_bits(uint32_t x) {
  x &= 0x3ffu;
  x = (x | (x << 16)) & 0x030000ffu;
  x = (x | (x << 8)) & 0x0300f00fu;
  x = (x | (x << 4)) & 0x030c30c3u;
  return (x | (x << 2)) & 0x09249249u;
}

/// `edges` in the Morton order of their midpoints within the mesh's bounds: edges near one
/// another in space get nearby sample numbers, which the indirect term's guiding then
/// learns in few boxes.
void sort_spatially(const MeshData& host, std::vector<MeshEdge>& edges) {
  Point lower{HUGE_VAL, HUGE_VAL, HUGE_VAL}, upper{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (uint32_t i = 0; i < host.vertex_count(); ++i)
    for (int k = 0; k < 3; ++k) {
      lower[k] = std::min(lower[k], double(host.positions[3 * i + k]));
      upper[k] = std::max(upper[k], double(host.positions[3 * i + k]));
    }
  auto code = [&](const MeshEdge& edge) {
    uint32_t result = 0;
    for (int k = 0; k < 3; ++k) {
      double middle = 0.5 * (double(host.positions[3 * edge.a + k]) + host.positions[3 * edge.b + k]);
      double extent = upper[k] - lower[k];
      uint32_t cell = extent > 0.0 ? uint32_t(std::min(1023.0, (middle - lower[k]) / extent * 1024.0)) : 0u;
      result |= spread_bits(cell) << k;
    }
    return result;
  };
  std::vector<std::pair<uint32_t, size_t>> order;
  for (size_t i = 0; i < edges.size(); ++i) order.push_back({code(edges[i]), i});
  std::sort(order.begin(), order.end());
  std::vector<MeshEdge> sorted;
  for (const auto& [unused, i] : order) sorted.push_back(edges[i]);
  edges = std::move(sorted);
}

}  // namespace

std::unique_ptr<Silhouette> mesh_silhouette(const MeshData& host, bool flat_shaded, const Float& positions,
                                            const std::array<float, 3>& viewpoint) {
  auto vertex = [&](uint32_t i) { return host_vertex(host, i); };
  Point eye{viewpoint[0], viewpoint[1], viewpoint[2]};
  MeshSilhouette::Edges chosen;
  double total = 0.0;
  std::vector<MeshEdge> edges = mesh_edges(host, flat_shaded);
  for (const MeshEdge& edge : edges) {
    Point pa = vertex(edge.a), pb = vertex(edge.b);
    // The plane through the edge and the eye: the edge is on the silhouette when its
    // triangles are on one side of it.
    Point plane = cross3(minus(pb, pa), minus(eye, pa));
    bool folded = dot3(plane, minus(vertex(edge.inside), pa)) * dot3(plane, minus(vertex(edge.other), pa)) > 0.0;
    Point middle{0.5 * (pa[0] + pb[0]), 0.5 * (pa[1] + pb[1]), 0.5 * (pa[2] + pb[2])};
    double length = std::sqrt(dot3(minus(pb, pa), minus(pb, pa)));
    double distance = std::sqrt(dot3(minus(middle, eye), minus(middle, eye)));
    if ((edge.open || edge.crease || folded) && length > 0.0 && distance > 0.0) {
      chosen.a.push_back(edge.a);
      chosen.b.push_back(edge.b);
      chosen.inside.push_back(edge.inside);
      chosen.other.push_back(edge.other);
      chosen.always.push_back(true);
      chosen.crease.push_back(edge.crease);
      chosen.weights.push_back(float(length / distance));
      total += length / distance;
    }
  }
  if (chosen.weights.empty()) return nullptr;
  return std::make_unique<MeshSilhouette>(float(total), positions, chosen, edges.size());
}

std::unique_ptr<Silhouette> mesh_silhouettes(const MeshData& host, bool flat_shaded, const Float& positions) {
  MeshSilhouette::Edges all;
  double total = 0.0;
  std::vector<MeshEdge> edges = mesh_edges(host, flat_shaded);
  sort_spatially(host, edges);
  for (const MeshEdge& edge : edges) {
    double length = 0.0;
    for (int k = 0; k < 3; ++k) {
      double d = double(host.positions[3 * edge.b + k]) - host.positions[3 * edge.a + k];
      length += d * d;
    }
    length = std::sqrt(length);
    if (length == 0.0) continue;
    all.a.push_back(edge.a);
    all.b.push_back(edge.b);
    all.inside.push_back(edge.inside);
    all.other.push_back(edge.other);
    all.always.push_back(edge.open || edge.crease);
    all.crease.push_back(edge.crease);
    all.weights.push_back(float(length));
    total += length;
  }
  if (all.weights.empty()) return nullptr;
  return std::make_unique<MeshSilhouette>(float(total), positions, all, edges.size());
}

}  // namespace kiln::render
