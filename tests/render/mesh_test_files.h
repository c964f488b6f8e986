// Helpers of the mesh tests: temporary files, a PLY writer for every format and type, float
// comparisons, and the to_world matrix the Mitsuba 3.9.1 reference values were computed with.
#pragma once

#include <kiln/render/mesh_data.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mesh_test {

/// A file in the temporary directory holding `contents`, removed when the object goes.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& contents)
      : path_((std::filesystem::temp_directory_path() / ("kiln_test_mesh_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {
    write(contents);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  /// Replaces the contents. The old file is removed first: truncating a file and writing it
  /// again makes ext4 flush it (auto_da_alloc), which costs milliseconds per write.
  void write(const std::string& contents) const {
    std::remove(path_.c_str());
    std::ofstream(path_, std::ios::binary) << contents;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Builds a PLY file: header statements, then values in the chosen format.
class PlyWriter {
 public:
  /// `format`: "ascii", "binary_little_endian" or "binary_big_endian".
  explicit PlyWriter(const std::string& format) : format_(format), header_("ply\nformat " + format + " 1.0\n") {}

  PlyWriter& header(const std::string& statement) {
    header_ += statement + "\n";
    return *this;
  }
  /// Appends one value of the PLY type `type` (an integer type gets an integral value).
  PlyWriter& value(const std::string& type, double v) {
    if (format_ == "ascii") {
      char text[64];
      std::snprintf(text, sizeof(text), "%.17g ", v);
      body_ += text;
    } else if (type == "char" || type == "int8") {
      put<int8_t>(v);
    } else if (type == "uchar" || type == "uint8") {
      put<uint8_t>(v);
    } else if (type == "short" || type == "int16") {
      put<int16_t>(v);
    } else if (type == "ushort" || type == "uint16") {
      put<uint16_t>(v);
    } else if (type == "int" || type == "int32") {
      put<int32_t>(v);
    } else if (type == "uint" || type == "uint32") {
      put<uint32_t>(v);
    } else if (type == "long") {
      put<int64_t>(v);
    } else if (type == "ulong") {
      put<uint64_t>(v);
    } else if (type == "float" || type == "float32") {
      put<float>(v);
    } else {
      put<double>(v);
    }
    return *this;
  }
  /// Several values of one type.
  PlyWriter& values(const std::string& type, std::initializer_list<double> vs) {
    for (double v : vs) value(type, v);
    return *this;
  }
  /// Ends a record (a line break in ascii).
  PlyWriter& end_record() {
    if (format_ == "ascii") body_ += "\n";
    return *this;
  }
  std::string str() const { return header_ + "end_header\n" + body_; }

 private:
  template <typename T> void put(double v) {
    T value = T(v);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    bool big = format_ == "binary_big_endian";
    if (big != (std::endian::native == std::endian::big)) std::reverse(bytes, bytes + sizeof(T));
    body_.append(reinterpret_cast<const char*>(bytes), sizeof(T));
  }

  std::string format_, header_, body_;
};

/// Every value of `actual` within `tolerance` * max(1, |expected|) of `expected`.
inline void expect_close(const std::vector<float>& actual, const std::vector<double>& expected,
                         double tolerance = 2e-6) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i]))) << "at " << i;
}

/// Translate(0.5, -1, 2) · Rotate(z, 30°) · Rotate(x, 40°) · Scale(2, 0.5, 1.5) as Mitsuba 3.9.1
/// built it (ScalarTransform4f, printed in float).
inline const kiln::render::Matrix4d kMitsubaToWorld = {1.7320507764816284,
                                                       -0.1915111094713211,
                                                       0.48209068179130554,
                                                       0.5,
                                                       1.0,
                                                       0.3317069709300995,
                                                       -0.835005521774292,
                                                       -1.0,
                                                       0.0,
                                                       0.32139378786087036,
                                                       1.149066686630249,
                                                       2.0,
                                                       0.0,
                                                       0.0,
                                                       0.0,
                                                       1.0};

/// The identity.
inline const kiln::render::Matrix4d kIdentity = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

}  // namespace mesh_test
