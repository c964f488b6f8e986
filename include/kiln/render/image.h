// Images on the host: reading PNG, JPEG, OpenEXR and Radiance (.hdr) files (bitmap textures,
// environment maps, references) and writing rendered images, as Mitsuba's Bitmap does for
// the formats kiln.render uses.
//
// What an implementation guarantees:
// - A Bitmap holds linear values: rows top to bottom, `channels` floats per pixel.
// - PNG and JPEG values are sRGB-encoded: reading decodes them to linear (unless `raw`);
//   writing a PNG encodes linear values with the sRGB curve, clamped to [0, 1] and rounded
//   to 8 bits; JPEG likewise (quality 95, gray or RGB; other color spaces are converted to
//   RGB by libjpeg when reading).
// - OpenEXR files are written as 32-bit float channels (Y; Y, A; R, G, B; R, G, B, A; or the
//   bitmap's channel names) and read from any channel type: the color channels, or every
//   channel with its name when asked; EXR values are linear and never converted.
// - Radiance files hold linear RGB (radiance_hdr.h).
// - A missing file, an unknown extension or an unsupported layout raises kiln::FileError
//   naming the file and what is accepted.
#pragma once

#include <kiln/errors.h>
#include <kiln/render/common.h>
#include <kiln/tensor.h>

#include <string>
#include <vector>

namespace kiln::render {

struct Bitmap {
  size_t width = 0, height = 0, channels = 0;
  std::vector<float> pixels;  ///< height * width * channels linear values, row by row
  /// Empty: Y; Y, A; R, G, B or R, G, B, A by the channel count. Else one name per channel
  /// ("albedo.R"), as an EXR file stores them.
  std::vector<std::string> channel_names;
};

/// Reads a .png (8 or 16 bits, 1 to 4 channels), .jpg / .jpeg, .exr or .hdr file.
/// `all_channels`: every channel of an EXR file, named and grouped by layer (R, G, B, A and
/// X, Y, Z first in each), instead of its color channels.
Bitmap read_image(const std::string& path, bool raw = false, bool all_channels = false);

/// `image` with 1 (gray) or 3 (RGB) channels, as Mitsuba's Bitmap::convert makes them:
/// alpha is dropped, gray is repeated into RGB, RGB becomes gray by its luminance.
Bitmap color_channels(const Bitmap& image, size_t channels);
/// `image` grown to at least min_width x min_height by repeating its last column and row
/// (Mitsuba's Bitmap::pad_to); a larger image is returned unchanged.
Bitmap pad_image(const Bitmap& image, size_t min_width, size_t min_height);

/// The luminance of a linear RGB color on the host (common.h's weights).
inline float luminance(float r, float g, float b) {
  return r * kLuminanceWeights[0] + g * kLuminanceWeights[1] + b * kLuminanceWeights[2];
}

/// Writes `image` by the file's extension: .exr (any channels, named), .png (1 to 4
/// channels), .jpg / .jpeg (1 or 3) or .hdr (1 or 3).
void write_image(const Bitmap& image, const std::string& path);
/// Writes a TensorXf of shape (height, width, channels), as kr.render returns it.
void write_image(const TensorXf& image, const std::string& path);

/// The sRGB transfer curve and its inverse (IEC 61966-2-1), on one value.
float linear_to_srgb(float value);
float srgb_to_linear(float value);

}  // namespace kiln::render
