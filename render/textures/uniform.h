// The constant texture (Mitsuba 3's `uniform`): what a float or RGB value given for a
// texture parameter becomes.
#pragma once

#include <kiln/render/texture.h>

namespace kiln::render {

class UniformTexture : public Texture {
 public:
  explicit UniformTexture(const Properties& props);
  /// A constant `value` made by a plugin for a float or RGB parameter.
  explicit UniformTexture(const Color3d& value);

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override;
  Float mean() const override;
  bool is_constant() const override { return true; }
  void traverse(TraversalCallback& callback) override;

 private:
  Color3f value_;
};

}  // namespace kiln::render
