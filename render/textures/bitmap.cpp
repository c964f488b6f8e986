// The image texture (Mitsuba 3's `bitmap`): a PNG, JPEG, OpenEXR or Radiance image (or one
// given in memory: load_dict's `data` / `bitmap`) read at uv with nearest or bilinear
// filtering and a wrap mode, on kiln::Texture2f. Pixel (x, y) is centred
// at uv = ((x + ½) / width, (y + ½) / height), the first row at v = 0 (Mitsuba's
// convention). 8-bit images are sRGB-decoded to linear unless `raw`; images with alpha lose
// it; gray images stay one channel (read as gray RGB).
#include <kiln/render/image.h>
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>
#include <kiln/texture.h>

#include "core/parameter_checks.h"

#include <algorithm>

namespace kiln::render {
namespace {

FilterMode filter_parameter(const Properties& props) {
  return one_of(props, "filter_type", "bilinear", {"bilinear", "nearest"}) == "bilinear" ? FilterMode::Linear
                                                                                         : FilterMode::Nearest;
}

WrapMode wrap_parameter(const Properties& props) {
  std::string mode = one_of(props, "wrap_mode", "repeat", {"repeat", "mirror", "clamp"});
  return mode == "repeat" ? WrapMode::Repeat : mode == "mirror" ? WrapMode::Mirror : WrapMode::Clamp;
}

/// The image (`filename`, `data` or `bitmap`) with 1 or 3 channels and at least 2 x 2 pixels
/// (smaller images repeat their last row and column, as Mitsuba pads them).
Bitmap texture_image(const Properties& props) {
  Bitmap image = image_source(props, props.get_bool("raw", false));
  return pad_image(color_channels(image, image.channels >= 3 ? 3 : 1), 2, 2);
}

class BitmapTexture : public Texture {
 public:
  explicit BitmapTexture(const Properties& props)
      : filter_(filter_parameter(props)),
        wrap_(wrap_parameter(props)),
        to_uv_(Transform4f::from_rows(props.get_transform("to_uv", kIdentityRows))) {
    Bitmap image = texture_image(props);
    shape_ = {image.height, image.width, image.channels};
    data_ = Float::from(image.pixels);
    update_mean();
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    std::vector<Float> value = lookup(si, active);
    if (value.size() == 1) return Color3f(value[0], value[0], value[0]);
    return Color3f(value[0], value[1], value[2]);
  }

  Float eval_1(const SurfaceInteraction& si, const Bool& active) const override {
    std::vector<Float> value = lookup(si, active);
    if (value.size() == 1) return value[0];
    return luminance(Color3f(value[0], value[1], value[2]));
  }

  Float mean() const override { return mean_; }

  void traverse(TraversalCallback& callback) override {
    callback.put("data", &data_, param_flags::kDifferentiable);
    callback.put("to_uv", &to_uv_, param_flags::kNonDifferentiable);
  }

  void parameters_changed(const std::vector<std::string>& keys) override {
    if (keys.empty() || std::find(keys.begin(), keys.end(), "data") != keys.end()) update_mean();
  }

 private:
  /// The channels filtered at the transformed uv.
  std::vector<Float> lookup(const SurfaceInteraction& si, const Bool& active) const {
    Texture2f texture(TensorXf(data_, shape_), filter_, wrap_);
    return texture.eval(transform_uv(to_uv_, si.uv), active);
  }

  /// The mean luminance (or value, for one channel) of the pixels, as Mitsuba's mean().
  void update_mean() {
    std::vector<float> pixels = data_.to_vector();
    size_t channels = shape_[2];
    double sum = 0;
    for (size_t i = 0; i < pixels.size(); i += channels)
      sum += channels == 1 ? pixels[i] : luminance(pixels[i], pixels[i + 1], pixels[i + 2]);
    mean_ = opaque<Float>(float(sum / double(pixels.size() / channels)));
  }

  FilterMode filter_;
  WrapMode wrap_;
  Transform4f to_uv_;
  Shape shape_;  ///< height, width, channels
  Float data_;   ///< the pixels, linear, row by row from v = 0
  Float mean_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Texture, "bitmap",
                     [](const Properties& props) { return std::make_shared<BitmapTexture>(props); });

}  // namespace kiln::render
