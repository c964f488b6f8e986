// Writing a triangle mesh as a binary little-endian PLY file (Mitsuba's Mesh::write_ply):
// x, y, z, then nx, ny, nz and u, v when the mesh has them, and faces as a `vertex_indices`
// list of three uint indices each; attributes as float properties `<name>_0`, `<name>_1` ...
// (`vertex_color` as color_0 ... of the vertices, as Mitsuba writes them). ply_reader.cpp
// reads it back as it was (attributes of 1 or 3 channels, as Mitsuba's reader).
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

namespace kiln::render {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw FileError("kiln.render: " + path + ": " + why);
}

/// Appends the bytes of `value` (the file is little-endian, as this machine: checked below).
template <typename T> void append(std::vector<unsigned char>& out, T value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace

void write_ply(const MeshData& mesh, const std::string& path) {
  static_assert(std::endian::native == std::endian::little, "write_ply writes the machine's byte order");
  size_t vertices = mesh.vertex_count(), faces = mesh.face_count();
  bool normals = !mesh.normals.empty(), uvs = !mesh.uvs.empty();
  if (mesh.positions.size() != 3 * vertices || mesh.faces.size() != 3 * faces ||
      (normals && mesh.normals.size() != 3 * vertices) || (uvs && mesh.uvs.size() != 2 * vertices))
    fail(path, "the mesh's arrays do not hold 3 positions (and normals, 2 uvs) per vertex and 3 indices per face");
  for (uint32_t index : mesh.faces)
    if (index >= vertices)
      fail(path, "a face refers to vertex " + std::to_string(index) + " of " + std::to_string(vertices));
  // The attributes of the vertices, then of the faces: (name without its element, values).
  std::vector<std::pair<std::string, const MeshAttributeData*>> vertex_attributes, face_attributes;
  for (const auto& [name, attribute] : mesh.attributes) {
    if (!name.starts_with("vertex_") && !name.starts_with("face_"))
      fail(path, "the attribute '" + name + "' is neither a vertex_ nor a face_ attribute");
    bool per_vertex = name.starts_with("vertex_");
    size_t count = per_vertex ? vertices : faces;
    if (attribute.channels == 0 || attribute.values.size() != count * attribute.channels)
      fail(path, "the attribute '" + name + "' does not hold its channels for every vertex or face");
    (per_vertex ? vertex_attributes : face_attributes).emplace_back(name.substr(per_vertex ? 7 : 5), &attribute);
  }
  auto declare = [](const auto& attributes) {
    std::string lines;
    for (const auto& [name, attribute] : attributes)
      for (size_t c = 0; c < attribute->channels; ++c)
        lines += "property float " + name + "_" + std::to_string(c) + "\n";
    return lines;
  };
  auto append_attributes = [](std::vector<unsigned char>& out, const auto& attributes, size_t element) {
    for (const auto& [name, attribute] : attributes)
      for (size_t c = 0; c < attribute->channels; ++c)
        append(out, attribute->values[element * attribute->channels + c]);
  };
  std::string header = "ply\nformat binary_little_endian 1.0\nelement vertex " + std::to_string(vertices) +
                       "\nproperty float x\nproperty float y\nproperty float z\n";
  if (normals) header += "property float nx\nproperty float ny\nproperty float nz\n";
  if (uvs) header += "property float u\nproperty float v\n";
  header += declare(vertex_attributes);
  header += "element face " + std::to_string(faces) + "\nproperty list uchar uint vertex_indices\n";
  header += declare(face_attributes) + "end_header\n";
  std::vector<unsigned char> body;
  body.reserve(vertices * 32 + faces * 13);
  for (size_t v = 0; v < vertices; ++v) {
    for (size_t c = 0; c < 3; ++c) append(body, mesh.positions[3 * v + c]);
    if (normals)
      for (size_t c = 0; c < 3; ++c) append(body, mesh.normals[3 * v + c]);
    if (uvs)
      for (size_t c = 0; c < 2; ++c) append(body, mesh.uvs[2 * v + c]);
    append_attributes(body, vertex_attributes, v);
  }
  for (size_t f = 0; f < faces; ++f) {
    append(body, uint8_t(3));
    for (size_t c = 0; c < 3; ++c) append(body, mesh.faces[3 * f + c]);
    append_attributes(body, face_attributes, f);
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file) fail(path, "cannot be opened for writing");
  if (std::fwrite(header.data(), 1, header.size(), file.get()) != header.size() ||
      std::fwrite(body.data(), 1, body.size(), file.get()) != body.size())
    fail(path, "could not be written");
}

}  // namespace kiln::render
