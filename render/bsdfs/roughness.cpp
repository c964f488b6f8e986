// Reading the microfacet roughness parameters, with Mitsuba's rules and clear errors.
#include "bsdfs/roughness.h"

#include <kiln/errors.h>
#include <kiln/render/traverse.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/parameter_checks.h"

namespace kiln::render {
namespace {

constexpr double kDefaultAlpha = 0.1;

/// Throws unless `value` is a finite roughness >= 0.
void check_roughness(const Properties& props, const std::string& name, double value) {
  if (value >= 0 && std::isfinite(value)) return;
  std::ostringstream text;
  text << "must be a roughness >= 0, got " << value;
  throw_parameter_error(props, name, text.str());
}

/// A roughness texture; plain numbers and colors are checked (a nested texture cannot be).
std::shared_ptr<Texture> roughness_texture(const Properties& props, const std::string& name) {
  if (props.has(name)) {
    const Properties::Value& value = props.get(name);
    if (std::holds_alternative<double>(value) || std::holds_alternative<int64_t>(value))
      check_roughness(props, name, props.get_float(name));
    if (const auto* color = std::get_if<Color3d>(&value))
      for (double channel : *color) check_roughness(props, name, channel);
  }
  return texture_parameter(props, name, {kDefaultAlpha, kDefaultAlpha, kDefaultAlpha});
}

/// Throws unless the parameters give either `alpha` or both `alpha_u` and `alpha_v`.
void check_roughness_names(const Properties& props) {
  bool has_u = props.has("alpha_u"), has_v = props.has("alpha_v");
  if (props.has("alpha") && (has_u || has_v))
    throw_parameter_error(props, "alpha",
                          "cannot be given together with " + std::string(has_u ? "alpha_u" : "alpha_v") +
                              ": give either alpha, or alpha_u and alpha_v");
  if (has_u != has_v) {
    const char* given = has_u ? "alpha_u" : "alpha_v";
    throw_parameter_error(props, given,
                          std::string("needs its partner ") + (has_u ? "alpha_v" : "alpha_u") +
                              ": anisotropic roughness takes both alpha_u and alpha_v");
  }
}

}  // namespace

MicrofacetType microfacet_type(const Properties& props) {
  std::string name = props.get_string("distribution", "beckmann");
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (lower == "beckmann") return MicrofacetType::Beckmann;
  if (lower == "ggx") return MicrofacetType::GGX;
  throw_parameter_error(props, "distribution",
                        "names no known microfacet distribution: \"" + name + "\"; accepted: \"beckmann\", \"ggx\"");
}

TexturedRoughness::TexturedRoughness(const Properties& props)
    : type_(microfacet_type(props)), sample_visible_(props.get_bool("sample_visible", true)) {
  check_roughness_names(props);
  if (props.has("alpha_u")) {
    alpha_u_ = roughness_texture(props, "alpha_u");
    alpha_v_ = roughness_texture(props, "alpha_v");
  } else {
    alpha_u_ = alpha_v_ = roughness_texture(props, "alpha");
  }
}

MicrofacetDistribution TexturedRoughness::distribution(const SurfaceInteraction& si, const Bool& active) const {
  if (!anisotropic()) return MicrofacetDistribution(type_, alpha_u_->eval_1(si, active), sample_visible_);
  return MicrofacetDistribution(type_, alpha_u_->eval_1(si, active), alpha_v_->eval_1(si, active), sample_visible_);
}

void TexturedRoughness::traverse(TraversalCallback& callback) const {
  if (!anisotropic()) {
    callback.put_object("alpha", alpha_u_.get());
  } else {
    callback.put_object("alpha_u", alpha_u_.get());
    callback.put_object("alpha_v", alpha_v_.get());
  }
}

float isotropic_alpha(const Properties& props) {
  check_roughness_names(props);
  if (!props.has("alpha_u")) {
    double alpha = props.get_float("alpha", kDefaultAlpha);
    check_roughness(props, "alpha", alpha);
    return float(alpha);
  }
  double alpha_u = props.get_float("alpha_u"), alpha_v = props.get_float("alpha_v");
  check_roughness(props, "alpha_u", alpha_u);
  check_roughness(props, "alpha_v", alpha_v);
  if (alpha_u != alpha_v)
    throw_plugin_error(props, "alpha_u (" + props.source_of("alpha_u") + ") and alpha_v (" +
                                  props.source_of("alpha_v") +
                                  ") differ, but this plugin supports isotropic roughness only: "
                                  "give one alpha");
  return float(alpha_u);
}

}  // namespace kiln::render
