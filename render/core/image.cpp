// Reading and writing PNG (libpng), JPEG (libjpeg) and OpenEXR (OpenEXR 3) images as linear
// Bitmaps (Radiance's in radiance_hdr.cpp), and the conversions textures and environment
// maps make of them.
#include <kiln/render/image.h>

#include "core/radiance_hdr.h"

#include <OpenEXR/ImfChannelList.h>
#include <OpenEXR/ImfFrameBuffer.h>
#include <OpenEXR/ImfHeader.h>
#include <OpenEXR/ImfInputFile.h>
#include <OpenEXR/ImfOutputFile.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

namespace kiln::render {
namespace {

enum class Format { Png, Jpeg, Exr, Hdr };

Format format_of(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto ends_with = [&](const char* suffix) {
    size_t n = std::strlen(suffix);
    return lower.size() >= n && lower.compare(lower.size() - n, n, suffix) == 0;
  };
  if (ends_with(".png")) return Format::Png;
  if (ends_with(".jpg") || ends_with(".jpeg")) return Format::Jpeg;
  if (ends_with(".exr")) return Format::Exr;
  if (ends_with(".hdr")) return Format::Hdr;
  throw FileError("kiln.render: " + path + ": unknown image format (accepted: .png, .jpg, .jpeg, .exr, .hdr)");
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw FileError("kiln.render: " + path + ": " + why);
}

/// Owns a FILE* and libpng's read or write structures.
struct PngFile {
  FILE* file = nullptr;
  png_structp png = nullptr;
  png_infop info = nullptr;
  bool writing = false;
  ~PngFile() {
    if (writing)
      png_destroy_write_struct(&png, info ? &info : nullptr);
    else if (png)
      png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    if (file) std::fclose(file);
  }
};

/// libpng's error handler without its printing: the FileError says what failed.
void png_quiet_error(png_structp png, png_const_charp) { png_longjmp(png, 1); }
void png_quiet_warning(png_structp, png_const_charp) {}

/// libpng reports errors by longjmp: these two calls keep the jump inside frames that hold
/// no C++ objects. Each returns false when libpng failed.
bool decode_png(png_structp png, png_infop info, FILE* file) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, file);
  png_set_sig_bytes(png, 8);
  // Palettes, gray below 8 bits and tRNS expand to 8-bit channels; 16-bit samples arrive
  // in host byte order.
  png_read_png(png, info, PNG_TRANSFORM_EXPAND | PNG_TRANSFORM_SWAP_ENDIAN, nullptr);
  return true;
}

bool encode_png(png_structp png, png_infop info, FILE* file, png_uint_32 width, png_uint_32 height, int color_type,
                png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_set_rows(png, info, rows);
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  return true;
}

Bitmap read_png(const std::string& path, bool raw) {
  PngFile f;
  f.file = std::fopen(path.c_str(), "rb");
  if (!f.file) fail(path, "cannot be opened for reading");
  png_byte signature[8] = {};
  if (std::fread(signature, 1, 8, f.file) != 8 || png_sig_cmp(signature, 0, 8)) fail(path, "is not a PNG file");
  f.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, png_quiet_error, png_quiet_warning);
  f.info = f.png ? png_create_info_struct(f.png) : nullptr;
  if (!f.info) fail(path, "libpng could not allocate its state");
  if (!decode_png(f.png, f.info, f.file)) fail(path, "is a damaged PNG file");
  Bitmap image;
  image.width = png_get_image_width(f.png, f.info);
  image.height = png_get_image_height(f.png, f.info);
  image.channels = png_get_channels(f.png, f.info);
  int depth = png_get_bit_depth(f.png, f.info);
  png_bytepp rows = png_get_rows(f.png, f.info);
  image.pixels.resize(image.width * image.height * image.channels);
  size_t row_values = image.width * image.channels;
  bool has_alpha = image.channels == 2 || image.channels == 4;
  for (size_t y = 0; y < image.height; ++y)
    for (size_t i = 0; i < row_values; ++i) {
      float value = depth == 16 ? reinterpret_cast<const uint16_t*>(rows[y])[i] / 65535.0f : rows[y][i] / 255.0f;
      bool alpha = has_alpha && i % image.channels == image.channels - 1;  // alpha is linear already
      image.pixels[y * row_values + i] = raw || alpha ? value : srgb_to_linear(value);
    }
  return image;
}

