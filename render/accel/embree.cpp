// Start reading here for ray tracing: make_accel builds an EmbreeAccel, one Embree scene
// whose geometry ids are the shapes' indices (triangle meshes as Embree triangles, spheres
// and disks as user geometry from embree_analytic.cpp); kernels trace it through the host
// functions of embree_trace.cpp, with the scene as their context. The one device of the
// process and Embree's errors are embree_device.cpp's.
#include "accel/embree_analytic.h"
#include "accel/embree_device.h"
#include "accel/embree_trace.h"

#include <kiln/errors.h>

#include <cstring>
#include <string>
#include <type_traits>

namespace kiln::render {
namespace {

const char* kind_name(const AccelGeometry& shape) {
  constexpr const char* kNames[] = {"triangle mesh", "sphere", "disk"};
  static_assert(std::variant_size_v<AccelGeometry> == std::size(kNames));
  return kNames[shape.index()];
}

std::string shape_name(size_t shape_index, const char* kind) {
  return "shape " + std::to_string(shape_index) + " (" + kind + ")";
}

/// The number of vertices of `mesh`; ValueError naming the shape when its arrays do not
/// come in threes or a face refers to a vertex that does not exist.
size_t checked_vertex_count(const AccelTriangles& mesh, size_t shape_index) {
  std::string where = "kiln.render: make_accel: " + shape_name(shape_index, "triangle mesh");
  if (mesh.positions.size() % 3 != 0) {
    throw ValueError(where + ": positions holds " + std::to_string(mesh.positions.size()) +
                     " floats, which is not 3 (x, y, z) per vertex");
  }
  if (mesh.faces.size() % 3 != 0) {
    throw ValueError(where + ": faces holds " + std::to_string(mesh.faces.size()) +
                     " indices, which is not 3 per triangle");
  }
  size_t vertex_count = mesh.positions.size() / 3;
  for (size_t i = 0; i < mesh.faces.size(); ++i) {
    if (mesh.faces[i] >= vertex_count) {
      throw ValueError(where + ": face " + std::to_string(i / 3) + " refers to vertex " +
                       std::to_string(mesh.faces[i]) + ", but the mesh has " + std::to_string(vertex_count) +
                       " vertices (indices start at 0)");
    }
  }
  return vertex_count;
}

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

/// What update_mesh_positions needs to know of a shape.
struct ShapeRecord {
  const char* kind;
  bool is_mesh;
  size_t vertex_count;   // meshes only
  RTCGeometry geometry;  // attached to the scene; null for a shape that is never hit
};

/// One Embree scene over the shapes; kernels trace it through embree_trace.cpp's functions.
class EmbreeAccel final : public Accel {
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
      ShapeRecord record{kind_name(shapes[index]), false, 0, nullptr};
      GeometryHandle geometry = std::visit(
          [&](const auto& shape) -> GeometryHandle {
            using Shape = std::decay_t<decltype(shape)>;
            if constexpr (std::is_same_v<Shape, AccelTriangles>) {
              record.is_mesh = true;
              record.vertex_count = checked_vertex_count(shape, index);
              return shape.faces.empty() ? nullptr : new_mesh_geometry(shape);
            } else {
              return analytic_.add(shape, index);
            }
          },
          shapes[index]);
      if (geometry) {
        rtcAttachGeometryByID(scene_.get(), geometry.get(), unsigned(index));
        throw_on_embree_error("attach a shape to a scene");
        record.geometry = geometry.get();  // the scene holds a reference from here on
      }
      records_.push_back(record);
    }
    commit();
  }

  void update_mesh_positions(size_t shape_index, const std::vector<float>& positions) override {
    std::string where = "kiln.render: Accel::update_mesh_positions: ";
    if (shape_index >= records_.size()) {
      throw ValueError(where + "shape index " + std::to_string(shape_index) + " is out of range: the accel has " +
                       std::to_string(records_.size()) + " shapes");
    }
    const ShapeRecord& record = records_[shape_index];
    where += shape_name(shape_index, record.kind);
    if (!record.is_mesh) {
      throw ValueError(where + " is not a triangle mesh: only meshes have vertex positions to update");
    }
    if (positions.size() != 3 * record.vertex_count) {
      throw ValueError(where + ": got " + std::to_string(positions.size()) + " floats; the mesh has " +
                       std::to_string(record.vertex_count) + " vertices, so it takes " +
                       std::to_string(3 * record.vertex_count) + " (x, y, z per vertex)");
    }
    if (!record.geometry) return;  // a mesh without faces: nothing to trace
    void* vertices = rtcGetGeometryBufferData(record.geometry, RTC_BUFFER_TYPE_VERTEX, 0);
    throw_on_embree_error("find a mesh's vertices");
    std::memcpy(vertices, positions.data(), positions.size() * sizeof(float));
    rtcUpdateGeometryBuffer(record.geometry, RTC_BUFFER_TYPE_VERTEX, 0);
    rtcCommitGeometry(record.geometry);
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
  std::vector<ShapeRecord> records_;
};
}  // namespace

std::unique_ptr<Accel> make_accel(std::vector<AccelGeometry> shapes) { return std::make_unique<EmbreeAccel>(shapes); }

}  // namespace kiln::render
