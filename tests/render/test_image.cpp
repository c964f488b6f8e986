// Image files: PNG and OpenEXR round trips, JPEG reading, the sRGB curve, channel
// conversion and padding, and every error path.
#include <kiln/render/image.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "jpeg_sample.h"

using namespace kiln;
using namespace kiln::render;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_test_image_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

Bitmap gradient(size_t width, size_t height, size_t channels) {
  Bitmap image{width, height, channels, {}};
  for (size_t i = 0; i < width * height * channels; ++i) image.pixels.push_back(float(i % 97) / 96.0f);
  return image;
}

}  // namespace

TEST(Image, SrgbCurveRoundTripsAndMatchesTheStandard) {
  EXPECT_FLOAT_EQ(linear_to_srgb(0.0f), 0.0f);
  EXPECT_FLOAT_EQ(linear_to_srgb(1.0f), 1.0f);
  EXPECT_NEAR(linear_to_srgb(0.18f), 0.46135f, 1e-4f);  // middle gray
  EXPECT_NEAR(srgb_to_linear(0.5f), 0.21404f, 1e-4f);
  for (float x = 0; x <= 1.0f; x += 0.01f) EXPECT_NEAR(srgb_to_linear(linear_to_srgb(x)), x, 1e-5f);
}

TEST(Image, ExrRoundTripIsExactForEveryChannelCount) {
  for (size_t channels = 1; channels <= 4; ++channels) {
    Bitmap image = gradient(7, 5, channels);
    image.pixels[3] = 12.5f;  // HDR values survive
    std::string path = temp_path(std::to_string(channels) + ".exr");
    write_image(image, path);
    Bitmap back = read_image(path);
    std::remove(path.c_str());
    EXPECT_EQ(back.width, 7u);
    EXPECT_EQ(back.height, 5u);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels) << channels << " channels";
  }
}

TEST(Image, PngRoundTripWithinEightBitsOfSrgb) {
  for (size_t channels = 1; channels <= 4; ++channels) {
    Bitmap image = gradient(6, 4, channels);
    std::string path = temp_path(std::to_string(channels) + ".png");
    write_image(image, path);
    Bitmap back = read_image(path);
    Bitmap encoded = read_image(path, /*raw=*/true);
    std::remove(path.c_str());
    ASSERT_EQ(back.channels, channels);
    bool has_alpha = channels == 2 || channels == 4;
    for (size_t i = 0; i < image.pixels.size(); ++i) {
      bool alpha = has_alpha && i % channels == channels - 1;
      float expected_encoded = alpha ? image.pixels[i] : linear_to_srgb(image.pixels[i]);
      EXPECT_NEAR(encoded.pixels[i], expected_encoded, 0.5f / 255.0f + 1e-6f) << i;
      // Decoded values are within half a code of the original, measured in the encoding.
      float decoded = alpha ? back.pixels[i] : linear_to_srgb(back.pixels[i]);
      EXPECT_NEAR(decoded, expected_encoded, 0.5f / 255.0f + 1e-5f) << i;
    }
  }
}

TEST(Image, PngClampsAndWritesTensors) {
  TensorXf image(Float({-1.0f, 0.5f, 2.0f, NAN, 0.0f, 1.0f}), Shape{1, 2, 3});
  std::string path = temp_path("tensor.png");
  write_image(image, path);
  Bitmap back = read_image(path, true);
  std::remove(path.c_str());
  ASSERT_EQ(back.pixels.size(), 6u);
  EXPECT_EQ(back.pixels[0], 0.0f);
  EXPECT_EQ(back.pixels[2], 1.0f);
  EXPECT_EQ(back.pixels[3], 0.0f);  // NaN is written as black
}

