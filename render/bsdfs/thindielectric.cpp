// The thin dielectric, Mitsuba 3's `thindielectric`: a sheet of glass so thin that light
// leaves it on the far side along its incident direction (a null lobe), after any number
// of reflections inside. Reflection sums r + t²r + t²r³ + ... = 2r / (1 + r).
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/delta_bsdf.h"
#include "bsdfs/specular_factors.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

class ThinDielectric : public DeltaBSDF {
 public:
  explicit ThinDielectric(const Properties& props)
      : eta_(opaque<Float>(interface_ior(props, "bk7").eta())), specular_(props, true) {
    set_components({kDeltaReflection | kFrontSide | kBackSide, kNull | kFrontSide | kBackSide});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f&, const Bool& active) const override {
    Float r = fresnel(abs(cos_theta(si.wi)), eta_).reflectance;
    r = r * (2.0f / (1.0f + r));  // the internal reflections' geometric series
    LobeChoice lobe = choose_lobe(ctx.is_enabled(kDeltaReflection, 0), ctx.is_enabled(kNull, 1), r, sample1, active);
    BSDFSample3f bs;
    bs.wo = select(lobe.reflected, reflect(si.wi), -si.wi);
    bs.pdf = lobe.pdf;
    bs.eta = Float(1.0f);
    bs.sampled_component = select(lobe.reflected, UInt32(0u), UInt32(1u));
    bs.sampled_type = select(lobe.reflected, UInt32(kDeltaReflection), UInt32(kNull));
    Color3f value = specular_.apply(si, Color3f(lobe.weight), lobe.reflected, lobe.transmitted);
    return {bs, select(lobe.valid, value, Color3f(0.0f, 0.0f, 0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put("eta", &eta_, param_flags::kDifferentiable | param_flags::kDiscontinuous);
    specular_.traverse(callback);
  }

 private:
  Float eta_;  ///< int_ior / ext_ior
  SpecularFactors specular_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "thindielectric",
                     [](const Properties& props) { return std::make_shared<ThinDielectric>(props); });

}  // namespace kiln::render
