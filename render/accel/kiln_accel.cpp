// The Kiln BVH as an Accel (kiln_accel.h): the shapes' triangles, spheres and disks each get
// a BVH and leaf-ordered arrays; a query runs one traversal loop per kind that the scene
// has, each bounded by the closest hit of the ones before, in one kernel. A mesh update
// rebuilds the structure from the shapes' new positions.
#include "accel/kiln_accel.h"

#include "accel/accel_shapes.h"
#include "accel/kiln_primitives.h"

#include <kiln/construct.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace kiln::render {
namespace {

/// One kind of primitive: its BVH and its arrays.
template <typename Arrays> struct Primitives {
  BvhArrays bvh;
  Arrays arrays;
};

/// A box around the points given as x, y, z triples; NaN when one is not finite or larger
/// than rays may be (the builder leaves such a primitive out: it is never hit, as in Embree).
Box box_around(const float* points, size_t count) {
  Box box = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (size_t i = 0; i < count; ++i) {
    for (int axis = 0; axis < 3; ++axis) {
      float value = points[3 * i + axis];
      if (!(std::fabs(value) <= kLargestComponent)) return {{NAN, NAN, NAN}, {NAN, NAN, NAN}};
      box.lower[axis] = std::min(box.lower[axis], value);
      box.upper[axis] = std::max(box.upper[axis], value);
    }
  }
  return box;
}

Box to_box(const FloatBounds& bounds) {
  return {{bounds.lower[0], bounds.lower[1], bounds.lower[2]}, {bounds.upper[0], bounds.upper[1], bounds.upper[2]}};
}

/// The primitives' BVH and arrays (`make_arrays(leaf_order)`), or none without primitives.
template <typename Arrays, typename MakeArrays>
std::optional<Primitives<Arrays>> primitives(const std::vector<Box>& boxes, MakeArrays make_arrays) {
  Bvh bvh = build_bvh(boxes);
  if (bvh.nodes.empty()) return std::nullopt;
  return Primitives<Arrays>{BvhArrays(bvh), make_arrays(bvh.primitives)};
}

/// The number of lanes of a query.
size_t lanes(const Ray3f& ray, const Bool& active) {
  return std::max({width(ray.o), width(ray.d), ray.maxt.size(), active.size()});
}

class KilnAccel final : public Accel {
 public:
  explicit KilnAccel(std::vector<AccelGeometry> shapes) : shapes_(std::move(shapes)) {
    for (size_t index = 0; index < shapes_.size(); ++index) summaries_.push_back(summarize(shapes_[index], index));
    build();
  }

  AccelKind kind() const override { return AccelKind::Kiln; }

  PreliminaryIntersection intersect(const Ray3f& ray, const Bool& active) const override {
    TraversalRay traced(ray);
    PreliminaryIntersection hit{traced.maxt, Array2f(0.0f, 0.0f), UInt32(0u), UInt32(kNoShape)};
    Bool found = full<Bool>(false, lanes(ray, active));
    auto closest = [&](const auto& kind, const char* name) {
      if (!kind) return;
      TraversalHit h = closest_hit(kind->bvh, traced, hit.t, active, kind->arrays.leaf_test(traced), name);
      Bool closer = h.slot != ~0u;
      found = found | closer;
      hit.t = select(closer, h.t, hit.t);
      hit.prim_uv = Array2f(select(closer, h.u, hit.prim_uv.x), select(closer, h.v, hit.prim_uv.y));
      hit.shape_index = select(closer, gather(kind->arrays.shape, h.slot, closer), hit.shape_index);
      UInt32 prim_index(0u);  // a sphere's or a disk's
      if constexpr (requires { kind->arrays.face; }) prim_index = gather(kind->arrays.face, h.slot, closer);
      hit.prim_index = select(closer, prim_index, hit.prim_index);
    };
    closest(triangles_, "kiln_bvh_triangles");
    closest(spheres_, "kiln_bvh_spheres");
    closest(disks_, "kiln_bvh_disks");
    // A miss, as accel.h gives it, on every lane of the ray's width.
    hit.t = select(found, hit.t, Float(INFINITY));
    hit.prim_uv = Array2f(select(found, hit.prim_uv.x, 0.0f), select(found, hit.prim_uv.y, 0.0f));
    hit.prim_index = select(found, hit.prim_index, 0u);
    hit.shape_index = select(found, hit.shape_index, kNoShape);
    return hit;
  }

