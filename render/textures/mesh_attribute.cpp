// The mesh attribute texture (Mitsuba 3's `mesh_attribute`): the attribute `name` of the
// shape a lane hit (`vertex_*` interpolated over the triangle, `face_*` per triangle),
// times `scale`. The scene that traces the rays tells it its shapes
// (Texture::set_scene_shapes), held weakly, so that a lane's `si.shape` finds the mesh (a
// mesh may be in several scenes); shapes without the attribute give zero.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/shape.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>

#include "core/parameter_checks.h"

namespace kiln::render {
namespace {

class MeshAttributeTexture : public Texture {
 public:
  explicit MeshAttributeTexture(const Properties& props)
      : name_(props.get_string("name")), scale_(opaque<Float>(float(props.get_float("scale", 1.0)))) {
    if (!name_.starts_with("vertex_") && !name_.starts_with("face_"))
      throw_parameter_error(props, "name",
                            "must start with 'vertex_' or 'face_' (a mesh attribute's name), not '" + name_ + "'");
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    std::shared_ptr<const Registry<Shape>> shapes = require_shapes();
    auto [value] = dispatch(
        *shapes, select(active, si.shape, UInt32(0u)),
        [name = name_](const Shape& shape, const SurfaceInteraction& s) {
          return std::tuple(shape.eval_attribute(name, s, Bool(true)));
        },
        std::tuple(si), std::nullopt, "mesh_attribute");
    return value * scale_;
  }

  Float mean() const override {
    throw ValueError("kiln.render: texture 'mesh_attribute' (" + source() +
                     ") has no mean over the surface (nor has Mitsuba's): it cannot be where a BSDF needs one "
                     "(plastic's diffuse_reflectance)");
  }

  void set_scene_shapes(const std::shared_ptr<const Registry<Shape>>& shapes) override { shapes_ = shapes; }
  bool reads_hit_shape() const override { return true; }

  void traverse(TraversalCallback& callback) override {
    callback.put("scale", &scale_, param_flags::kNonDifferentiable);
  }

 private:
  /// The scene's shapes; ValueError unless the texture belongs to a scene one of whose
  /// shapes has the attribute.
  std::shared_ptr<const Registry<Shape>> require_shapes() const {
    std::string what = "kiln.render: texture 'mesh_attribute' (" + source() + ") reads attribute '" + name_ + "'";
    std::shared_ptr<const Registry<Shape>> shapes = shapes_.lock();
    if (!shapes) throw ValueError(what + " of the shape a ray hits, so it is evaluated only inside a scene's shapes");
    for (uint32_t id : shapes->ids())
      if (shapes->get(id)->has_attribute(name_)) return shapes;
    throw ValueError(what +
                     ", which no shape of the scene has (mesh.add_attribute() adds one; a PLY file's "
                     "vertex and face properties give some)");
  }

  std::string name_;
  Float scale_;
  std::weak_ptr<const Registry<Shape>> shapes_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Texture, "mesh_attribute",
                     [](const Properties& props) { return std::make_shared<MeshAttributeTexture>(props); });

}  // namespace kiln::render
