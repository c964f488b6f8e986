// Radiance RGBE reading and writing (radiance_hdr.h): a shared exponent byte per pixel,
// scanlines flat or run-length encoded per component (the "new" RLE of Radiance 2.0).
#include "core/radiance_hdr.h"

#include <kiln/errors.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace kiln::render {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw FileError("kiln.render: " + path + ": " + why);
}

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

/// A header line without its newline; false at the end of the file.
bool read_line(FILE* file, std::string* line) {
  line->clear();
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) {
    if (c == '\n') return true;
    line->push_back(char(c));
  }
  return !line->empty();
}

/// One scanline of `width` RGBE pixels into `rgbe` (4 bytes each).
bool read_scanline(FILE* file, size_t width, unsigned char* rgbe) {
  unsigned char start[4];
  if (std::fread(start, 1, 4, file) != 4) return false;
  bool rle = width >= 8 && width < 32768 && start[0] == 2 && start[1] == 2 && (start[2] & 0x80) == 0 &&
             size_t(start[2] << 8 | start[3]) == width;
  if (!rle) {  // flat: the four bytes read are the first pixel
    std::memcpy(rgbe, start, 4);
    return std::fread(rgbe + 4, 4, width - 1, file) == width - 1;
  }
  for (size_t component = 0; component < 4; ++component) {
    for (size_t x = 0; x < width;) {
      int count = std::fgetc(file);
      if (count == EOF || count == 0) return false;
      if (count > 128) {  // a run of one value
        count -= 128;
        int value = std::fgetc(file);
        if (value == EOF || x + size_t(count) > width) return false;
        for (int i = 0; i < count; ++i) rgbe[4 * x++ + component] = (unsigned char)(value);
      } else {  // `count` literal values
        if (x + size_t(count) > width) return false;
        for (int i = 0; i < count; ++i) {
          int value = std::fgetc(file);
          if (value == EOF) return false;
          rgbe[4 * x++ + component] = (unsigned char)(value);
        }
      }
    }
  }
  return true;
}

}  // namespace

Bitmap read_radiance_hdr(const std::string& path) {
  File file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail(path, "cannot be opened for reading");
  std::string line;
  if (!read_line(file.get(), &line) || (line.rfind("#?RADIANCE", 0) != 0 && line.rfind("#?RGBE", 0) != 0))
    fail(path, "is not a Radiance image (no #?RADIANCE header)");
  while (read_line(file.get(), &line) && !line.empty())
    if (line.rfind("FORMAT=", 0) == 0 && line != "FORMAT=32-bit_rle_rgbe")
      fail(path, "has pixel format '" + line.substr(7) + "' (accepted: 32-bit_rle_rgbe)");
  long height = 0, width = 0;
  char y_axis[3] = {}, x_axis[3] = {};
  if (!read_line(file.get(), &line) ||
      std::sscanf(line.c_str(), "%2s %ld %2s %ld", y_axis, &height, x_axis, &width) != 4 ||
      std::string(y_axis) != "-Y" || std::string(x_axis) != "+X" || width <= 0 || height <= 0)
    fail(path, "has resolution line '" + line + "' (accepted: -Y height +X width)");
  Bitmap image{size_t(width), size_t(height), 3, {}};
  image.pixels.resize(image.width * image.height * 3);
  std::vector<unsigned char> rgbe(image.width * 4);
  for (size_t y = 0; y < image.height; ++y) {
    if (!read_scanline(file.get(), image.width, rgbe.data()))
      fail(path, "ends or breaks in scanline " + std::to_string(y) + " of " + std::to_string(image.height));
    for (size_t x = 0; x < image.width; ++x) {
      const unsigned char* p = rgbe.data() + 4 * x;
      float scale = p[3] == 0 ? 0.0f : std::ldexp(1.0f, int(p[3]) - (128 + 8));
      for (size_t c = 0; c < 3; ++c) image.pixels[(y * image.width + x) * 3 + c] = float(p[c]) * scale;
    }
  }
  return image;
}

void write_radiance_hdr(const Bitmap& image, const std::string& path) {
  if (image.channels != 1 && image.channels != 3)
    fail(path, "a Radiance image stores RGB: " + std::to_string(image.channels) + " channels (accepted: 1, 3)");
  File file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file) fail(path, "cannot be opened for writing");
  std::fprintf(file.get(), "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %zu +X %zu\n", image.height, image.width);
  std::vector<unsigned char> rgbe(image.width * image.height * 4);
  for (size_t pixel = 0; pixel < image.width * image.height; ++pixel) {
    float rgb[3];
    for (size_t c = 0; c < 3; ++c) {
      float value = image.pixels[pixel * image.channels + (image.channels == 3 ? c : 0)];
      rgb[c] = std::isfinite(value) ? std::max(value, 0.0f) : 0.0f;
    }
    float largest = std::max({rgb[0], rgb[1], rgb[2]});
    unsigned char* out = rgbe.data() + 4 * pixel;
    if (largest < 1e-32f) continue;  // zero: all four bytes 0
    int exponent = 0;
    std::frexp(largest, &exponent);                // largest = m 2^exponent, m in [0.5, 1)
    exponent = std::min(exponent, 127);            // beyond RGBE's range: saturates
    float scale = std::ldexp(1.0f, 8 - exponent);  // the largest becomes m · 256
    for (size_t c = 0; c < 3; ++c) out[c] = (unsigned char)(std::min(rgb[c] * scale, 255.0f));
    out[3] = (unsigned char)(exponent + 128);
  }
  if (std::fwrite(rgbe.data(), 1, rgbe.size(), file.get()) != rgbe.size()) fail(path, "could not be written");
}

}  // namespace kiln::render
