// Textures as parameters: nested texture plugins, or floats and colors made constant
// textures; the uv transform textures share.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>

#include "textures/uniform.h"

namespace kiln::render {

Float Texture::eval_1(const SurfaceInteraction& si, const Bool& active) const {
  Color3f value = eval(si, active);
  return (value.x + value.y + value.z) * (1.0f / 3.0f);
}

std::shared_ptr<Texture> texture_parameter(const Properties& props, const std::string& name) {
  const Properties::Value& value = props.get(name);
  if (const auto* number = std::get_if<double>(&value))
    return std::make_shared<UniformTexture>(Color3d{*number, *number, *number});
  if (const auto* integer = std::get_if<int64_t>(&value)) {
    double number = double(*integer);
    return std::make_shared<UniformTexture>(Color3d{number, number, number});
  }
  if (const auto* color = std::get_if<Color3d>(&value)) return std::make_shared<UniformTexture>(*color);
  if (const auto* object = std::get_if<std::shared_ptr<Object>>(&value))
    if (auto texture = std::dynamic_pointer_cast<Texture>(*object)) return texture;
  throw TypeError(props.describe(name) + ": must be a texture, a float or an RGB color, found " +
                  describe_value(value));
}

std::shared_ptr<Texture> texture_parameter(const Properties& props, const std::string& name, const Color3d& fallback) {
  if (!props.has(name)) return std::make_shared<UniformTexture>(fallback);
  return texture_parameter(props, name);
}

Array2f transform_uv(const Transform4f& to_uv, const Array2f& uv) {
  const Matrix4f& m = to_uv.matrix();
  return Array2f(fma(m(0, 0), uv.x, fma(m(0, 1), uv.y, m(0, 3))), fma(m(1, 0), uv.x, fma(m(1, 1), uv.y, m(1, 3))));
}

}  // namespace kiln::render
