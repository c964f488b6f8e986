// read_ply(): Stanford PLY files, ascii and binary, read by hand. Assimp (Debian's
// libassimp-dev 5.2) was tried first: it reads a truncated binary file or a header with a
// misspelt type without an error, returning made-up values, and reports no location, so it
// cannot give the errors this reader must. The header is parsed into elements and
// properties; a body reader then yields one value at a time (ascii tokens or binary with the
// file's byte order), checking every read against the end of the file.
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

#include "mesh_io.h"
#include "shapes/ply_attributes.h"

namespace kiln::render {
namespace {

enum class PlyType : uint8_t { Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64 };

/// The type names PLY 1.0 defines, the sized aliases most writers use, and Mitsuba's long/ulong.
constexpr std::pair<const char*, PlyType> kTypeNames[] = {
    {"char", PlyType::Int8},       {"int8", PlyType::Int8},      {"uchar", PlyType::UInt8},
    {"uint8", PlyType::UInt8},     {"short", PlyType::Int16},    {"int16", PlyType::Int16},
    {"ushort", PlyType::UInt16},   {"uint16", PlyType::UInt16},  {"int", PlyType::Int32},
    {"int32", PlyType::Int32},     {"uint", PlyType::UInt32},    {"uint32", PlyType::UInt32},
    {"long", PlyType::Int64},      {"ulong", PlyType::UInt64},   {"float", PlyType::Float32},
    {"float32", PlyType::Float32}, {"double", PlyType::Float64}, {"float64", PlyType::Float64},
};

size_t size_of(PlyType type) {
  switch (type) {
    case PlyType::Int8:
    case PlyType::UInt8: return 1;
    case PlyType::Int16:
    case PlyType::UInt16: return 2;
    case PlyType::Int32:
    case PlyType::UInt32:
    case PlyType::Float32: return 4;
    case PlyType::Int64:
    case PlyType::UInt64:
    case PlyType::Float64: return 8;
  }
  return 0;
}

bool is_integer(PlyType type) { return type != PlyType::Float32 && type != PlyType::Float64; }

/// A double as the nearest float, infinite beyond the float range (where a plain conversion is
/// undefined behaviour).
float to_float(double value) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  if (std::isfinite(value) && std::abs(value) > std::numeric_limits<float>::max())
    return value > 0 ? kInfinity : -kInfinity;
  return float(value);
}

struct PlyProperty {
  std::string name;
  PlyType type;                  ///< of the value, or of a list's entries
  std::optional<PlyType> count;  ///< a list's count type; empty for a scalar
};

struct PlyElement {
  std::string name;
  uint64_t count;
  std::vector<PlyProperty> properties;
  size_t line;  ///< of its `element` statement