TEST(Image, ErrorsNameTheFileAndWhatIsAccepted) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const FileError& e) {
      return std::string(e.what());
    }
    return std::string("no FileError");
  };
  Bitmap image = gradient(2, 2, 3);
  EXPECT_NE(message([&] {
              write_image(image, temp_path("x.bmp"));
            }).find("unknown image format (accepted: .png, .jpg, .jpeg, .exr, .hdr)"),
            std::string::npos);
  EXPECT_NE(message([&] { read_image("/nonexistent/kiln.png"); }).find("/nonexistent/kiln.png: cannot be opened"),
            std::string::npos);
  EXPECT_NE(message([&] { read_image("/nonexistent/kiln.exr"); }).find("could not be read as OpenEXR"),
            std::string::npos);
  std::string junk = temp_path("junk.png");
  std::ofstream(junk) << "not an image at all";
  EXPECT_NE(message([&] { read_image(junk); }).find("is not a PNG file"), std::string::npos);
  std::string truncated = temp_path("truncated.png");
  write_image(image, truncated);
  std::filesystem::resize_file(truncated, 40);
  EXPECT_NE(message([&] { read_image(truncated); }).find("is a damaged PNG file"), std::string::npos);
  std::remove(junk.c_str());
  std::remove(truncated.c_str());
  Bitmap five = gradient(2, 2, 5);
  EXPECT_NE(message([&] { write_image(five, temp_path("five.exr")); }).find("cannot name 5 channels"),
            std::string::npos);
  EXPECT_NE(message([&] { write_image(five, temp_path("five.png")); }).find("cannot store 5 channels"),
            std::string::npos);
  Bitmap wrong = gradient(2, 2, 3);
  wrong.pixels.pop_back();
  EXPECT_NE(message([&] { write_image(wrong, temp_path("wrong.png")); }).find("not width * height * channels"),
            std::string::npos);
  TensorXf flat(Float({1.0f, 2.0f}), Shape{2});
  EXPECT_NE(message([&] { write_image(flat, temp_path("flat.exr")); }).find("(height, width, channels)"),
            std::string::npos);
  EXPECT_NE(message([&] { write_image(image, "/nonexistent/dir/out.png"); }).find("cannot be opened for writing"),
            std::string::npos);
  EXPECT_NE(message([&] { write_image(gradient(2, 2, 2), temp_path("out.jpg")); }).find("accepted: 1, 3"),
            std::string::npos);
  EXPECT_NE(message([&] { write_image(gradient(2, 2, 4), temp_path("out.hdr")); }).find("accepted: 1, 3"),
            std::string::npos);
  std::string jpeg = temp_path("junk.jpg");
  std::ofstream(jpeg) << "not a jpeg";
  EXPECT_NE(message([&] { read_image(jpeg); }).find("could not be read as JPEG (Not a JPEG file"), std::string::npos);
  kiln::render::test::write_jpeg_sample(jpeg);
  std::filesystem::resize_file(jpeg, 300);
  EXPECT_NE(message([&] { read_image(jpeg); }).find("could not be read as JPEG"), std::string::npos);
  std::remove(jpeg.c_str());
  EXPECT_NE(message([&] { read_image("/nonexistent/kiln.jpeg"); }).find("cannot be opened"), std::string::npos);
}

TEST(Image, JpegReadsAsMitsubaDoes) {
  std::string path = temp_path("sample.JPG");  // extensions are matched in any case
  kiln::render::test::write_jpeg_sample(path);
  Bitmap raw = read_image(path, /*raw=*/true), decoded = read_image(path);
  std::remove(path.c_str());
  ASSERT_EQ(raw.width, 4u);
  ASSERT_EQ(raw.height, 2u);
  ASSERT_EQ(raw.channels, 3u);
  for (size_t i = 0; i < 24; ++i) {
    // Decoders may round a code differently from Mitsuba's libjpeg.
    EXPECT_NEAR(raw.pixels[i] * 255, kiln::render::test::kJpegSampleCodes[i], 1.01f) << i;
    EXPECT_FLOAT_EQ(decoded.pixels[i], srgb_to_linear(raw.pixels[i])) << i;
  }
}

TEST(Image, ColorChannelsAndPadding) {
  Bitmap rgba{2, 1, 4, {0.1f, 0.2f, 0.3f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f}};
  Bitmap rgb = color_channels(rgba, 3);
  EXPECT_EQ(rgb.channels, 3u);
  EXPECT_EQ(rgb.pixels, (std::vector<float>{0.1f, 0.2f, 0.3f, 1.0f, 0.0f, 0.0f}));
  Bitmap gray = color_channels(rgba, 1);
  EXPECT_NEAR(gray.pixels[1], 0.212671f, 1e-7f);  // Mitsuba's luminance weights
  Bitmap gray_alpha{1, 1, 2, {0.25f, 0.5f}};
  EXPECT_EQ(color_channels(gray_alpha, 3).pixels, (std::vector<float>{0.25f, 0.25f, 0.25f}));
  EXPECT_THROW(color_channels(rgba, 2), ValueError);
  // Padding repeats the last column, then the last row.
  Bitmap small{2, 1, 1, {1.0f, 2.0f}};
  Bitmap padded = pad_image(small, 3, 2);
  EXPECT_EQ(padded.width, 3u);
  EXPECT_EQ(padded.height, 2u);
  EXPECT_EQ(padded.pixels, (std::vector<float>{1, 2, 2, 1, 2, 2}));
  EXPECT_EQ(pad_image(small, 1, 1).pixels, small.pixels);
}

