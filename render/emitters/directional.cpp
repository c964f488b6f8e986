// The directional light (Mitsuba 3's `directional`): irradiance in W/m² arriving along one
// direction from infinitely far away (the +z axis of `to_world`, or `direction`); light
// paths start on the disk that faces it across the scene's bounding sphere.
#include <kiln/render/frame.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "core/parameter_checks.h"
#include "emitters/common.h"

#include <cmath>

namespace kiln::render {
namespace {

/// `to_world`, or the frame whose +z is `direction` (Mitsuba's look_at from the origin
/// towards it, the up vector completing it to a basis).
Transform4f directional_to_world(const Properties& props) {
  if (!props.has("direction")) return Transform4f::from_rows(props.get_transform("to_world", kIdentityRows));
  if (props.has("to_world")) throw_parameter_error(props, "direction", "and 'to_world' exclude each other: give one");
  Vector3d v = props.get_vector("direction");
  double length = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (!(length > 0 && std::isfinite(length)))
    throw_parameter_error(props, "direction", "must be a nonzero finite vector");
  Array3f direction = normalize(Array3f(float(v[0]), float(v[1]), float(v[2])));
  Array3f up = coordinate_system(direction).first;
  Transform4f frame = Transform4f().look_at(Array3f(0.0f, 0.0f, 0.0f), direction, up);
  std::array<double, 16> rows;
  for (size_t i = 0; i < 16; ++i) rows[i] = frame.matrix().entries[i].item();
  return Transform4f::from_rows(rows);
}

class DirectionalEmitter : public InfiniteEmitter {
 public:
  explicit DirectionalEmitter(const Properties& props)
      : to_world_(directional_to_world(props)), irradiance_(emission_parameter(props, "irradiance")) {
    flags_ = emitter_flags::kInfinite | emitter_flags::kDeltaDirection;
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f&,
                                                         const Bool& active) const override {
    Array3f d = to_world_.apply_vector(Array3f(0.0f, 0.0f, 1.0f));
    DirectionSample3f ds;
    ds.dist = sample_distance(ref_p);
    ds.p = ref_p - d * ds.dist;
    ds.n = d;
    ds.uv = Array2f(0.0f, 0.0f);
    ds.pdf = Float(1.0f);
    ds.delta = Bool(true);
    ds.d = -d;
    ds.emitter = UInt32(0u);
    return {ds, select(active, irradiance_->eval(SurfaceInteraction{}, active), Color3f(0.0f, 0.0f, 0.0f))};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f&, const Bool&) const override { return Float(0.0f); }

  /// Light paths start on the disk that faces the light across the scene's bounding sphere.
  std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f&,
                                       const Bool& active) const override {
    Array2f offset = warp::square_to_uniform_disk_concentric(position_sample);
    Array3f d = to_world_.apply_vector(Array3f(0.0f, 0.0f, 1.0f));
    Array3f across = to_world_.apply_vector(Array3f(offset.x, offset.y, Float(0.0f)));
    const Float& radius = scene_radius();
    Color3f weight = irradiance_->eval(SurfaceInteraction{}, active) * (kPi * radius * radius);
    return {Ray3f{scene_center() + (across - d) * radius, d, Float(kInfinity)}, weight};
  }

  Color3f eval(const SurfaceInteraction&, const Bool&) const override { return Color3f(0.0f, 0.0f, 0.0f); }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("irradiance", irradiance_.get());
    callback.put("to_world", &to_world_, param_flags::kNonDifferentiable);
  }

 private:
  Transform4f to_world_;
  std::shared_ptr<Texture> irradiance_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "directional",
                     [](const Properties& props) { return std::make_shared<DirectionalEmitter>(props); });

}  // namespace kiln::render
