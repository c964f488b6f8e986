// Ray tracing by Embree: make_embree_accel builds one Embree scene
// whose geometry ids are the shapes' indices (triangle meshes as Embree triangles, spheres
// and disks as user geometry from embree_analytic.cpp); kernels trace it through the host
// functions of embree_trace.cpp, with the scene as their context. The one device of the
// process and Embree's errors are embree_device.cpp's.
#include "accel/embree.h"

#include "accel/accel_shapes.h"
#include "accel/embree_analytic.h"
#include "accel/embree_device.h"
#include "accel/embree_trace.h"

#include <kiln/errors.h>

#include <cstring>
#include <string>
#include <type_traits>

namespace kiln::render {
namespace {

/// A committed Embree triangle mesh holding copies of `mesh`'s arrays (checked already).
GeometryHandle new_mesh_geometry(const AccelTriangles& mesh) {
  GeometryHandle geometry(rtcNewGeometry(embree_device(), RTC_GEOMETRY_TYPE_TRIANGLE));
  throw_on_embree_error("create a triangle mesh");
  void* vertices = rtcSetNewGeometryBuffer(geometry.get(), RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                           3 * sizeof(float), mesh.positions.size() / 3);
  throw_on_embree_error("allocate a mesh's vertices");
  std::memcpy(vertices, mesh.positions.data(), mesh.positions.size() * sizeof(float));
  void* faces = rtcSetNewGeometryBuffer(geometry.get(), RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                        3 * sizeof(uint32_t), mesh.faces.size() / 3);
  throw_on_embree_error("allocate a mesh's faces");
  std::memcpy(faces, mesh.faces.data(), mesh.faces.size() * sizeof(uint32_t));
  rtcCommitGeometry(geometry.get());
  throw_on_embree_error("commit a triangle mesh");
  return geometry;
}

/// One Embree scene over the shapes; kernels trace it through embree_trace.cpp's functions.
class EmbreeAccel final : public HostCallAccel {
 public:
  explicit EmbreeAccel(const std::vector<AccelGeometry>& shapes) {
    if (shapes.size() >= RTC_INVALID_GEOMETRY_ID) {
      throw ValueError("kiln.render: make_accel: " + std::to_string(shapes.size()) +
                       " shapes are more than Embree can index");
    }
    scene_.reset(rtcNewScene(embree_device()));
    throw_on_embree_error("create a scene");
    // The better hierarchy (spatial splits), as Mitsuba builds it: a render traces far more
    // rays than the build costs.
    rtcSetSceneBuildQuality(scene_.get(), RTC_BUILD_QUALITY_HIGH);
    for (size_t index = 0; index < shapes.size(); ++index) {
      summaries_.push_back(summarize(shapes[index], index));
      GeometryHandle geometry = std::visit(
          [&](const auto& shape) -> GeometryHandle {
            using Shape = std::decay_t<decltype(shape)>;
            if constexpr (std::is_same_v<Shape, AccelTriangles>) {
              return shape.faces.empty() ? nullptr : new_mesh_geometry(shape);
            } else {
              return analytic_.add(shape, index);
            }
          },
          shapes[index]);
      if (geometry) {
        rtcAttachGeometryByID(scene_.get(), geometry.get(), unsigned(index));
        throw_on_embree_error("attach a shape to a scene");
      }
      geometries_.push_back(geometry.get());  // the scene holds a reference from here on
    }
    commit();
  }

  AccelKind kind() const override { return AccelKind::Embree; }

  void update_mesh_positions(size_t shape_index, const std::vector<float>& positions) override {
    check_position_update(summaries_, shape_index, positions.size());
    RTCGeometry geometry = geometries_[shape_index];
    if (!geometry) return;  // a mesh without faces: nothing to trace
    void* vertices = rtcGetGeometryBufferData(geometry, RTC_BUFFER_TYPE_VERTEX, 0);
    throw_on_embree_error("find a mesh's vertices");
    std::memcpy(vertices, positions.data(), positions.size() * sizeof(float));
    rtcUpdateGeometryBuffer(geometry, RTC_BUFFER_TYPE_VERTEX, 0);
    rtcCommitGeometry(geometry);
    throw_on_embree_error("commit a triangle mesh");
    commit();
  }

  HostCallTarget intersect_target() const override { return {&embree_intersect_function(), scene_.get()}; }
  HostCallTarget occluded_target() const override { return {&embree_occluded_function(), scene_.get()}; }

 private:
  /// Builds the scene's hierarchy over its geometry.
  void commit() {
    rtcCommitScene(scene_.get());
    throw_on_embree_error("build a scene's hierarchy");
  }

  AnalyticShapes analytic_;  // outlives the scene, whose user geometry points into it
  SceneHandle scene_;
  std::vector<ShapeSummary> summaries_;
  std::vector<RTCGeometry> geometries_;  // by shape; null for a shape that is never hit
};
}  // namespace

std::unique_ptr<Accel> make_embree_accel(const std::vector<AccelGeometry>& shapes) {
  return std::make_unique<EmbreeAccel>(shapes);
}

}  // namespace kiln::render
