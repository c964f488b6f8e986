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

/// Silhouette edges: vertices `a`, `b` and a vertex `inside` on the mesh's side of the edge,
/// chosen with probability proportional to `weights`.
class MeshSilhouette : public Silhouette {
 public:
  MeshSilhouette(float weight, const Float& positions, const std::array<float, 3>& viewpoint,
                 const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, const std::vector<uint32_t>& inside,
                 const std::vector<float>& weights)
      : positions_(positions),
        viewpoint_(viewpoint),
        a_(UInt32::from(a.data(), a.size())),
        b_(UInt32::from(b.data(), b.size())),
        inside_(UInt32::from(inside.data(), inside.size())),
        weights_(Float::from(weights.data(), weights.size())),
        choice_(weights) {
    weight_ = weight;
  }

  SilhouetteSample sample(const Array2f& sample) const override {
    UInt32 edge = choice_.sample(sample.x);
    Array3f pa = vertex(gather(a_, edge)), pb = vertex(gather(b_, edge));
    Array3f inside = detach(vertex(gather(inside_, edge)));
    SilhouetteSample ss;
    ss.p = pa + (pb - pa) * sample.y;
    Array3f along = detach(pb - pa), p = detach(ss.p);
    Float length = norm(along);
    ss.tangent = along / length;
    Array3f towards = normalize(p - opaque_point(viewpoint_));
    Array3f normal = normalize(cross(ss.tangent, towards));
    ss.normal = mulsign(normal, -dot(normal, inside - p));
    ss.pdf = gather(weights_, edge) * choice_.normalization() / length;
    ss.valid = length > 0.0f;
    return ss;
  }

 private:
  Array3f vertex(const UInt32& index) const {
    UInt32 first = index * 3u;
    return Array3f(gather(positions_, first), gather(positions_, first + 1u), gather(positions_, first + 2u));
  }

  Float positions_;
  std::array<float, 3> viewpoint_;
  UInt32 a_, b_, inside_;
  Float weights_;
  DiscreteDistribution choice_;
};

}  // namespace

std::unique_ptr<Silhouette> mesh_silhouette(const MeshData& host, const Float& positions,
                                            const std::array<float, 3>& viewpoint) {
  auto vertex = [&](uint32_t i) {
    return Point{host.positions[3 * i], host.positions[3 * i + 1], host.positions[3 * i + 2]};
  };
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

  Point eye{viewpoint[0], viewpoint[1], viewpoint[2]};
  std::vector<uint32_t> a, b, inside;
  std::vector<float> weights;
  double total = 0.0;
  for (size_t i = 0; i < sides.size();) {
    size_t j = i;
    while (j < sides.size() && sides[j].a == sides[i].a && sides[j].b == sides[i].b) ++j;
    const EdgeSide& edge = sides[i];
    Point pa = vertex(edge.a), pb = vertex(edge.b);
    // The plane through the edge and the eye: the edge is on the silhouette when the
    // triangles are on one side of it (one triangle: an open boundary, always). Where the
    // triangles do not share their vertices (normals or uvs split there), shading jumps
    // across the edge: it counts too, seen with one triangle inside.
    Point plane = cross3(minus(pb, pa), minus(eye, pa));
    bool silhouette = j - i == 1;
    if (j - i == 2) {
      double s0 = dot3(plane, minus(vertex(sides[i].opposite), pa));
      double s1 = dot3(plane, minus(vertex(sides[i + 1].opposite), pa));
      silhouette = s0 * s1 > 0.0 || sides[i].own != sides[i + 1].own;
    }
    Point middle{0.5 * (pa[0] + pb[0]), 0.5 * (pa[1] + pb[1]), 0.5 * (pa[2] + pb[2])};
    double length = std::sqrt(dot3(minus(pb, pa), minus(pb, pa)));
    double distance = std::sqrt(dot3(minus(middle, eye), minus(middle, eye)));
    if (silhouette && length > 0.0 && distance > 0.0) {
      a.push_back(edge.a);
      b.push_back(edge.b);
      inside.push_back(edge.opposite);
      weights.push_back(float(length / distance));
      total += length / distance;
    }
    i = j;
  }
  if (weights.empty()) return nullptr;
  return std::make_unique<MeshSilhouette>(float(total), positions, viewpoint, a, b, inside, weights);
}

}  // namespace kiln::render
