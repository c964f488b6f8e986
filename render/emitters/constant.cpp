// The constant environment (Mitsuba 3's `constant`): the same radiance arriving from every
// direction, sampled uniformly over the sphere; light paths enter the scene's bounding
// sphere from uniformly sampled points.
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "emitters/common.h"

namespace kiln::render {
namespace {

class ConstantEmitter : public InfiniteEmitter {
 public:
  explicit ConstantEmitter(const Properties& props) : radiance_(emission_parameter(props, "radiance")) {
    flags_ = emitter_flags::kInfinite;
    // Accepted as by Mitsuba (every emitter reads it): rotating a uniform environment
    // changes nothing.
    props.get_transform("to_world", kIdentityRows);
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f& sample,
                                                         const Bool& active) const override {
    Array3f d = warp::square_to_uniform_sphere(sample);
    DirectionSample3f ds;
    ds.dist = sample_distance(ref_p);
    ds.p = ref_p + d * ds.dist;
    ds.n = -d;
    ds.uv = sample;
    ds.pdf = warp::square_to_uniform_sphere_pdf(d);
    ds.delta = Bool(false);
    ds.d = d;
    ds.emitter = UInt32(0u);
    Color3f weight = radiance_->eval(SurfaceInteraction{}, active) * (4.0f * kPi);
    return {ds, select(active, weight, Color3f(0.0f, 0.0f, 0.0f))};
  }

  /// Light paths start on the scene's bounding sphere, cosine-distributed inwards.
  std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f& direction_sample,
                                       const Bool& active) const override {
    Array3f outward = warp::square_to_uniform_sphere(position_sample);
    Array3f d = Frame3f(-outward).to_world(warp::square_to_cosine_hemisphere(direction_sample));
    const Float& radius = scene_radius();
    Color3f weight = radiance_->eval(SurfaceInteraction{}, active) * (4.0f * kPi * kPi * radius * radius);
    return {Ray3f{scene_center() + outward * radius, d, Float(kInfinity)}, weight};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f& ds, const Bool& active) const override {
    return select(active, warp::square_to_uniform_sphere_pdf(ds.d), Float(0.0f));
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override { return radiance_->eval(si, active); }

  void traverse(TraversalCallback& callback) override { callback.put_object("radiance", radiance_.get()); }

 private:
  std::shared_ptr<Texture> radiance_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "constant",
                     [](const Properties& props) { return std::make_shared<ConstantEmitter>(props); });

}  // namespace kiln::render