void write_png(const Bitmap& image, const std::string& path) {
  PngFile f;
  f.writing = true;
  f.file = std::fopen(path.c_str(), "wb");
  if (!f.file) fail(path, "cannot be opened for writing");
  f.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_quiet_error, png_quiet_warning);
  f.info = f.png ? png_create_info_struct(f.png) : nullptr;
  if (!f.info) fail(path, "libpng could not allocate its state");
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                        PNG_COLOR_TYPE_RGB_ALPHA};
  size_t row_values = image.width * image.channels;
  std::vector<png_byte> bytes(image.height * row_values);
  bool has_alpha = image.channels == 2 || image.channels == 4;
  for (size_t i = 0; i < bytes.size(); ++i) {
    float value = image.pixels[i];
    if (!(has_alpha && i % image.channels == image.channels - 1)) value = linear_to_srgb(value);
    bytes[i] = png_byte(std::lround(std::clamp(std::isnan(value) ? 0.0f : value, 0.0f, 1.0f) * 255.0f));
  }
  std::vector<png_bytep> rows(image.height);
  for (size_t y = 0; y < image.height; ++y) rows[y] = bytes.data() + y * row_values;
  if (!encode_png(f.png, f.info, f.file, png_uint_32(image.width), png_uint_32(image.height),
                  kColorTypes[image.channels - 1], rows.data()))
    fail(path, "could not be written");
}

/// libjpeg's error manager with a place to jump back to and the message of the failure.
struct JpegErrors {
  jpeg_error_mgr manager;  // first: libjpeg's callbacks receive a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

/// libjpeg's error handler: keeps the message and jumps back instead of exiting.
void jpeg_quiet_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

/// Owns a FILE* and libjpeg's decompressor.
struct JpegFile {
  FILE* file = nullptr;
  jpeg_decompress_struct info = {};
  JpegErrors errors;
  bool created = false;
  ~JpegFile() {
    if (created) jpeg_destroy_decompress(&info);
    if (file) std::fclose(file);
  }
};

/// Decodes the whole file to 8-bit gray or RGB rows into `pixels`, keeping libjpeg's longjmp
/// inside a frame without C++ objects (as for libpng); false when libjpeg failed.
bool decode_jpeg(JpegFile* f, std::vector<unsigned char>* pixels) {
  if (setjmp(f->errors.jump)) return false;
  jpeg_create_decompress(&f->info);
  f->created = true;
  jpeg_stdio_src(&f->info, f->file);
  jpeg_read_header(&f->info, TRUE);
  if (f->info.jpeg_color_space != JCS_GRAYSCALE) f->info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&f->info);
  size_t row_bytes = size_t(f->info.output_width) * size_t(f->info.output_components);
  pixels->resize(row_bytes * f->info.output_height);
  while (f->info.output_scanline < f->info.output_height) {
    JSAMPROW row = pixels->data() + row_bytes * f->info.output_scanline;
    jpeg_read_scanlines(&f->info, &row, 1);
  }
  jpeg_finish_decompress(&f->info);
  return true;
}

Bitmap read_jpeg(const std::string& path, bool raw) {
  JpegFile f;
  f.file = std::fopen(path.c_str(), "rb");
  if (!f.file) fail(path, "cannot be opened for reading");
  f.info.err = jpeg_std_error(&f.errors.manager);
  f.errors.manager.error_exit = jpeg_quiet_error;
  f.errors.manager.output_message = [](j_common_ptr) {};  // warnings are not printed
  std::vector<unsigned char> bytes;
  if (!decode_jpeg(&f, &bytes)) fail(path, std::string("could not be read as JPEG (") + f.errors.message + ")");
  Bitmap image;
  image.width = f.info.output_width;
  image.height = f.info.output_height;
  image.channels = size_t(f.info.output_components);
  image.pixels.resize(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    float value = bytes[i] / 255.0f;
    image.pixels[i] = raw ? value : srgb_to_linear(value);
  }
  return image;
}

/// Owns a FILE* and libjpeg's compressor.
struct JpegOutput {
  FILE* file = nullptr;
  jpeg_compress_struct info = {};
  JpegErrors errors;
  bool created = false;
  ~JpegOutput() {
    if (created) jpeg_destroy_compress(&info);
    if (file) std::fclose(file);
  }
};

/// Encodes 8-bit rows (libjpeg's longjmp kept in a frame without C++ objects).
bool encode_jpeg(JpegOutput* f, const std::vector<unsigned char>& bytes, size_t width, size_t height, size_t channels) {
  if (setjmp(f->errors.jump)) return false;
  jpeg_create_compress(&f->info);
  f->created = true;
  jpeg_stdio_dest(&f->info, f->file);
  f->info.image_width = JDIMENSION(width);
  f->info.image_height = JDIMENSION(height);
  f->info.input_components = int(channels);
  f->info.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&f->info);
  jpeg_set_quality(&f->info, 95, TRUE);
  jpeg_start_compress(&f->info, TRUE);
  while (f->info.next_scanline < f->info.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(bytes.data() + f->info.next_scanline * width * channels);
    jpeg_write_scanlines(&f->info, &row, 1);
  }
  jpeg_finish_compress(&f->info);
  return true;
}

