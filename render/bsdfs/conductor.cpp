// The smooth conductor, Mitsuba 3's `conductor`: a perfect mirror weighted by the Fresnel
// reflectance of a complex index eta + i k (default eta 0, k 1: reflects everything).
#include <kiln/render/fresnel.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/conductor_ior.h"
#include "bsdfs/delta_bsdf.h"

namespace kiln::render {
namespace {

class Conductor : public DeltaBSDF {
 public:
  explicit Conductor(const Properties& props)
      : ior_(complex_ior_parameters(props)),
        specular_reflectance_(texture_parameter(props, "specular_reflectance", {1, 1, 1})) {
    set_components({bsdf_flags::kDeltaReflection | bsdf_flags::kFrontSide});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float&,
                                          const Array2f&, const Bool& active) const override {
    Float cos_theta_i = cos_theta(si.wi);
    Bool valid = active & (cos_theta_i > 0.0f);
    if (!ctx.is_enabled(bsdf_flags::kDeltaReflection)) valid = Bool(false);
    BSDFSample3f bs;
    bs.wo = reflect(si.wi);
    bs.pdf = select(valid, Float(1.0f), Float(0.0f));
    bs.eta = Float(1.0f);
    bs.sampled_type = UInt32(bsdf_flags::kDeltaReflection);
    bs.sampled_component = UInt32(0u);
    Color3f value = specular_reflectance_->eval(si, valid) *
                    fresnel_conductor(cos_theta_i, ior_.eta->eval(si, valid), ior_.k->eval(si, valid));
    return {bs, select(valid, value, Color3f(0.0f, 0.0f, 0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("eta", ior_.eta.get());
    callback.put_object("k", ior_.k.get());
    callback.put_object("specular_reflectance", specular_reflectance_.get());
  }

 private:
  ComplexIor ior_;
  std::shared_ptr<Texture> specular_reflectance_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "conductor",
                     [](const Properties& props) { return std::make_shared<Conductor>(props); });

}  // namespace kiln::render
