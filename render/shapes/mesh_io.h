// What the obj and ply readers share: reading a file whole, their error message, a polygon's
// fan of triangles, and the checks of a normal or uv read from a file. Private to render/shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::render::mesh_io {

/// The file's bytes; FileError when it is missing or unreadable.
std::string read_file(const std::string& path);

/// Throws FileError "kiln.render: <path>: <where>: <what>" (`where` is a line or an element).
[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what);

/// Appends the triangles of the polygon `corners[0..count)` (count >= 3) as Mitsuba does: a fan
/// around the first corner, (c0, c1, c2), (c0, c2, c3), ...
void append_fan(std::vector<uint32_t>& faces, const uint32_t* corners, size_t count);

/// Normalizes a normal read from a file; false when it has no direction (zero length or not
/// finite), which the caller reports.
bool normalize_normal(float normal[3]);

/// Appends a uv read from a file (v -> 1 - v when `flip`); false when it is not finite.
bool append_uv(std::vector<float>& uvs, float u, float v, bool flip);

/// "(x, y, z)" for messages, with every digit a float has.
std::string format_values(const float* values, size_t count);

}  // namespace kiln::render::mesh_io