void write_jpeg(const Bitmap& image, const std::string& path) {
  if (image.channels != 1 && image.channels != 3)
    fail(path, "a JPEG file stores gray or RGB: " + std::to_string(image.channels) + " channels (accepted: 1, 3)");
  JpegOutput f;
  f.file = std::fopen(path.c_str(), "wb");
  if (!f.file) fail(path, "cannot be opened for writing");
  f.info.err = jpeg_std_error(&f.errors.manager);
  f.errors.manager.error_exit = jpeg_quiet_error;
  f.errors.manager.output_message = [](j_common_ptr) {};
  std::vector<unsigned char> bytes(image.pixels.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    float value = linear_to_srgb(image.pixels[i]);
    bytes[i] = (unsigned char)(std::lround(std::clamp(std::isnan(value) ? 0.0f : value, 0.0f, 1.0f) * 255.0f));
  }
  if (!encode_jpeg(&f, bytes, image.width, image.height, image.channels))
    fail(path, std::string("could not be written as JPEG (") + f.errors.message + ")");
}

/// The EXR channel names of 1 to 4 channels.
std::vector<const char*> exr_channel_names(size_t channels) {
  switch (channels) {
    case 1: return {"Y"};
    case 2: return {"Y", "A"};
    case 3: return {"R", "G", "B"};
    default: return {"R", "G", "B", "A"};
  }
}

/// Every channel of an EXR file, grouped by layer (the part before the last '.') in the
/// order layers first appear, each layer's R, G, B / X, Y, Z first and A after them.
std::vector<std::string> all_exr_channels(const Imf::ChannelList& list) {
  std::vector<std::string> names;
  for (auto it = list.begin(); it != list.end(); ++it) names.emplace_back(it.name());
  auto layer = [](const std::string& name) {
    size_t dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
  };
  auto rank = [](const std::string& name) {
    std::string channel = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    static const char* kOrder[] = {"R", "G", "B", "X", "Y", "Z", "A"};
    for (int i = 0; i < 7; ++i)
      if (channel == kOrder[i]) return i;
    return 7;
  };
  std::vector<std::string> layers;
  for (const std::string& name : names)
    if (std::find(layers.begin(), layers.end(), layer(name)) == layers.end()) layers.push_back(layer(name));
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    auto la = std::find(layers.begin(), layers.end(), layer(a)), lb = std::find(layers.begin(), layers.end(), layer(b));
    return la != lb ? la < lb : rank(a) < rank(b);
  });
  return names;
}

Bitmap read_exr(const std::string& path, bool all_channels) {
  try {
    Imf::InputFile file(path.c_str());
    const Imf::Header& header = file.header();
    Imath::Box2i window = header.dataWindow();
    Bitmap image;
    image.width = size_t(window.max.x - window.min.x + 1);
    image.height = size_t(window.max.y - window.min.y + 1);
    const Imf::ChannelList& list = header.channels();
    bool rgb = list.findChannel("R") && list.findChannel("G") && list.findChannel("B");
    std::vector<std::string> names;
    if (all_channels) {
      names = all_exr_channels(list);
      image.channel_names = names;
    } else {
      if (!rgb && !list.findChannel("Y")) fail(path, "has neither R, G, B nor Y channels");
      for (const char* name : exr_channel_names((rgb ? 3 : 1) + (list.findChannel("A") ? 1 : 0)))
        names.emplace_back(name);
    }
    if (names.empty()) fail(path, "has no channels");
    image.channels = names.size();
    image.pixels.resize(image.width * image.height * image.channels);
    size_t x_stride = sizeof(float) * image.channels, y_stride = x_stride * image.width;
    Imf::FrameBuffer frame;
    for (size_t c = 0; c < names.size(); ++c) {
      char* origin = reinterpret_cast<char*>(image.pixels.data() + c) - window.min.x * ptrdiff_t(x_stride) -
                     window.min.y * ptrdiff_t(y_stride);
      frame.insert(names[c].c_str(), Imf::Slice(Imf::FLOAT, origin, x_stride, y_stride));
    }
    file.setFrameBuffer(frame);
    file.readPixels(window.min.y, window.max.y);
    return image;
  } catch (const FileError&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("could not be read as OpenEXR (") + e.what() + ")");
  }
}

