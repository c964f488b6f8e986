// The pieces the obj and ply readers share (mesh_io.h).
#include "mesh_io.h"

#include <kiln/errors.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln::render::mesh_io {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file || std::filesystem::is_directory(path))
    throw FileError("kiln.render: " + path + ": cannot open the mesh file (missing or unreadable)");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw FileError("kiln.render: " + path + ": reading the mesh file failed");
  return bytes;
}

void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw FileError("kiln.render: " + path + ": " + where + ": " + what);
}

void append_fan(std::vector<uint32_t>& faces, const uint32_t* corners, size_t count) {
  for (size_t k = 2; k < count; ++k) faces.insert(faces.end(), {corners[0], corners[k - 1], corners[k]});
}

bool normalize_normal(float normal[3]) {
  double x = normal[0], y = normal[1], z = normal[2];
  double length = std::sqrt(x * x + y * y + z * z);
  if (!(length > 0) || !std::isfinite(length)) return false;
  normal[0] = float(x / length);
  normal[1] = float(y / length);
  normal[2] = float(z / length);
  return true;
}

bool append_uv(std::vector<float>& uvs, float u, float v, bool flip) {
  if (!std::isfinite(u) || !std::isfinite(v)) return false;
  uvs.push_back(u);
  uvs.push_back(flip ? 1.0f - v : v);
  return true;
}

std::string format_values(const float* values, size_t count) {
  std::ostringstream text;
  text.precision(9);
  text << '(';
  for (size_t i = 0; i < count; ++i) text << (i ? ", " : "") << values[i];
  text << ')';
  return text.str();
}

}  // namespace kiln::render::mesh_io
