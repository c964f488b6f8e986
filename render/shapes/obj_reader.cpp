// read_obj(): Wavefront OBJ files through tinyobjloader's streaming interface, with corners
// welded into vertices as Mitsuba 3.9's obj shape welds them: one vertex per distinct
// (position, uv, normal) index triple, numbered in order of first use, polygons fanned.
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>
#include <tiny_obj_loader.h>

#include <algorithm>
#include <cmath>
#include <istream>
#include <streambuf>
#include <unordered_map>

#include "mesh_io.h"

namespace kiln::render {
namespace {

/// One corner's indices, 1-based as in the file (relative ones resolved); 0 when absent.
struct CornerKey {
  int64_t position = 0, uv = 0, normal = 0;
  bool operator==(const CornerKey&) const = default;
};

struct CornerKeyHash {
  size_t operator()(const CornerKey& key) const {
    size_t hash = std::hash<int64_t>()(key.position);
    hash = hash * 1000003u ^ std::hash<int64_t>()(key.uv);
    return hash * 1000003u ^ std::hash<int64_t>()(key.normal);
  }
};

/// "1/2/3", "1//3", "1/2" or "1": a corner as the file wrote it.
std::string corner_text(const CornerKey& key) {
  std::string text = std::to_string(key.position);
  if (key.uv || key.normal) text += "/" + (key.uv ? std::to_string(key.uv) : std::string());
  if (key.normal) text += "/" + std::to_string(key.normal);
  return text;
}

/// A stream buffer reading a string in place (std::istringstream would copy it, and so would
/// each call of its str()), which tells how far it has been read.
class TextBuffer : public std::streambuf {
 public:
  explicit TextBuffer(const std::string& text) {
    char* begin = const_cast<char*>(text.data());  // only ever read
    setg(begin, begin, begin + text.size());
  }
  size_t consumed() const { return size_t(gptr() - eback()); }
};

/// Collects what tinyobjloader's callbacks report, line by line, and welds the corners.
class ObjBuilder {
 public:
  ObjBuilder(const std::string& path, std::string text, const MeshReadOptions& options)
      : path_(path), options_(options), text_(std::move(text)), buffer_(text_), stream_(&buffer_) {}

  MeshData read() {
    tinyobj::callback_t callbacks;
    callbacks.vertex_cb = [](void* self, float x, float y, float z, float) {
      static_cast<ObjBuilder*>(self)->add_position(x, y, z);
    };
    callbacks.normal_cb = [](void* self, float x, float y, float z) {
      static_cast<ObjBuilder*>(self)->add_normal(x, y, z);
    };
    callbacks.texcoord_cb = [](void* self, float u, float v, float) { static_cast<ObjBuilder*>(self)->add_uv(u, v); };
    callbacks.index_cb = [](void* self, tinyobj::index_t* corners, int count) {
      static_cast<ObjBuilder*>(self)->add_face(corners, count);
    };
    std::string warnings, errors;
    if (!tinyobj::LoadObjWithCallback(stream_, callbacks, this, nullptr, &warnings, &errors))
      mesh_io::fail(path_, "tinyobjloader", errors);
    return finish();
  }

 private:
  /// A vertex: its corner's indices and the line that first used it.
  struct Vertex {
    CornerKey key;
    size_t line;
  };

  /// "line N": the line tinyobjloader has just read (the stream stands at the start of the
  /// next one). Line ends are "\n", "\r\n" or "\r", as tinyobjloader splits lines.
  std::string where() {
    for (size_t end = std::max<size_t>(buffer_.consumed(), 1) - 1; scanned_ < end; ++scanned_) {
      char c = text_[scanned_];
      if (c == '\n' || (c == '\r' && text_[scanned_ + 1] != '\n')) ++line_ends_;
    }
    last_line_ = line_ends_ + 1;
    return "line " + std::to_string(last_line_);
  }

  void add_position(float x, float y, float z) {
    float p[3] = {x, y, z};
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
      mesh_io::fail(path_, where(), "vertex position " + mesh_io::format_values(p, 3) + " is not finite");
    file_positions_.insert(file_positions_.end(), p, p + 3);
  }

  void add_normal(float x, float y, float z) {
    ++file_normal_count_;
    if (options_.face_normals) return;  // Mitsuba neither keeps nor checks them then
    float n[3] = {x, y, z};
    if (!mesh_io::normalize_normal(n))
      mesh_io::fail(path_, where(), "vertex normal " + mesh_io::format_values(n, 3) + " has no direction");
    file_normals_.insert(file_normals_.end(), n, n + 3);
  }

  void add_uv(float u, float v) {
    if (!mesh_io::append_uv(file_uvs_, u, v, options_.flip_tex_coords)) {
      float uv[2] = {u, v};
      mesh_io::fail(path_, where(), "texture coordinate " + mesh_io::format_values(uv, 2) + " is not finite");
    }
  }

