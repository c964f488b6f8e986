// The checkerboard texture (Mitsuba 3's `checkerboard`): `color0` where the fractional parts
// of the transformed u and v lie on the same side of ½, `color1` elsewhere (2 x 2 squares
// per unit of uv).
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>

namespace kiln::render {
namespace {

class Checkerboard : public Texture {
 public:
  explicit Checkerboard(const Properties& props)
      : color0_(texture_parameter(props, "color0", Color3d{0.4, 0.4, 0.4})),
        color1_(texture_parameter(props, "color1", Color3d{0.2, 0.2, 0.2})),
        to_uv_(Transform4f::from_rows(props.get_transform("to_uv", kIdentityRows))) {}

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    Bool first = first_color(si);
    return select(first, color0_->eval(si, active & first), color1_->eval(si, active & !first));
  }

  Float eval_1(const SurfaceInteraction& si, const Bool& active) const override {
    Bool first = first_color(si);
    return select(first, color0_->eval_1(si, active & first), color1_->eval_1(si, active & !first));
  }

  Float mean() const override { return 0.5f * (color0_->mean() + color1_->mean()); }

  void traverse(TraversalCallback& callback) override {
    callback.put("to_uv", &to_uv_, param_flags::kNonDifferentiable);
    callback.put_object("color0", color0_.get());
    callback.put_object("color1", color1_.get());
  }

 private:
  /// Lanes that show color0.
  Bool first_color(const SurfaceInteraction& si) const {
    Array2f uv = transform_uv(to_uv_, si.uv);
    Bool upper_u = uv.x - floor(uv.x) > 0.5f, upper_v = uv.y - floor(uv.y) > 0.5f;
    return upper_u == upper_v;
  }

  std::shared_ptr<Texture> color0_, color1_;
  Transform4f to_uv_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Texture, "checkerboard",
                     [](const Properties& props) { return std::make_shared<Checkerboard>(props); });

}  // namespace kiln::render
