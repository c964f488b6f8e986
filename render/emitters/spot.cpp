// The spot light (Mitsuba 3's `spot`): a point light at the origin of `to_world` shining
// along its +z axis, at full intensity within `beam_width` degrees of the axis, falling off
// linearly in angle to zero at `cutoff_angle`, optionally tinted by a texture projected
// over the cone. Light paths leave uniformly within the cone.
#include <kiln/math.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "core/parameter_checks.h"
#include "emitters/common.h"

#include <optional>

namespace kiln::render {
namespace {

class SpotLight : public Emitter {
 public:
  explicit SpotLight(const Properties& props)
      : to_world_(Transform4f::from_rows(props.get_transform("to_world", kIdentityRows))),
        intensity_(emission_parameter(props, "intensity")),
        texture_(sampled_texture(props, "texture", Color3d{1.0, 1.0, 1.0})) {
    flags_ = emitter_flags::kDeltaPosition;
    if (props.has("texture")) {
      if (texture_->is_constant())
        throw_parameter_error(props, "texture",
                              "must vary over the surface (a bitmap or checkerboard texture); for a uniform tint "
                              "scale 'intensity' instead");
      flags_ |= emitter_flags::kSpatiallyVarying;
    }
    double cutoff = props.get_float("cutoff_angle", 20.0);
    double beam = props.get_float("beam_width", cutoff * 0.75);
    if (auto problem = angle_problem(cutoff, beam)) throw_parameter_error(props, problem->first, problem->second);
    cutoff_angle_ = opaque<Float>(float(cutoff));
    beam_width_ = opaque<Float>(float(beam));
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f&,
                                                         const Bool& active) const override {
    DirectionSample3f ds;
    ds.p = to_world_.apply_point(Array3f(0.0f, 0.0f, 0.0f));
    ds.n = Array3f(0.0f, 0.0f, 0.0f);
    ds.uv = Array2f(0.0f, 0.0f);
    ds.pdf = Float(1.0f);
    ds.delta = Bool(true);
    Array3f to_light = ds.p - ref_p;
    ds.dist = norm(to_light);
    Float inv_dist = rcp(ds.dist);
    ds.d = to_light * inv_dist;
    ds.emitter = UInt32(0u);
    Array3f local = to_world_.inverse().apply_vector(-ds.d);
    return {ds, intensity(local, active) * (inv_dist * inv_dist)};
  }

  /// Light paths leave uniformly within the cutoff cone.
  std::pair<Ray3f, Color3f> sample_ray(const Array2f&, const Array2f& direction_sample,
                                       const Bool& active) const override {
    Float cos_cutoff = cos(cutoff_angle_ * kDegreesToRadians);
    Array3f local = warp::square_to_uniform_cone(direction_sample, cos_cutoff);
    Float pdf = warp::square_to_uniform_cone_pdf(local, cos_cutoff);
    Ray3f ray{to_world_.apply_point(Array3f(0.0f, 0.0f, 0.0f)), normalize(to_world_.apply_vector(local)),
              Float(kInfinity)};
    return {ray, intensity(local, active) / pdf};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f&, const Bool&) const override { return Float(0.0f); }

  Color3f eval(const SurfaceInteraction&, const Bool&) const override { return Color3f(0.0f, 0.0f, 0.0f); }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("intensity", intensity_.get());
    callback.put_object("texture", texture_.get());
    callback.put("cutoff_angle", &cutoff_angle_, param_flags::kDifferentiable);
    callback.put("beam_width", &beam_width_, param_flags::kDifferentiable);
    callback.put("to_world", &to_world_, param_flags::kNonDifferentiable);
  }

  void parameters_changed(const std::vector<std::string>&) override {
    if (auto problem = angle_problem(cutoff_angle_.item(), beam_width_.item()))
      throw_parameter_error(*this, problem->first, problem->second);
  }

 private:
  /// The angle parameter that is out of range and why, or nothing: 0 < cutoff < 180 (below
  /// 90 with a texture, which is projected onto the plane at distance 1), 0 <= beam <= cutoff.
  std::optional<std::pair<std::string, std::string>> angle_problem(double cutoff, double beam) const {
    double limit = (flags_ & emitter_flags::kSpatiallyVarying) ? 90.0 : 180.0;
    if (!(cutoff > 0.0 && cutoff < limit))
      return std::pair("cutoff_angle", "is " + std::to_string(cutoff) + " degrees; accepted: more than 0, less than " +
                                           std::to_string(int(limit)) +
                                           (limit < 180 ? " (a 'texture' is projected within a hemisphere)" : ""));
    if (!(beam >= 0.0 && beam <= cutoff))
      return std::pair("beam_width", "is " + std::to_string(beam) + " degrees; accepted: 0 to cutoff_angle (" +
                                         std::to_string(cutoff) + ")");
    return std::nullopt;
  }

  /// The intensity sent along the local direction `d` (0 outside the cone).
  Color3f intensity(const Array3f& d, const Bool& active) const {
    Float falloff = falloff_curve(d);
    Bool lit = active & (falloff > 0.0f);
    Color3f value = intensity_->eval(SurfaceInteraction{}, lit);
    if (flags_ & emitter_flags::kSpatiallyVarying) {
      SurfaceInteraction si;
      si.uv = direction_to_uv(d);
      value = value * texture_->eval(si, lit);
    }
    return select(lit, value * falloff, Color3f(0.0f, 0.0f, 0.0f));
  }

  /// The fraction of the intensity sent along the local direction `d` (not normalized).
  Float falloff_curve(const Array3f& d) const {
    Float cos_theta = normalize(d).z;
    Float cutoff = cutoff_angle_ * kDegreesToRadians, beam = beam_width_ * kDegreesToRadians;
    Float transition = (cutoff - acos(cos_theta)) * rcp(cutoff - beam);
    Float inside = select(cos_theta >= cos(beam), Float(1.0f), transition);
    return select(cos_theta > cos(cutoff), inside, Float(0.0f));
  }

  /// Where the local direction `d` meets the texture: the cone's cross-section at distance
  /// 1 maps to [0, 1]².
  Array2f direction_to_uv(const Array3f& d) const {
    Float scale = 0.5f * rcp(d.z * tan(cutoff_angle_ * kDegreesToRadians));
    return Array2f(0.5f + d.x * scale, 0.5f + d.y * scale);
  }

  Transform4f to_world_;
  std::shared_ptr<Texture> intensity_, texture_;
  Float cutoff_angle_, beam_width_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "spot",
                     [](const Properties& props) { return std::make_shared<SpotLight>(props); });

}  // namespace kiln::render
