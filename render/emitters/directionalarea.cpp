// The directional area light (Mitsuba 3's `directionalarea`): a shape whose every point
// emits `radiance` (a texture, 1 by default; W/m² per unit area) along its normal only. A
// delta direction: camera paths never find it and emitter sampling never picks it, so only
// light paths (the ptracer integrator) see its light, as in Mitsuba.
#include "emitters/common.h"

#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

namespace kiln::render {
namespace {

class DirectionalAreaLight : public Emitter {
 public:
  explicit DirectionalAreaLight(const Properties& props)
      : radiance_(emitted_texture(props, "radiance", Color3d{{1.0, 1.0, 1.0}})) {
    flags_ = emitter_flags::kSurface | emitter_flags::kDeltaDirection;
    if (!radiance_->is_constant()) flags_ |= emitter_flags::kSpatiallyVarying;
  }

  void set_shape(Shape* shape) override { shape_ = shape; }

  /// Never connects: the reference point lies along a point's normal with probability 0.
  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f&,
                                                         const Bool&) const override {
    DirectionSample3f ds;
    Float zero(0.0f);
    ds.p = ds.n = ds.d = Array3f(zero, zero, zero);
    ds.uv = Array2f(zero, zero);
    ds.pdf = ds.dist = zero + zeros<Float>(ref_p.x.size());
    ds.delta = Bool(true);
    ds.emitter = UInt32(0u);
    return {ds, Color3f(zero, zero, zero)};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f&, const Bool&) const override { return Float(0.0f); }

  Color3f eval(const SurfaceInteraction&, const Bool&) const override { return Color3f(0.0f, 0.0f, 0.0f); }

  std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f&,
                                       const Bool& active) const override {
    auto [ps, weight] = sample_position(Array3f(0.0f, 0.0f, 0.0f), position_sample, active);
    return {surface_at(ps).spawn_ray(ps.n), weight};
  }

  std::pair<PositionSample3f, Color3f> sample_position(const Array3f&, const Array2f& sample,
                                                       const Bool& active) const override {
    return sample_surface(*shape_, *radiance_, sample, active);
  }

  void traverse(TraversalCallback& callback) override { callback.put_object("radiance", radiance_.get()); }

 private:
  std::shared_ptr<Texture> radiance_;
  Shape* shape_ = nullptr;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "directionalarea",
                     [](const Properties& p) { return std::make_shared<DirectionalAreaLight>(p); });

}  // namespace kiln::render
