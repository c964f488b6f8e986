// The point light (Mitsuba 3's `point`): radiant intensity in W/sr, the same in every
// direction, from one position; light paths leave it uniformly over the sphere.
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "core/parameter_checks.h"
#include "emitters/common.h"

namespace kiln::render {
namespace {

/// The `position`, or the translation of `to_world` (Mitsuba takes one or the other).
Array3f point_position(const Properties& props) {
  Vector3d p = {0.0, 0.0, 0.0};
  if (props.has("position")) {
    if (props.has("to_world")) throw_parameter_error(props, "position", "and 'to_world' exclude each other: give one");
    p = props.get_vector("position");
  } else if (props.has("to_world")) {
    Matrix4d m = props.get_transform("to_world");
    p = {m[3], m[7], m[11]};
  }
  return Array3f(opaque<Float>(float(p[0])), opaque<Float>(float(p[1])), opaque<Float>(float(p[2])));
}

class PointLight : public Emitter {
 public:
  explicit PointLight(const Properties& props)
      : position_(point_position(props)), intensity_(emission_parameter(props, "intensity")) {
    flags_ = emitter_flags::kDeltaPosition;
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f&,
                                                         const Bool& active) const override {
    DirectionSample3f ds;
    ds.p = position_;
    ds.n = Array3f(0.0f, 0.0f, 0.0f);
    ds.uv = Array2f(0.0f, 0.0f);
    ds.pdf = Float(1.0f);
    ds.delta = Bool(true);
    Array3f to_light = position_ - ref_p;
    Float dist2 = dot(to_light, to_light);
    Float inv_dist = rsqrt(dist2);
    ds.d = to_light * inv_dist;
    ds.dist = sqrt(dist2);
    ds.emitter = UInt32(0u);
    Color3f weight = intensity_->eval(SurfaceInteraction{}, active) * (inv_dist * inv_dist);
    return {ds, select(active, weight, Color3f(0.0f, 0.0f, 0.0f))};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f&, const Bool&) const override { return Float(0.0f); }

  std::pair<Ray3f, Color3f> sample_ray(const Array2f&, const Array2f& direction_sample,
                                       const Bool& active) const override {
    Color3f weight = intensity_->eval(SurfaceInteraction{}, active) * (4.0f * kPi);
    return {Ray3f{position_, warp::square_to_uniform_sphere(direction_sample), Float(kInfinity)}, weight};
  }

  Color3f eval(const SurfaceInteraction&, const Bool&) const override { return Color3f(0.0f, 0.0f, 0.0f); }

  void traverse(TraversalCallback& callback) override {
    callback.put("position", &position_, param_flags::kNonDifferentiable);
    callback.put_object("intensity", intensity_.get());
  }

 private:
  Array3f position_;
  std::shared_ptr<Texture> intensity_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "point",
                     [](const Properties& props) { return std::make_shared<PointLight>(props); });

}  // namespace kiln::render
