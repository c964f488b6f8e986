// The image texture (Mitsuba 3's `bitmap`): a PNG, JPEG, OpenEXR or Radiance image (or one
// given in memory: load_dict's `data` / `bitmap`) read at uv with nearest or bilinear
// filtering and a wrap mode, on kiln::Texture2f. Pixel (x, y) is centred
// at uv = ((x + ½) / width, (y + ½) / height), the first row at v = 0 (Mitsuba's
// convention). 8-bit images are sRGB-decoded to linear unless `raw`; images with alpha lose
// it; gray images stay one channel (read as gray RGB). `format` (Mitsuba's storage precision)
// is accepted; Kiln stores every texture in float32.
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
  // Mitsuba's storage precisions; Kiln keeps every texture in float32 (its "variant").
  one_of(props, "format", "auto", {"auto", "variant", "float16", "fp16", "uint8"});
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
    data_ = valid_data_ = TensorXf::from(image.pixels.data(), {image.height, image.width, image.channels});
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
    const kiln::Shape shape = data_.shape();
    if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 3) || shape[0] == 0 || shape[1] == 0) {
      data_ = valid_data_;  // a refused value leaves the texture as it was
      throw_parameter_error(*this, "data",
                            "must be a tensor of shape (height, width, channels) with 1 or 3 channels, got " +
                                kiln::detail::shape_string(shape));
    }
    valid_data_ = data_;
    if (keys.empty() || std::find(keys.begin(), keys.end(), "data") != keys.end()) update_mean();
  }

 private:
  /// The channels filtered at the transformed uv.
  std::vector<Float> lookup(const SurfaceInteraction& si, const Bool& active) const {
    Texture2f texture(data_, filter_, wrap_);
    return texture.eval(transform_uv(to_uv_, si.uv), active);
  }

  /// The mean luminance (or value, for one channel) of the pixels, as Mitsuba's mean().
  void update_mean() {
    std::vector<float> pixels = data_.array().to_vector();
    size_t channels = data_.shape()[2];
    double sum = 0;
    for (size_t i = 0; i < pixels.size(); i += channels)
      sum += channels == 1 ? pixels[i] : luminance(pixels[i], pixels[i + 1], pixels[i + 2]);
    mean_ = opaque<Float>(float(sum / double(pixels.size() / channels)));
  }

  FilterMode filter_;
  WrapMode wrap_;
  Transform4f to_uv_;
  TensorXf data_;        ///< height × width × channels, linear, row by row from v = 0
  TensorXf valid_data_;  ///< the last value accepted (what a refused one goes back to)
  Float mean_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Texture, "bitmap",
                     [](const Properties& props) { return std::make_shared<BitmapTexture>(props); });

}  // namespace kiln::render