void write_exr(const Bitmap& image, const std::string& path) {
  try {
    Imf::Header header(int(image.width), int(image.height));
    Imf::FrameBuffer frame;
    std::vector<std::string> names = image.channel_names;
    if (names.empty())
      for (const char* name : exr_channel_names(image.channels)) names.emplace_back(name);
    size_t x_stride = sizeof(float) * image.channels, y_stride = x_stride * image.width;
    for (size_t c = 0; c < names.size(); ++c) {
      header.channels().insert(names[c], Imf::Channel(Imf::FLOAT));
      char* origin = const_cast<char*>(reinterpret_cast<const char*>(image.pixels.data() + c));
      frame.insert(names[c].c_str(), Imf::Slice(Imf::FLOAT, origin, x_stride, y_stride));
    }
    Imf::OutputFile file(path.c_str(), header);
    file.setFrameBuffer(frame);
    file.writePixels(int(image.height));
  } catch (const std::exception& e) {
    fail(path, std::string("could not be written as OpenEXR (") + e.what() + ")");
  }
}

}  // namespace

float linear_to_srgb(float value) {
  return value <= 0.0031308f ? 12.92f * value : 1.055f * std::pow(value, 1.0f / 2.4f) - 0.055f;
}

float srgb_to_linear(float value) {
  return value <= 0.04045f ? value / 12.92f : std::pow((value + 0.055f) / 1.055f, 2.4f);
}

Bitmap read_image(const std::string& path, bool raw, bool all_channels) {
  switch (format_of(path)) {
    case Format::Png: return read_png(path, raw);
    case Format::Jpeg: return read_jpeg(path, raw);
    case Format::Exr: return read_exr(path, all_channels);
    case Format::Hdr: return read_radiance_hdr(path);
  }
  throw InternalError("kiln.render: read_image(): unknown format");
}

void write_image(const Bitmap& image, const std::string& path) {
  Format format = format_of(path);
  if (image.channels < 1 || (image.channels > 4 && format != Format::Exr))
    fail(path, "cannot store " + std::to_string(image.channels) + " channels (accepted: 1 to 4; .exr any)");
  if (!image.channel_names.empty() && image.channel_names.size() != image.channels)
    fail(path, std::to_string(image.channel_names.size()) + " channel names for " + std::to_string(image.channels) +
                   " channels");
  if (image.channels > 4 && image.channel_names.empty())
    fail(path, "cannot name " + std::to_string(image.channels) + " channels: give the bitmap channel names");
  if (image.width == 0 || image.height == 0) fail(path, "cannot store an empty image");
  if (image.pixels.size() != image.width * image.height * image.channels)
    fail(path, "the bitmap holds " + std::to_string(image.pixels.size()) + " values, not width * height * channels");
  switch (format) {
    case Format::Png: return write_png(image, path);
    case Format::Jpeg: return write_jpeg(image, path);
    case Format::Exr: return write_exr(image, path);
    case Format::Hdr: return write_radiance_hdr(image, path);
  }
}

Bitmap color_channels(const Bitmap& image, size_t channels) {
  if (channels != 1 && channels != 3)
    throw ValueError("kiln.render: color_channels(): " + std::to_string(channels) + " channels asked (accepted: 1, 3)");
  bool rgb = image.channels >= 3;
  Bitmap result{image.width, image.height, channels, {}};
  result.pixels.reserve(image.width * image.height * channels);
  for (size_t pixel = 0; pixel < image.width * image.height; ++pixel) {
    const float* in = image.pixels.data() + pixel * image.channels;
    if (channels == 3)
      for (size_t c = 0; c < 3; ++c) result.pixels.push_back(in[rgb ? c : 0]);
    else
      result.pixels.push_back(rgb ? luminance(in[0], in[1], in[2]) : in[0]);
  }
  return result;
}

Bitmap pad_image(const Bitmap& image, size_t min_width, size_t min_height) {
  size_t width = std::max(image.width, min_width), height = std::max(image.height, min_height);
  Bitmap result{width, height, image.channels, {}};
  result.pixels.reserve(width * height * image.channels);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x) {
      size_t source = std::min(y, image.height - 1) * image.width + std::min(x, image.width - 1);
      const float* pixel = image.pixels.data() + source * image.channels;
      result.pixels.insert(result.pixels.end(), pixel, pixel + image.channels);
    }
  return result;
}

void write_image(const TensorXf& image, const std::string& path) {
  const Shape& shape = image.shape();
  if (shape.size() != 3)
    fail(path, "write_image() takes a tensor of shape (height, width, channels), not one of " +
                   std::to_string(shape.size()) + " dimensions");
  Bitmap bitmap;
  bitmap.height = shape[0];
  bitmap.width = shape[1];
  bitmap.channels = shape[2];
  bitmap.pixels = image.array().to_vector();
  write_image(bitmap, path);
}

}  // namespace kiln::render
