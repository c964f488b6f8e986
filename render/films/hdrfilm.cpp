// The high dynamic range film (Mitsuba 3's `hdrfilm`): RGB, RGBA, luminance or luminance
// with alpha, plus the integrator's AOVs. `file_format` and `component_format` are accepted
// with Mitsuba's values; they only matter when writing files, which kr.write_image does
// by extension (OpenEXR keeps 32-bit floats). `sample_border` samples the filter's reach
// beyond the crop window too (Film::border()).
#include "core/parameter_checks.h"

#include <kiln/construct.h>
#include <kiln/render/film.h>
#include <kiln/render/plugin.h>

namespace kiln::render {
namespace {

class HDRFilm : public Film {
 public:
  explicit HDRFilm(const Properties& props) : Film(props) {
    std::string format = one_of(props, "pixel_format", "rgb", {"rgb", "rgba", "luminance", "luminance_alpha"});
    luminance_ = format.starts_with("luminance");
    alpha_ = format.ends_with("a");
    one_of(props, "file_format", "openexr", {"openexr", "exr"});
    one_of(props, "component_format", "float16", {"float16", "float32", "uint32"});
    sample_border_ = props.get_bool("sample_border", false);
  }

  bool has_alpha() const override { return alpha_; }

  TensorXf develop(const ImageBlock& block, bool color) const override {
    TensorXf image = block.develop();
    if (!luminance_ || !color) return image;
    // Y from linear sRGB (Rec. 709 weights, as Mitsuba's luminance()), then the rest.
    size_t height = image.shape(0), width = image.shape(1), channels = image.shape(2);
    size_t out_channels = channels - 2;
    UInt32 element = arange<UInt32>(height * width * out_channels);
    UInt32 pixel = element / uint32_t(out_channels), channel = element - pixel * uint32_t(out_channels);
    UInt32 base = pixel * uint32_t(channels);
    const Float& data = image.array();
    Float luminance =
        gather(data, base) * 0.212671f + gather(data, base + 1u) * 0.715160f + gather(data, base + 2u) * 0.072169f;
    Float rest = gather(data, base + channel + 2u, channel > 0u);
    return TensorXf(select(channel == 0u, luminance, rest), {height, width, out_channels});
  }

 private:
  bool luminance_ = false, alpha_ = false;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Film, "hdrfilm", [](const Properties& p) { return std::make_shared<HDRFilm>(p); });

}  // namespace kiln::render
