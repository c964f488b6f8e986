// Mitsuba's binary volume format (.vol): "VOL", version 3, the encoding (1: float32), the
// resolution x, y, z and the channel count (int32), the grid's box (6 float32: min then max),
// then the values with x varying fastest and the channels interleaved. Little endian.
#include <kiln/errors.h>
#include <kiln/render/volume.h>

#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln::render {
namespace {

constexpr int32_t kFloat32Encoding = 1;
constexpr size_t kHeaderBytes = 48;

template <typename T> T read_at(const std::vector<char>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

template <typename T> void append(std::vector<char>& bytes, T value) {
  const char* raw = reinterpret_cast<const char*>(&value);
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

}  // namespace

Float Volume::eval_1(const Array3f& p, const Bool& active) const {
  Color3f value = eval(p, active);
  return (value.x + value.y + value.z) * (1.0f / 3.0f);
}

VolumeGrid read_volume_grid(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw FileError("kiln.render: cannot open the volume file '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) -> FileError {
    return FileError("kiln.render: '" + path + "' is not a volume grid Kiln reads: " + why);
  };
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), "VOL", 3) != 0)
    throw fail("it does not start with Mitsuba's \"VOL\" header");
  if (bytes[3] != 3) throw fail("version " + std::to_string(int(bytes[3])) + " (Kiln reads version 3)");
  int32_t encoding = read_at<int32_t>(bytes, 4);
  if (encoding != kFloat32Encoding)
    throw fail("encoding " + std::to_string(encoding) + " (Kiln reads float32 grids, encoding 1)");
  int32_t size[4];
  for (size_t i = 0; i < 4; ++i) size[i] = read_at<int32_t>(bytes, 8 + 4 * i);
  for (int32_t s : size)
    if (s < 1 || s > (1 << 16)) throw fail("a resolution or channel count of " + std::to_string(s));
  VolumeGrid grid;
  grid.size_x = size_t(size[0]), grid.size_y = size_t(size[1]), grid.size_z = size_t(size[2]);
  grid.channels = size_t(size[3]);
  for (size_t i = 0; i < 3; ++i) {
    grid.box_min[i] = read_at<float>(bytes, 24 + 4 * i);
    grid.box_max[i] = read_at<float>(bytes, 36 + 4 * i);
  }
  size_t count = grid.size_x * grid.size_y * grid.size_z * grid.channels;
  if (bytes.size() < kHeaderBytes + count * sizeof(float))
    throw fail("its header announces " + std::to_string(count) + " values but the file holds " +
               std::to_string((bytes.size() - kHeaderBytes) / sizeof(float)));
  grid.values.resize(count);
  std::memcpy(grid.values.data(), bytes.data() + kHeaderBytes, count * sizeof(float));
  return grid;
}

void write_volume_grid(const VolumeGrid& grid, const std::string& path) {
  if (grid.values.size() != grid.size_x * grid.size_y * grid.size_z * grid.channels)
    throw ValueError("kiln.render: write_volume_grid(): the grid holds " + std::to_string(grid.values.size()) +
                     " values, not x · y · z · channels");
  std::vector<char> bytes{'V', 'O', 'L', 3};
  append(bytes, kFloat32Encoding);
  for (size_t s : {grid.size_x, grid.size_y, grid.size_z, grid.channels}) append(bytes, int32_t(s));
  for (float v : grid.box_min) append(bytes, v);
  for (float v : grid.box_max) append(bytes, v);
  const char* raw = reinterpret_cast<const char*>(grid.values.data());
  bytes.insert(bytes.end(), raw, raw + grid.values.size() * sizeof(float));
  std::ofstream stream(path, std::ios::binary);
  if (!stream.write(bytes.data(), std::streamsize(bytes.size())))
    throw FileError("kiln.render: cannot write the volume file '" + path + "'");
}

}  // namespace kiln::render
