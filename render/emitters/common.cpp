// Emitted-value parameters, surface emitters' position sampling and the bounding sphere of
// infinite emitters.
#include "emitters/common.h"

#include "core/parameter_checks.h"
#include "textures/uniform.h"

#include <algorithm>

namespace kiln::render {

std::shared_ptr<Texture> sampled_texture(const Properties& props, const std::string& name, const Color3d& fallback) {
  std::shared_ptr<Texture> texture = texture_parameter(props, name, fallback);
  if (texture->reads_hit_shape())
    throw_parameter_error(props, name,
                          "is a '" + texture->plugin() +
                              "' texture, which reads the shape a ray hits; an emitter's points are also sampled, "
                              "where nothing was hit (Mitsuba cannot sample it either)");
  return texture;
}

std::shared_ptr<Texture> emitted_texture(const Properties& props, const std::string& name, const Color3d& fallback) {
  if (props.has(name))
    if (const auto* color = std::get_if<Color3d>(&props.get(name)); color && color->uniform_spectrum) {
      Color3d emitted;
      for (size_t c = 0; c < 3; ++c) emitted[c] = (*color)[c] * kEqualEnergySrgb[c];
      return std::make_shared<UniformTexture>(emitted);
    }
  return sampled_texture(props, name, fallback);
}

std::shared_ptr<Texture> emission_parameter(const Properties& props, const std::string& name) {
  if (props.has(name)) {
    const Properties::Value& value = props.get(name);
    double smallest = 0;
    if (const auto* number = std::get_if<double>(&value)) smallest = *number;
    if (const auto* integer = std::get_if<int64_t>(&value)) smallest = double(*integer);
    if (const auto* color = std::get_if<Color3d>(&value)) smallest = *std::min_element(color->begin(), color->end());
    if (smallest < 0)
      throw_parameter_error(props, name, "must not be negative (an emitted value), got " + std::to_string(smallest));
  }
  std::shared_ptr<Texture> texture = emitted_texture(props, name, Color3d{{1.0, 1.0, 1.0}});
  if (!texture->is_constant())
    throw_parameter_error(props, name,
                          "must not vary over the surface, as a '" + texture->plugin() +
                              "' texture does (accepted: a float, an RGB color or a constant texture)");
  return texture;
}

std::pair<PositionSample3f, Color3f> sample_surface(const Shape& shape, const Texture& radiance, const Array2f& sample,
                                                    const Bool& active) {
  PositionSample3f ps = shape.sample_position(sample, active);
  Bool valid = active & (ps.pdf > 0.0f);
  Color3f weight = radiance.eval(surface_at(ps), valid) / ps.pdf;
  return {ps, select(valid, weight, Color3f(0.0f, 0.0f, 0.0f))};
}

void InfiniteEmitter::set_scene_bounds(const std::array<float, 3>& center, float radius) {
  center_ = Array3f(opaque<Float>(center[0]), opaque<Float>(center[1]), opaque<Float>(center[2]));
  radius_ = opaque<Float>(std::max(kRayEpsilon, radius * (1.0f + kRayEpsilon)));
}

Float InfiniteEmitter::sample_distance(const Array3f& ref_p) const {
  return 2.0f * max(radius_, norm(ref_p - center_));
}

}  // namespace kiln::render
