// The area light (Mitsuba 3's `area`): a shape that emits `radiance` (a texture; required,
// as in Mitsuba) from its front side, sampled by the shape's own direction sampling; light
// paths leave a uniformly sampled point in a cosine-distributed direction.
#include "emitters/common.h"

#include <kiln/render/emitter.h>
#include <kiln/render/plugin.h>
#include <kiln/render/shape.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

namespace kiln::render {
namespace {

/// The required `radiance` (a texture, a color or a uniform spectrum: emitted_texture()).
std::shared_ptr<Texture> required_radiance(const Properties& props) {
  (void)props.get("radiance");  // raises, naming the emitter, when it is missing
  return emitted_texture(props, "radiance", Color3d{});
}

class AreaLight : public Emitter {
 public:
  explicit AreaLight(const Properties& props) : radiance_(required_radiance(props)) {
    flags_ = emitter_flags::kSurface;
    if (!radiance_->is_constant()) flags_ |= emitter_flags::kSpatiallyVarying;
  }

  void set_shape(Shape* shape) override { shape_ = shape; }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f& sample,
                                                         const Bool& active) const override {
    DirectionSample3f ds = shape_->sample_direction(ref_p, sample, active);
    Bool valid = active & (dot(ds.d, ds.n) < 0.0f) & (ds.pdf != 0.0f);
    Color3f radiance = radiance_->eval(at(ds), valid) / ds.pdf;
    return {ds, select(valid, radiance, Color3f(0.0f, 0.0f, 0.0f))};
  }

  Float pdf_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const override {
    Bool valid = active & (dot(ds.d, ds.n) < 0.0f);
    return select(valid, shape_->pdf_direction(ref_p, ds, valid), Float(0.0f));
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    Bool front = active & (cos_theta(si.wi) > 0.0f);
    return select(front, radiance_->eval(si, front), Color3f(0.0f, 0.0f, 0.0f));
  }

  std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f& direction_sample,
                                       const Bool& active) const override {
    auto [ps, weight] = sample_position(Array3f(0.0f, 0.0f, 0.0f), position_sample, active);
    SurfaceInteraction si = surface_at(ps);
    Array3f d = si.to_world(warp::square_to_cosine_hemisphere(direction_sample));
    return {si.spawn_ray(d), weight * kPi};
  }

  std::pair<PositionSample3f, Color3f> sample_position(const Array3f&, const Array2f& sample,
                                                       const Bool& active) const override {
    return sample_surface(*shape_, *radiance_, sample, active);
  }

  void traverse(TraversalCallback& callback) override { callback.put_object("radiance", radiance_.get()); }

 private:
  /// The surface point of a direction sample, for the radiance texture.
  static SurfaceInteraction at(const DirectionSample3f& ds) {
    SurfaceInteraction si;
    si.p = ds.p;
    si.n = ds.n;
    si.uv = ds.uv;
    return si;
  }

  std::shared_ptr<Texture> radiance_;
  Shape* shape_ = nullptr;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "area", [](const Properties& p) { return std::make_shared<AreaLight>(p); });

}  // namespace kiln::render
