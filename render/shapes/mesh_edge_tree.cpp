// The mesh edge tree (mesh_edge_tree.h): bounds merged bottom-up on the host in double,
// rounded outwards to float; a descent per lane in kernels.
#include "shapes/mesh_edge_tree.h"

#include "shapes/host_vector.h"

#include <kiln/construct.h>
#include <kiln/math.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace kiln::render {
namespace {

using host::add, host::dot, host::length, host::scaled, host::Vec;

double angle_between(const Vec& a, const Vec& b) { return std::acos(std::clamp(dot(a, b), -1.0, 1.0)); }

/// What a node bounds: a sphere around its edges, a cone around their triangles' normals,
/// their length (0: no edges).
struct Bounds {
  Vec center{0, 0, 0};
  double radius = 0;
  Vec axis{0, 0, 1};
  double angle = 0;
  double length = 0;
};

Bounds leaf(const MeshEdgeTree::Edge& edge) {
  Bounds b;
  Vec along = add(edge.b, edge.a, -1.0);
  b.length = length(along);
  b.center = scaled(add(edge.a, edge.b), 0.5);
  b.radius = 0.5 * b.length;
  Vec sum = add(edge.normal_inside, edge.normal_outside);
  double norm = length(sum);
  if (edge.always || !(norm > 1e-6)) {
    b.angle = M_PI;
  } else {
    b.axis = scaled(sum, 1.0 / norm);
    b.angle = 0.5 * angle_between(edge.normal_inside, edge.normal_outside);
  }
  return b;
}

Bounds merge(const Bounds& x, const Bounds& y) {
  if (x.length == 0) return y;
  if (y.length == 0) return x;
  Bounds m;
  m.length = x.length + y.length;
  // The smallest sphere around both spheres.
  Vec offset = add(y.center, x.center, -1.0);
  double distance = length(offset);
  if (distance + y.radius <= x.radius) {
    m.center = x.center, m.radius = x.radius;
  } else if (distance + x.radius <= y.radius) {
    m.center = y.center, m.radius = y.radius;
  } else {
    m.radius = 0.5 * (distance + x.radius + y.radius);
    m.center = add(x.center, offset, (m.radius - x.radius) / distance);
  }
  // The narrowest cone around both cones.
  double between = angle_between(x.axis, y.axis);
  if (x.angle >= M_PI || y.angle >= M_PI) {
    m.angle = M_PI;
  } else if (between + y.angle <= x.angle) {
    m.axis = x.axis, m.angle = x.angle;
  } else if (between + x.angle <= y.angle) {
    m.axis = y.axis, m.angle = y.angle;
  } else {
    m.angle = 0.5 * (between + x.angle + y.angle);
    if (m.angle >= M_PI || std::sin(between) < 1e-9) {
      m.angle = M_PI;
    } else {
      // The axis turned from x's towards y's by the angle the cone grew on x's side.
      double turn = m.angle - x.angle;
      m.axis =
          add(scaled(x.axis, std::sin(between - turn) / std::sin(between)), y.axis, std::sin(turn) / std::sin(between));
      m.axis = scaled(m.axis, 1.0 / length(m.axis));
    }
  }
  return m;
}

Float upload(const std::vector<float>& values) { return Float::from(values.data(), values.size()); }

/// Interleaves the low 10 bits of `x` with two zero bits after each.
uint32_t spread_bits(uint32_t x) {
  x &= 0x3ffu;
  x = (x | (x << 16)) & 0x030000ffu;
  x = (x | (x << 8)) & 0x0300f00fu;
  x = (x | (x << 4)) & 0x030c30c3u;
  return (x | (x << 2)) & 0x09249249u;
}

/// The edges' indices in the Morton order of their midpoints within their bounds, those
/// marked `always` last (so as not to widen the bounds of the others).
std::vector<uint32_t> spatial_order(const std::vector<MeshEdgeTree::Edge>& edges) {
  Vec lower{HUGE_VAL, HUGE_VAL, HUGE_VAL}, upper{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (const auto& edge : edges)
    for (int k = 0; k < 3; ++k) {
      lower[k] = std::min({lower[k], edge.a[k], edge.b[k]});
      upper[k] = std::max({upper[k], edge.a[k], edge.b[k]});
    }
  std::vector<std::tuple<bool, uint32_t, uint32_t>> keys;
  for (uint32_t i = 0; i < edges.size(); ++i) {
    uint32_t code = 0;
    for (int k = 0; k < 3; ++k) {
      double middle = 0.5 * (edges[i].a[k] + edges[i].b[k]), extent = upper[k] - lower[k];
      uint32_t cell = extent > 0.0 ? uint32_t(std::min(1023.0, (middle - lower[k]) / extent * 1024.0)) : 0u;
      code |= spread_bits(cell) << k;
    }
    keys.push_back({edges[i].always, code, i});
  }
  std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> order;
  for (const auto& key : keys) order.push_back(std::get<2>(key));
  return order;
}

}  // namespace

MeshEdgeTree::MeshEdgeTree(const std::vector<Edge>& edges, size_t capacity) : edge_count_(edges.size()) {
  capacity = std::max(capacity, std::max<size_t>(edges.size(), 2));
  while ((size_t(1) << depth_) < capacity) ++depth_;
  size_t first_leaf = (size_t(1) << depth_) - 1, nodes = 2 * first_leaf + 1;
  std::vector<Bounds> bounds(nodes);
  std::vector<uint32_t> order = spatial_order(edges);
  for (size_t slot = 0; slot < edges.size(); ++slot) bounds[first_leaf + slot] = leaf(edges[order[slot]]);
  edge_of_leaf_ = UInt32::from(order.data(), order.size());
  std::vector<float> inside[3], outside[3];
  for (size_t slot = 0; slot < (size_t(1) << depth_); ++slot)
    for (int k = 0; k < 3; ++k) {
      inside[k].push_back(slot < edges.size() ? float(edges[order[slot]].normal_inside[k]) : 0.0f);
      outside[k].push_back(slot < edges.size() ? float(edges[order[slot]].normal_outside[k]) : 0.0f);
    }
  for (int k = 0; k < 3; ++k) {
    normal_inside_[k] = upload(inside[k]);
    normal_outside_[k] = upload(outside[k]);
  }
  for (size_t i = first_leaf; i-- > 0;) bounds[i] = merge(bounds[2 * i + 1], bounds[2 * i + 2]);
  // Rounded outwards: spheres and cones a little wider, so that float never culls what
  // double would keep.
  std::vector<float> center[3], radius, axis[3], sin_angle, cos_angle, edge_length;
  for (const Bounds& b : bounds) {
    for (int k = 0; k < 3; ++k) {
      center[k].push_back(float(b.center[k]));
      axis[k].push_back(float(b.axis[k]));
    }
    radius.push_back(float(b.radius * (1.0 + 1e-4) + 1e-6 * length(b.center)));
    double angle = std::min(M_PI, b.angle + 1e-3);
    sin_angle.push_back(float(std::sin(angle)));
    cos_angle.push_back(float(std::cos(angle)));
    edge_length.push_back(float(b.length));
  }
  for (int k = 0; k < 3; ++k) {
    center_[k] = upload(center[k]);
    axis_[k] = upload(axis[k]);
  }
  radius_ = upload(radius);
  sin_angle_ = upload(sin_angle);
  cos_angle_ = upload(cos_angle);
  length_ = upload(edge_length);
}

std::pair<UInt32, Float> MeshEdgeTree::sample(const Float& sample, const Array3f& viewpoint) const {
  // A child's weight: its edges' length, or 0 where all its triangles face the viewpoint or
  // all face away: the angle between the cone's axis and the direction to the viewpoint is
  // below 90° less the spread, or above 90° plus it (in sines and cosines).
  auto weight = [&](const UInt32& node) {
    Array3f center(gather(center_[0], node), gather(center_[1], node), gather(center_[2], node));
    Array3f axis(gather(axis_[0], node), gather(axis_[1], node), gather(axis_[2], node));
    Float radius = gather(radius_, node), sin_angle = gather(sin_angle_, node), cos_angle = gather(cos_angle_, node);
    Array3f to_viewpoint = viewpoint - center;
    Float distance = norm(to_viewpoint);
    // The spread: the cone's angle plus the angle under which the sphere is seen.
    Float sin_sphere = min(radius / distance, Float(1.0f)), cos_sphere = safe_sqrt(1.0f - sin_sphere * sin_sphere);
    Float sin_spread = sin_angle * cos_sphere + cos_angle * sin_sphere;
    Float cos_spread = cos_angle * cos_sphere - sin_angle * sin_sphere;
    Float cos_between = dot(axis, to_viewpoint) / distance;
    Bool culled = (distance > radius) & (cos_spread > 0.0f) & (abs(cos_between) > sin_spread);
    return select(culled, Float(0.0f), gather(length_, node));
  };
  // A leaf's weight: its edge's length where its triangles face the viewpoint on opposite
  // sides (the sides do not change along the edge, which lies in both planes) or where it
  // is marked `always`, else 0.
  auto leaf_weight = [&](const UInt32& node) {
    UInt32 slot = node - uint32_t((size_t(1) << depth_) - 1);
    Array3f to_viewpoint =
        viewpoint - Array3f(gather(center_[0], node), gather(center_[1], node), gather(center_[2], node));
    auto facing = [&](const Float(&normal)[3]) {
      return gather(normal[0], slot) * to_viewpoint.x + gather(normal[1], slot) * to_viewpoint.y +
             gather(normal[2], slot) * to_viewpoint.z;
    };
    Bool folded = (facing(normal_inside_) > 0.0f) != (facing(normal_outside_) > 0.0f);
    return select(folded | (gather(cos_angle_, node) < -0.5f), gather(length_, node), Float(0.0f));
  };
  UInt32 node = zeros<UInt32>(sample.size());
  Float u = sample, probability = full<Float>(1.0f, sample.size());
  for (uint32_t level = 0; level < depth_; ++level) {
    UInt32 left = node * 2u + 1u;
    bool children_are_leaves = level + 1 == depth_;
    Float w_left = children_are_leaves ? leaf_weight(left) : weight(left),
          w_right = children_are_leaves ? leaf_weight(left + 1u) : weight(left + 1u);
    Float total = w_left + w_right;
    Float p_left = select(total > 0.0f, w_left / total, Float(0.0f));
    Bool right = u >= p_left;
    u = select(right, (u - p_left) / (1.0f - p_left), u / p_left);
    u = min(max(u, Float(0.0f)), Float(0x1.fffffep-1f));
    probability = probability * select(total > 0.0f, select(right, 1.0f - p_left, p_left), Float(0.0f));
    node = select(right, left + 1u, left);
  }
  UInt32 slot = node - uint32_t((size_t(1) << depth_) - 1);
  Bool inside = slot < uint32_t(edge_count_);
  return {gather(edge_of_leaf_, select(inside, slot, UInt32(0u))), select(inside, probability, Float(0.0f))};
}

}  // namespace kiln::render