  Bool occluded(const Ray3f& ray, const Bool& active) const override {
    TraversalRay traced(ray);
    Bool hit = full<Bool>(false, lanes(ray, active));
    auto any = [&](const auto& kind, const char* name) {
      if (kind) hit = hit | any_hit(kind->bvh, traced, active & !hit, kind->arrays.leaf_test(traced), name);
    };
    any(triangles_, "kiln_bvh_triangles_any");
    any(spheres_, "kiln_bvh_spheres_any");
    any(disks_, "kiln_bvh_disks_any");
    return hit;
  }

  void update_mesh_positions(size_t shape_index, const std::vector<float>& positions) override {
    check_position_update(summaries_, shape_index, positions.size());
    std::get<AccelTriangles>(shapes_[shape_index]).positions = positions;
    build();
  }

 private:
  void build() {
    std::vector<Box> triangle_boxes, sphere_boxes, disk_boxes;
    std::vector<float> corners;
    std::vector<uint32_t> triangle_shapes, faces, sphere_shapes, disk_shapes;
    std::vector<AnalyticSphere> spheres;
    std::vector<AnalyticDisk> disks;
    for (size_t index = 0; index < shapes_.size(); ++index) {
      const AccelGeometry& shape = shapes_[index];
      if (const auto* mesh = std::get_if<AccelTriangles>(&shape)) {
        for (size_t face = 0; face < mesh->faces.size() / 3; ++face) {
          float triangle[9];
          for (int corner = 0; corner < 3; ++corner)
            std::copy_n(&mesh->positions[3 * mesh->faces[3 * face + corner]], 3, &triangle[3 * corner]);
          triangle_boxes.push_back(box_around(triangle, 3));
          corners.insert(corners.end(), triangle, triangle + 9);
          triangle_shapes.push_back(uint32_t(index));
          faces.push_back(uint32_t(face));
        }
      } else if (const auto* sphere = std::get_if<AccelSphere>(&shape)) {
        if (std::optional<AnalyticSphere> parameters = analytic_sphere(*sphere, index)) {
          sphere_boxes.push_back(to_box(parameters->bounds));
          spheres.push_back(*parameters);
          sphere_shapes.push_back(uint32_t(index));
        }
      } else if (std::optional<AnalyticDisk> parameters = analytic_disk(std::get<AccelDisk>(shape), index)) {
        disk_boxes.push_back(to_box(parameters->bounds));
        disks.push_back(*parameters);
        disk_shapes.push_back(uint32_t(index));
      }
    }
    triangles_ = primitives<TriangleArrays>(triangle_boxes, [&](const std::vector<uint32_t>& order) {
      return TriangleArrays(corners, triangle_shapes, faces, order);
    });
    spheres_ = primitives<SphereArrays>(
        sphere_boxes, [&](const std::vector<uint32_t>& order) { return SphereArrays(spheres, sphere_shapes, order); });
    disks_ = primitives<DiskArrays>(
        disk_boxes, [&](const std::vector<uint32_t>& order) { return DiskArrays(disks, disk_shapes, order); });
  }

  std::vector<AccelGeometry> shapes_;
  std::vector<ShapeSummary> summaries_;
  std::optional<Primitives<TriangleArrays>> triangles_;
  std::optional<Primitives<SphereArrays>> spheres_;
  std::optional<Primitives<DiskArrays>> disks_;
};
}  // namespace

std::unique_ptr<Accel> make_kiln_accel(std::vector<AccelGeometry> shapes) {
  return std::make_unique<KilnAccel>(std::move(shapes));
}

}  // namespace kiln::render