  /// A corner's index as the file wrote it (0: absent; negative: counted back from the last of
  /// the `defined` values so far), 1-based.
  int64_t resolve(int index, size_t defined, const char* what, const std::string& line) {
    if (index >= 0) return index;
    int64_t resolved = int64_t(defined) + index + 1;
    if (resolved < 1)
      mesh_io::fail(path_, line,
                    "relative " + std::string(what) + " index " + std::to_string(index) + " reaches before the first " +
                        what + " (" + std::to_string(defined) + " defined so far)");
    return resolved;
  }

  void add_face(const tinyobj::index_t* corners, int count) {
    std::string line = where();
    if (count < 3) mesh_io::fail(path_, line, "a face has " + std::to_string(count) + " corners (at least 3 needed)");
    corner_ids_.clear();
    CornerKey first;
    for (int k = 0; k < count; ++k) {
      if (corners[k].vertex_index == 0)
        mesh_io::fail(path_, line, "corner " + std::to_string(k + 1) + " has no vertex index");
      CornerKey key{resolve(corners[k].vertex_index, file_positions_.size() / 3, "vertex", line),
                    resolve(corners[k].texcoord_index, file_uvs_.size() / 2, "texture coordinate", line),
                    resolve(corners[k].normal_index, file_normal_count_, "normal", line)};
      if (k == 0) first = key;
      // Mitsuba 3.9 carries a corner's uv and normal index over to later corners that have
      // none, so a mixed face would weld differently there: refuse it.
      if ((key.uv != 0) != (first.uv != 0) || (key.normal != 0) != (first.normal != 0))
        mesh_io::fail(path_, line,
                      "the corners of a face differ in which indices they give (" + corner_text(first) + " and " +
                          corner_text(key) + ")");
      auto [found, inserted] = ids_.try_emplace(key, uint32_t(vertices_.size()));
      if (inserted) vertices_.push_back({key, last_line_});
      corner_ids_.push_back(found->second);
    }
    mesh_io::append_fan(faces_, corner_ids_.data(), corner_ids_.size());
  }

  /// Checks a vertex's index (1-based, 0 when absent) against the number of values the file
  /// defined (an index may refer to a value defined after the face, as Mitsuba allows for uvs).
  void check_index(const Vertex& vertex, int64_t index, size_t defined, const char* what) {
    if (size_t(index) > defined)
      mesh_io::fail(path_, "line " + std::to_string(vertex.line),
                    "corner " + corner_text(vertex.key) + " refers to " + what + " " + std::to_string(index) +
                        ", but the file defines " + std::to_string(defined));
  }

  MeshData finish() {
    bool has_uvs = !file_uvs_.empty();
    bool has_normals = file_normal_count_ > 0 && !options_.face_normals;
    MeshData mesh;
    mesh.faces = std::move(faces_);
    bool some_without_normal = false;
    for (const Vertex& vertex : vertices_) {
      const CornerKey& key = vertex.key;
      check_index(vertex, key.position, file_positions_.size() / 3, "vertex");
      check_index(vertex, key.uv, file_uvs_.size() / 2, "texture coordinate");
      if (!options_.face_normals) check_index(vertex, key.normal, file_normal_count_, "normal");
      const float* p = &file_positions_[3 * (key.position - 1)];
      mesh.positions.insert(mesh.positions.end(), p, p + 3);
      if (has_uvs) {
        const float* uv = key.uv ? &file_uvs_[2 * (key.uv - 1)] : kNoUv;
        mesh.uvs.insert(mesh.uvs.end(), uv, uv + 2);
      }
      if (has_normals) {
        some_without_normal |= key.normal == 0;
        const float* n = key.normal ? &file_normals_[3 * (key.normal - 1)] : kNoNormal;
        mesh.normals.insert(mesh.normals.end(), n, n + 3);
      }
    }
    if (some_without_normal) {
      std::vector<float> computed = vertex_normals(mesh);
      for (size_t i = 0; i < vertices_.size(); ++i)
        if (vertices_[i].key.normal == 0) std::copy_n(&computed[3 * i], 3, &mesh.normals[3 * i]);
    }
    return mesh;
  }

  static constexpr float kNoUv[2] = {0, 0};
  static constexpr float kNoNormal[3] = {0, 0, 0};  // replaced by a computed normal

  const std::string& path_;
  MeshReadOptions options_;
  std::string text_;
  TextBuffer buffer_;
  std::istream stream_;
  size_t scanned_ = 0, line_ends_ = 0, last_line_ = 0;
  std::vector<float> file_positions_, file_normals_, file_uvs_;
  size_t file_normal_count_ = 0;
  std::unordered_map<CornerKey, uint32_t, CornerKeyHash> ids_;
  std::vector<Vertex> vertices_;
  std::vector<uint32_t> faces_, corner_ids_;
};

}  // namespace

MeshData read_obj(const std::string& path, const MeshReadOptions& options) {
  return ObjBuilder(path, mesh_io::read_file(path), options).read();
}

}  // namespace kiln::render
