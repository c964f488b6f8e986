// The constant texture: one opaque RGB value everywhere.
#include "textures/uniform.h"

#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

namespace kiln::render {
namespace {
/// The `value` parameter: a color, or a float meaning gray.
Color3d uniform_value(const Properties& props) {
  if (props.has("value") && !std::holds_alternative<Color3d>(props.get("value"))) {
    double gray = props.get_float("value");
    return {gray, gray, gray};
  }
  return props.get_color("value");
}
}  // namespace

UniformTexture::UniformTexture(const Color3d& value)
    : value_(opaque<Float>(float(value[0])), opaque<Float>(float(value[1])), opaque<Float>(float(value[2]))) {}

UniformTexture::UniformTexture(const Properties& props) : UniformTexture(uniform_value(props)) {}

Color3f UniformTexture::eval(const SurfaceInteraction&, const Bool& active) const {
  return select(active, value_, Color3f(0.0f, 0.0f, 0.0f));
}

Float UniformTexture::mean() const { return (value_.x + value_.y + value_.z) * (1.0f / 3.0f); }

void UniformTexture::traverse(TraversalCallback& callback) {
  callback.put("value", &value_, param_flags::kDifferentiable);
}

KILN_REGISTER_PLUGIN(PluginKind::Texture, "uniform",
                     [](const Properties& props) { return std::make_shared<UniformTexture>(props); });

}  // namespace kiln::render