  /// The property named `name`, or null.
  const PlyProperty* find(const std::string& name) const {
    for (const PlyProperty& property : properties)
      if (property.name == name) return &property;
    return nullptr;
  }
};

enum class PlyFormat { Ascii, BinaryLittleEndian, BinaryBigEndian };

struct PlyHeader {
  PlyFormat format;
  std::vector<PlyElement> elements;
  size_t body_offset;  ///< the first byte after `end_header`'s line
  size_t body_line;    ///< the line the body starts on
};

/// Splits a header line into its whitespace-separated words.
std::vector<std::string> words_of(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

PlyHeader parse_header(const std::string& path, const std::string& bytes) {
  PlyHeader header{};
  bool has_format = false;
  size_t offset = 0, line_number = 0;
  while (true) {
    if (offset >= bytes.size()) mesh_io::fail(path, "header", "the file ends before `end_header`");
    size_t end = bytes.find('\n', offset);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(offset, end - offset);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    offset = end + 1;
    std::string where = "line " + std::to_string(++line_number);
    auto fail = [&](const std::string& what) { mesh_io::fail(path, where, what); };
    std::vector<std::string> words = words_of(line);
    if (line_number == 1) {
      if (words != std::vector<std::string>{"ply"}) fail("not a PLY file (the first line is not `ply`)");
      continue;
    }
    if (words.empty() || words[0] == "comment" || words[0] == "obj_info") continue;
    const std::string& keyword = words[0];
    if (keyword == "format") {
      if (has_format) fail("a second `format` statement");
      if (words.size() != 3 || words[2] != "1.0")
        fail("expected `format <ascii|binary_little_endian|binary_big_endian> 1.0`");
      if (words[1] == "ascii")
        header.format = PlyFormat::Ascii;
      else if (words[1] == "binary_little_endian")
        header.format = PlyFormat::BinaryLittleEndian;
      else if (words[1] == "binary_big_endian")
        header.format = PlyFormat::BinaryBigEndian;
      else
        fail("unknown format `" + words[1] + "` (accepted: ascii, binary_little_endian, binary_big_endian)");
      has_format = true;
    } else if (keyword == "element") {
      uint64_t count = 0;
      if (words.size() != 3 || std::from_chars(words[2].data(), words[2].data() + words[2].size(), count).ptr !=
                                   words[2].data() + words[2].size())
        fail("expected `element <name> <count>`");
      for (const PlyElement& element : header.elements)
        if (element.name == words[1]) fail("a second element `" + words[1] + "`");
      header.elements.push_back({words[1], count, {}, line_number});
    } else if (keyword == "property") {
      if (header.elements.empty()) fail("a property before any element");
      auto type_of = [&](const std::string& name) {
        for (auto [type_name, type] : kTypeNames)
          if (name == type_name) return type;
        mesh_io::fail(path, where,
                      "unknown type `" + name +
                          "` (accepted: char, uchar, short, ushort, int, uint, float, double, their sized names int8 "
                          "... float64, "
                          "long, ulong)");
      };
      PlyElement& element = header.elements.back();
      PlyProperty property;
      if (words.size() == 5 && words[1] == "list")
        property = {words[4], type_of(words[3]), type_of(words[2])};
      else if (words.size() == 3 && words[1] != "list")
        property = {words[2], type_of(words[1]), std::nullopt};
      else
        fail("expected `property <type> <name>` or `property list <count type> <type> <name>`");
      if (property.count && !is_integer(*property.count))
        fail("list `" + property.name + "` has a floating-point count type");
      if (element.find(property.name))
        fail("a second property `" + property.name + "` in element `" + element.name + "`");
      element.properties.push_back(property);
    } else if (keyword == "end_header") {
      if (words.size() != 1) fail("unexpected words after `end_header`");
      break;
    } else {
      fail("unknown header statement `" + keyword + "`");
    }
  }
  if (!has_format) mesh_io::fail(path, "header", "no `format` statement");
  header.body_offset = std::min(offset, bytes.size());
  header.body_line = line_number + 1;
  return header;
}

/// Where the body reader stands, for messages: the element, its record and the property.
struct BodyPosition {
  const PlyElement* element = nullptr;
  uint64_t record = 0;
  const PlyProperty* property = nullptr;
};

/// Reads a PLY body one value at a time. Every read is checked against the end of the file;
/// a failure raises FileError naming the element, record and property (and the line in ascii).
class BodyReader {
 public:
  BodyReader(const std::string& path, const std::string& bytes, const PlyHeader& header)
      : path_(path), bytes_(bytes), format_(header.format), offset_(header.body_offset), line_(header.body_line) {}

  BodyPosition position;

  /// The next value, of `type`, as a double (exact for every integer an index can be).
  double value(PlyType type) { return format_ == PlyFormat::Ascii ? ascii_value(type) : binary_value(type); }

  /// Raises FileError unless the body has been read to its end (ascii: only whitespace left).
  void expect_end() {
    if (format_ == PlyFormat::Ascii) {
      skip_space();
      if (offset_ < bytes_.size())
        mesh_io::fail(path_, "line " + std::to_string(line_), "content after the last element");
    } else if (offset_ < bytes_.size()) {
      mesh_io::fail(path_, "byte " + std::to_string(offset_),
                    std::to_string(bytes_.size() - offset_) + " byte(s) after the last element");
    }
  }

  /// The bytes not read yet: a bound on how many more values the file can hold.
  size_t bytes_left() const { return bytes_.size() - std::min(offset_, bytes_.size()); }

  [[noreturn]] void fail(const std::string& what) const {
    std::string where;
    if (format_ == PlyFormat::Ascii) where = "line " + std::to_string(line_) + ", ";
    if (!position.element) mesh_io::fail(path_, where + "body", what);
    where += "element `" + position.element->name + "` " + std::to_string(position.record) + " (of " +
             std::to_string(position.element->count) + ")";
    if (position.property) where += ", property `" + position.property->name + "`";
    mesh_io::fail(path_, where, what);
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

  void skip_space() {
    for (; offset_ < bytes_.size() && is_space(bytes_[offset_]); ++offset_)
      if (bytes_[offset_] == '\n') ++line_;
  }

  double ascii_value(PlyType type) {
    skip_space();
    if (offset_ >= bytes_.size()) fail("the file ends here");
    const char* begin = bytes_.data() + offset_;
    const char* end = begin;
    while (end < bytes_.data() + bytes_.size() && !is_space(*end)) ++end;
    offset_ += end - begin;
    std::string token(begin, end);
    if (*begin == '+') ++begin;
    double result = 0;
    bool parsed = false;
    if (type == PlyType::UInt64) {
      uint64_t integer = 0;
      parsed = std::from_chars(begin, end, integer).ptr == end;
      result = double(integer);
    } else if (is_integer(type)) {
      int64_t integer = 0;
      parsed = std::from_chars(begin, end, integer).ptr == end && fits(type, integer);
      result = double(integer);
    } else {
      parsed = std::from_chars(begin, end, result).ptr == end;
      if (type == PlyType::Float32) result = to_float(result);
    }
    if (!parsed) fail("`" + token + "` is not a value of the property's type");
    return result;
  }

  /// Whether an ascii integer lies in the range of `type`.
  static bool fits(PlyType type, int64_t value) {
    switch (type) {
      case PlyType::Int8: return value >= INT8_MIN && value <= INT8_MAX;
      case PlyType::UInt8: return value >= 0 && value <= UINT8_MAX;
      case PlyType::Int16: return value >= INT16_MIN && value <= INT16_MAX;
      case PlyType::UInt16: return value >= 0 && value <= UINT16_MAX;
      case PlyType::Int32: return value >= INT32_MIN && value <= INT32_MAX;
      case PlyType::UInt32: return value >= 0 && value <= int64_t(UINT32_MAX);
      case PlyType::Int64:
      case PlyType::UInt64:
      case PlyType::Float32:
      case PlyType::Float64: return true;
    }
    return false;
  }

  double binary_value(PlyType type) {
    size_t size = size_of(type);
    if (bytes_left() < size) fail("the file ends here");
    unsigned char raw[8];
    std::memcpy(raw, bytes_.data() + offset_, size);
    offset_ += size;
    bool file_big_endian = format_ == PlyFormat::BinaryBigEndian;
    if (file_big_endian != (std::endian::native == std::endian::big)) std::reverse(raw, raw + size);
    switch (type) {
      case PlyType::Int8: return as<int8_t>(raw);
      case PlyType::UInt8: return as<uint8_t>(raw);
      case PlyType::Int16: return as<int16_t>(raw);
      case PlyType::UInt16: return as<uint16_t>(raw);
      case PlyType::Int32: return as<int32_t>(raw);
      case PlyType::UInt32: return as<uint32_t>(raw);
      case PlyType::Int64: return double(as<int64_t>(raw));
      case PlyType::UInt64: return double(as<uint64_t>(raw));
      case PlyType::Float32: return as<float>(raw);
      case PlyType::Float64: return as<double>(raw);
    }
    return 0;
  }

  template <typename T> static T as(const unsigned char* raw) {
    T value;
    std::memcpy(&value, raw, sizeof(T));
    return value;
  }

  const std::string& path_;
  const std::string& bytes_;
  PlyFormat format_;
  size_t offset_, line_;
};

/// What a vertex property is used for: its slot in a vertex's 8 values, or none.
constexpr int kSkip = -1;
enum VertexSlot { kX, kY, kZ, kNx, kNy, kNz, kU, kV, kSlotCount };
using SlotName = std::pair<const char*, VertexSlot>;
constexpr SlotName kPositionNames[] = {{"x", kX}, {"y", kY}, {"z", kZ}};
constexpr SlotName kNormalNames[] = {{"nx", kNx}, {"ny", kNy}, {"nz", kNz}};

/// The names of the uv pair, in Mitsuba's order of preference.
constexpr std::pair<const char*, const char*> kUvNames[] = {{"u", "v"}, {"texture_u", "texture_v"}, {"s", "t"}};

/// The slot of each of the vertex element's properties; FileError when x, y or z is missing
/// or a used property is a list.
std::vector<int> vertex_slots(const std::string& path, const PlyElement& vertex, bool* has_normals, bool* has_uvs) {
  std::vector<int> slots(vertex.properties.size(), kSkip);
  auto assign = [&](const std::string& name, int slot) {
    const PlyProperty* property = vertex.find(name);
    if (property->count)
      mesh_io::fail(path, "line " + std::to_string(vertex.line),
                    "property `" + name + "` of element `vertex` is a list (a single value is needed)");
    slots[property - vertex.properties.data()] = slot;
  };
  for (auto [name, slot] : kPositionNames) {
    if (!vertex.find(name))
      mesh_io::fail(path, "line " + std::to_string(vertex.line),
                    std::string("element `vertex` has no property `") + name + "`");
    assign(name, slot);
  }
  *has_normals = vertex.find("nx") && vertex.find("ny") && vertex.find("nz");
  if (*has_normals)
    for (auto [name, slot] : kNormalNames) assign(name, slot);
  *has_uvs = false;
  for (auto [u, v] : kUvNames)
    if (!*has_uvs && vertex.find(u) && vertex.find(v)) {
      assign(u, kU);
      assign(v, kV);
      *has_uvs = true;
    }
  return slots;
}

/// The face element's list of vertex indices (Mitsuba prefers `vertex_index`).
const PlyProperty& index_list(const std::string& path, const PlyElement& face) {
  const PlyProperty* list = face.find("vertex_index");
  if (!list) list = face.find("vertex_indices");
  std::string where = "line " + std::to_string(face.line);
  if (!list) mesh_io::fail(path, where, "element `face` has no list `vertex_indices` (or `vertex_index`)");
  if (!list->count) mesh_io::fail(path, where, "property `" + list->name + "` of element `face` is not a list");
  if (!is_integer(list->type))
    mesh_io::fail(path, where, "list `" + list->name + "` has floating-point entries (integer indices are needed)");
  return *list;
}

/// Reads (and discards) one property of a record that no slot uses.
void skip_property(BodyReader& body, const PlyProperty& property) {
  if (!property.count) {
    body.value(property.type);
    return;
  }
  double count = body.value(*property.count);
  if (count < 0) body.fail("a list of negative length");
  for (double k = 0; k < count; ++k) body.value(property.type);
}

/// The values of one element's properties that are mesh attributes (ply_attributes.h), a
/// record at a time: take() keeps a property's value, commit() appends the record's to the
/// mesh's attributes.
class AttributeReader {
 public:
  /// `used[k]`: property k of `element` is read for something else.
  AttributeReader(const PlyElement& element, const std::vector<bool>& used, MeshData& mesh)
      : of_(element.properties.size()) {
    std::vector<std::string> names;
    for (size_t k = 0; k < element.properties.size(); ++k)
      names.push_back(used[k] || element.properties[k].count ? "" : element.properties[k].name);
    for (const PlyAttributeGroup& group : ply_attribute_groups(element.name, names)) {
      MeshAttributeData& attribute = mesh.attributes[group.name];
      attribute.channels = group.properties.size();
      for (size_t c = 0; c < group.properties.size(); ++c) of_[group.properties[c]] = {targets_.size(), c};
      targets_.push_back(&attribute);
      record_.emplace_back(group.properties.size());
    }
  }
  bool wants(size_t property) const { return of_[property].has_value(); }
  void take(size_t property, double value) { record_[of_[property]->first][of_[property]->second] = to_float(value); }
  /// Appends the record's values `copies` times (a polygon's triangles each get its values).
  void commit(size_t copies) const {
    for (size_t g = 0; g < targets_.size(); ++g)
      for (size_t copy = 0; copy < copies; ++copy)
        targets_[g]->values.insert(targets_[g]->values.end(), record_[g].begin(), record_[g].end());
  }

 private:
  std::vector<MeshAttributeData*> targets_;  ///< per group (std::map nodes stay where they are)
  std::vector<std::optional<std::pair<size_t, size_t>>> of_;
  std::vector<std::vector<float>> record_;
};

class PlyBuilder {
 public:
  PlyBuilder(const std::string& path, const std::string& bytes, const MeshReadOptions& options)
      : path_(path), options_(options), header_(parse_header(path, bytes)), body_(path, bytes, header_) {}

  MeshData read() {
    // The header is checked whole before the body is read.
    const PlyElement* vertex = nullptr;
    const PlyProperty* index_list_property = nullptr;
    for (const PlyElement& element : header_.elements) {
      if (element.name == "vertex") vertex = &element;
      if (element.name == "face") index_list_property = &index_list(path_, element);
    }
    if (!vertex) mesh_io::fail(path_, "header", "no element `vertex`");
    if (vertex->count > std::numeric_limits<uint32_t>::max())
      mesh_io::fail(path_, "line " + std::to_string(vertex->line), "more vertices than 32-bit indices can address");
    bool has_normals = false, has_uvs = false;
    std::vector<int> slots = vertex_slots(path_, *vertex, &has_normals, &has_uvs);
    has_normals &= !options_.face_normals;
    for (const PlyElement& element : header_.elements) {
      body_.position = {&element, 0, nullptr};
      if (&element == vertex)
        read_vertices(element, slots, has_normals, has_uvs);
      else if (element.name == "face")
        read_faces(element, *index_list_property, vertex->count);
      else
        skip_element(element);
    }
    body_.position = {};
    body_.expect_end();
    return std::move(mesh_);
  }

 private:
  void read_vertices(const PlyElement& element, const std::vector<int>& slots, bool has_normals, bool has_uvs) {
    reserve(mesh_.positions, element.count * 3);
    if (has_normals) reserve(mesh_.normals, element.count * 3);
    if (has_uvs) reserve(mesh_.uvs, element.count * 2);
    std::vector<bool> used(slots.size());
    for (size_t k = 0; k < slots.size(); ++k) used[k] = slots[k] != kSkip;
    AttributeReader attributes(element, used, mesh_);
    for (uint64_t i = 0; i < element.count; ++i) {
      body_.position.record = i;
      float values[kSlotCount] = {};
      for (size_t k = 0; k < slots.size(); ++k) {
        const PlyProperty& property = element.properties[k];
        body_.position.property = &property;
        if (attributes.wants(k))
          attributes.take(k, body_.value(property.type));
        else if (slots[k] == kSkip)
          skip_property(body_, property);
        else
          values[slots[k]] = to_float(body_.value(property.type));
      }
      attributes.commit(1);
      body_.position.property = nullptr;
      if (!std::all_of(values, values + 3, [](float x) { return std::isfinite(x); }))
        body_.fail("vertex position " + mesh_io::format_values(values, 3) + " is not finite");
      mesh_.positions.insert(mesh_.positions.end(), values, values + 3);
      if (has_normals) {
        if (!mesh_io::normalize_normal(values + kNx))
          body_.fail("vertex normal " + mesh_io::format_values(values + kNx, 3) + " has no direction");
        mesh_.normals.insert(mesh_.normals.end(), values + kNx, values + kNx + 3);
      }
      if (has_uvs && !mesh_io::append_uv(mesh_.uvs, values[kU], values[kV], options_.flip_tex_coords))
        body_.fail("texture coordinate " + mesh_io::format_values(values + kU, 2) + " is not finite");
    }
  }

  void read_faces(const PlyElement& element, const PlyProperty& list, uint64_t vertex_count) {
    reserve(mesh_.faces, element.count * 3);
    std::vector<uint32_t> corners;
    std::vector<bool> used(element.properties.size());
    for (size_t k = 0; k < used.size(); ++k) used[k] = &element.properties[k] == &list;
    AttributeReader attributes(element, used, mesh_);
    for (uint64_t i = 0; i < element.count; ++i) {
      body_.position.record = i;
      size_t triangles = 0;
      for (size_t k = 0; k < element.properties.size(); ++k) {
        const PlyProperty& property = element.properties[k];
        body_.position.property = &property;
        if (attributes.wants(k)) {
          attributes.take(k, body_.value(property.type));
          continue;
        }
        if (&property != &list) {
          skip_property(body_, property);
          continue;
        }
        double count = body_.value(*list.count);
        if (count < 3) body_.fail("a face of " + std::to_string(int64_t(count)) + " corners (at least 3 needed)");
        corners.clear();
        for (double k = 0; k < count; ++k) {
          double index = body_.value(list.type);
          if (index < 0 || index >= double(vertex_count))
            body_.fail("vertex index " + std::to_string(int64_t(index)) + " out of range (the file has " +
                       std::to_string(vertex_count) + " vertices)");
          corners.push_back(uint32_t(index));
        }
        mesh_io::append_fan(mesh_.faces, corners.data(), corners.size());
        triangles = corners.size() - 2;
      }
      attributes.commit(triangles);
    }
  }

  void skip_element(const PlyElement& element) {
    if (element.properties.empty()) return;  // nothing to read, however large its count
    for (uint64_t i = 0; i < element.count; ++i) {
      body_.position.record = i;
      for (const PlyProperty& property : element.properties) {
        body_.position.property = &property;
        skip_property(body_, property);
      }
    }
  }

  /// Reserves room for `wanted` values, but never more than the rest of the file can hold (a
  /// header may claim any count).
  template <typename T> void reserve(std::vector<T>& values, uint64_t wanted) {
    values.reserve(size_t(std::min<uint64_t>(wanted, body_.bytes_left())));
  }

  const std::string& path_;
  MeshReadOptions options_;
  PlyHeader header_;
  BodyReader body_;
  MeshData mesh_;
};

}  // namespace

MeshData read_ply(const std::string& path, const MeshReadOptions& options) {
  std::string bytes = mesh_io::read_file(path);
  return PlyBuilder(path, bytes, options).read();
}

}  // namespace kiln::render
