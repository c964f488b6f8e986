// The smooth dielectric, Mitsuba 3's `dielectric`: the interface between two media of
// indices int_ior and ext_ior (glass in air by default), reflecting and refracting as the
// Fresnel equations say.
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/delta_bsdf.h"
#include "bsdfs/specular_factors.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

class Dielectric : public DeltaBSDF {
 public:
  explicit Dielectric(const Properties& props)
      : eta_(opaque<Float>(interface_ior(props, "bk7").eta())), specular_(props, true) {
    set_components(
        {kDeltaReflection | kFrontSide | kBackSide, kDeltaTransmission | kFrontSide | kBackSide | kNonSymmetric});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f&, const Bool& active) const override {
    FresnelResult f = fresnel(cos_theta(si.wi), eta_);
    LobeChoice lobe = choose_lobe(ctx.is_enabled(kDeltaReflection, 0), ctx.is_enabled(kDeltaTransmission, 1),
                                  f.reflectance, sample1, active);
    BSDFSample3f bs;
    bs.wo = select(lobe.reflected, reflect(si.wi), refract(si.wi, f.cos_theta_t, f.eta_ti));
    bs.pdf = lobe.pdf;
    bs.eta = select(lobe.reflected, Float(1.0f), f.eta_it);
    bs.sampled_component = select(lobe.reflected, UInt32(0u), UInt32(1u));
    bs.sampled_type = select(lobe.reflected, UInt32(kDeltaReflection), UInt32(kDeltaTransmission));

    Color3f value = specular_.apply(si, Color3f(lobe.weight), lobe.reflected, lobe.transmitted);
    // Radiance is compressed into the smaller solid angle on the denser side: scale by
    // 1/eta² (importance, flowing the other way, is not).
    if (ctx.mode == TransportMode::Radiance) value = select(lobe.transmitted, value * (f.eta_ti * f.eta_ti), value);
    return {bs, select(lobe.valid, value, Color3f(0.0f, 0.0f, 0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put("eta", &eta_, param_flags::kNonDifferentiable);
    specular_.traverse(callback);
  }

 private:
  Float eta_;  ///< int_ior / ext_ior
  SpecularFactors specular_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "dielectric",
                     [](const Properties& props) { return std::make_shared<Dielectric>(props); });

}  // namespace kiln::render