TEST(Image, JpegWritesWhatItReadsWithinItsCompression) {
  for (size_t channels : {1u, 3u}) {
    Bitmap image = gradient(16, 8, channels);
    std::string path = temp_path(std::to_string(channels) + ".jpg");
    write_image(image, path);
    Bitmap back = read_image(path, /*raw=*/true);
    std::remove(path.c_str());
    ASSERT_EQ(back.channels, channels);
    double error = 0.0;
    for (size_t i = 0; i < image.pixels.size(); ++i)
      error += std::abs(back.pixels[i] - linear_to_srgb(image.pixels[i]));
    EXPECT_LT(error / double(image.pixels.size()), 0.02) << channels;  // quality 95 on a smooth ramp
  }
}

TEST(Image, RadianceRoundTripKeepsEightBitMantissas) {
  Bitmap image = gradient(9, 4, 3);
  image.pixels[0] = 1500.0f;  // large, small and zero values share exponents per pixel
  image.pixels[4] = 1e-3f;
  image.pixels[6] = image.pixels[7] = image.pixels[8] = 0.0f;
  std::string path = temp_path("rgbe.hdr");
  write_image(image, path);
  Bitmap back = read_image(path);
  std::remove(path.c_str());
  ASSERT_EQ(back.width, 9u);
  ASSERT_EQ(back.channels, 3u);
  for (size_t pixel = 0; pixel < 9 * 4; ++pixel) {
    float largest = std::max({image.pixels[3 * pixel], image.pixels[3 * pixel + 1], image.pixels[3 * pixel + 2]});
    for (size_t c = 0; c < 3; ++c)  // within one step of the pixel's shared 8-bit mantissa
      EXPECT_NEAR(back.pixels[3 * pixel + c], image.pixels[3 * pixel + c], largest / 128.0f + 1e-30f) << pixel;
  }
}

TEST(Image, RadianceReadsRunLengthEncodedScanlines) {
  // One 8-pixel scanline, each component a run: R = 128 (x8), G literal 0..7, B 0, E = 129.
  std::string path = temp_path("rle.hdr");
  {
    std::ofstream file(path, std::ios::binary);
    file << "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 8\n";
    const unsigned char bytes[] = {2, 2, 0, 8, 128 + 8, 128, 8, 0, 1, 2, 3, 4, 5, 6, 7, 128 + 8, 0, 128 + 8, 129};
    file.write(reinterpret_cast<const char*>(bytes), sizeof(bytes));
  }
  Bitmap image = read_image(path);
  std::remove(path.c_str());
  ASSERT_EQ(image.width, 8u);
  for (size_t x = 0; x < 8; ++x) {
    EXPECT_FLOAT_EQ(image.pixels[3 * x], 128.0f / 128.0f);  // 128 · 2^(129 - 136)
    EXPECT_FLOAT_EQ(image.pixels[3 * x + 1], float(x) / 128.0f);
    EXPECT_FLOAT_EQ(image.pixels[3 * x + 2], 0.0f);
  }
  std::ofstream(path) << "#?RADIANCE\n\n-Y 2 +X 8\n";
  EXPECT_THROW(read_image(path), FileError);  // ends before its scanlines
  std::ofstream(path) << "P6 not radiance";
  EXPECT_THROW(read_image(path), FileError);
  std::remove(path.c_str());
}

TEST(Image, ExrKeepsNamedChannelsGroupedByLayer) {
  Bitmap image = gradient(3, 2, 5);
  image.channel_names = {"albedo.B", "albedo.R", "depth.Y", "albedo.G", "A"};
  std::string path = temp_path("layers.exr");
  write_image(image, path);
  Bitmap all = read_image(path, false, /*all_channels=*/true);
  EXPECT_THROW(read_image(path), FileError);  // no color channels for a texture
  std::remove(path.c_str());
  std::vector<std::string> expected = {"A", "albedo.R", "albedo.G", "albedo.B", "depth.Y"};
  ASSERT_EQ(all.channel_names, expected);
  size_t source[] = {4, 1, 3, 0, 2};  // where each read channel was written
  for (size_t pixel = 0; pixel < 6; ++pixel)
    for (size_t c = 0; c < 5; ++c) EXPECT_EQ(all.pixels[pixel * 5 + c], image.pixels[pixel * 5 + source[c]]);
}
