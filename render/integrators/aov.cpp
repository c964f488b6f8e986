// Arbitrary output variables (Mitsuba 3's `aov`): `aovs` = "name:type, ..." with the types
// albedo, depth, position, uv, geo_normal, sh_normal, dp_du, dp_dv, prim_index and
// shape_index, channel names as Mitsuba's (depth → "name.T", position → "name.X/Y/Z" ...).
// As Mitsuba's, the image holds only these channels: each nested sampling integrator's color
// as "<child name>.R/G/B" and its own AOVs, then the listed AOVs.
// duv_dx/duv_dy need ray differentials, which kiln.render does not trace: an error.
#include "core/parameter_checks.h"

#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>
#include <kiln/render/traverse.h>

#include <sstream>

namespace kiln::render {
namespace {

enum class AovType { Albedo, Depth, Position, UV, GeometricNormal, ShadingNormal, DpDu, DpDv, PrimIndex, ShapeIndex };

struct AovKind {
  const char* name;
  AovType type;
  const char* suffixes;  ///< one letter per channel
};

constexpr AovKind kAovKinds[] = {
    {"albedo", AovType::Albedo, "RGB"},
    {"depth", AovType::Depth, "T"},
    {"position", AovType::Position, "XYZ"},
    {"uv", AovType::UV, "UV"},
    {"geo_normal", AovType::GeometricNormal, "XYZ"},
    {"sh_normal", AovType::ShadingNormal, "XYZ"},
    {"dp_du", AovType::DpDu, "XYZ"},
    {"dp_dv", AovType::DpDv, "XYZ"},
    {"prim_index", AovType::PrimIndex, "I"},
    {"shape_index", AovType::ShapeIndex, "I"},
};

std::string trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\n"), last = text.find_last_not_of(" \t\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

class AovIntegrator : public SamplingIntegrator {
 public:
  explicit AovIntegrator(const Properties& props) : SamplingIntegrator(props) {
    for (const auto& [name, object] : props.objects()) {
      auto nested = std::dynamic_pointer_cast<SamplingIntegrator>(object);
      if (!nested) throw_parameter_error(props, name, "must be a sampling integrator (path, direct or aov)");
      nested_.push_back({name, nested});
      for (const char* channel : {".R", ".G", ".B"}) names_.push_back(name + channel);
      for (const std::string& aov : nested->aov_names()) names_.push_back(name + "." + aov);
    }
    std::stringstream list(props.get_string("aovs", ""));
    for (std::string token; std::getline(list, token, ',');) {
      token = trim(token);
      if (token.empty()) continue;
      size_t colon = token.find(':');
      std::string name = trim(token.substr(0, colon)),
                  type = colon == std::string::npos ? "" : trim(token.substr(colon + 1));
      const AovKind* kind = nullptr;
      for (const AovKind& k : kAovKinds)
        if (type == k.name) kind = &k;
      if (name.empty() || !kind) {
        std::string accepted;
        for (const AovKind& k : kAovKinds) accepted += std::string(accepted.empty() ? "" : ", ") + k.name;
        throw_parameter_error(props, "aovs",
                              "has \"" + token + "\"; each entry must be <name>:<type>, types: " + accepted);
      }
      types_.push_back(kind->type);
      for (const char* c = kind->suffixes; *c; ++c) names_.push_back(name + "." + std::string(1, *c));
    }
  }

  std::vector<std::string> aov_names() const override { return names_; }
  bool returns_color() const override { return false; }

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active) const override {
    return sample_all(scene, rng, ray, active, /*for_derivatives=*/false);
  }
  /// The nested integrators' own estimators for derivatives (prb's path replay).
  RaySample sample_for_derivatives(const Scene& scene, PCG32& rng, const Ray3f& ray,
                                   const Bool& active) const override {
    return sample_all(scene, rng, ray, active, /*for_derivatives=*/true);
  }
  void check_reverse_mode() const override {
    ControlModeScope render_default(mode_);  // as while rendering: nested integrators follow it
    for (const auto& [name, integrator] : nested_) integrator->check_reverse_mode();
  }

  void traverse(TraversalCallback& callback) override {
    for (const auto& [name, integrator] : nested_) callback.put_object(name, integrator.get());
  }

 private:
  /// The nested integrators' samples (each in its own `mode`, if it has one), then the AOVs.
  RaySample sample_all(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active,
                       bool for_derivatives) const {
    RaySample out{Color3f(0.0f, 0.0f, 0.0f), Bool(false), {}};
    for (const auto& [name, integrator] : nested_) {
      RaySample inner;
      {
        ControlModeScope own_mode(integrator->mode());
        inner = for_derivatives ? integrator->sample_for_derivatives(scene, rng, ray, active)
                                : integrator->sample(scene, rng, ray, active);
      }
      for (const Float& value : {inner.radiance.x, inner.radiance.y, inner.radiance.z}) out.aovs.push_back(value);
      out.aovs.insert(out.aovs.end(), inner.aovs.begin(), inner.aovs.end());
    }
    if (types_.empty()) return out;
    SurfaceInteraction si = scene.ray_intersect(ray, active);
    Bool hit = active & si.is_valid();
    auto push = [&](const auto&... values) { (out.aovs.push_back(select(hit, values, Float(0.0f))), ...); };
    for (AovType type : types_) {
      switch (type) {
        case AovType::Albedo: {
          Color3f albedo = scene.bsdf_diffuse_reflectance(si, hit);
          push(albedo.x, albedo.y, albedo.z);
          break;
        }
        case AovType::Depth: push(si.t); break;
        case AovType::Position: push(si.p.x, si.p.y, si.p.z); break;
        case AovType::UV: push(si.uv.x, si.uv.y); break;
        case AovType::GeometricNormal: push(si.n.x, si.n.y, si.n.z); break;
        case AovType::ShadingNormal: push(si.sh_frame.n.x, si.sh_frame.n.y, si.sh_frame.n.z); break;
        case AovType::DpDu: push(si.dp_du.x, si.dp_du.y, si.dp_du.z); break;
        case AovType::DpDv: push(si.dp_dv.x, si.dp_dv.y, si.dp_dv.z); break;
        case AovType::PrimIndex: push(cast<float>(si.prim_index)); break;
        case AovType::ShapeIndex: push(cast<float>(si.shape - 1u)); break;
      }
    }
    return out;
  }

  std::vector<std::pair<std::string, std::shared_ptr<SamplingIntegrator>>> nested_;
  std::vector<AovType> types_;
  std::vector<std::string> names_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "aov",
                     [](const Properties& p) { return std::make_shared<AovIntegrator>(p); });

}  // namespace kiln::render
