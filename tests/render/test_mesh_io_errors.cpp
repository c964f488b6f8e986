// Malformed mesh files: each error path raises kiln::FileError naming the file, the problem and
// where it is; files cut at every byte or with bytes overwritten never crash or hang.
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>

#include <gtest/gtest.h>

#include <functional>

#include "mesh_test_files.h"

using namespace kiln;
using namespace kiln::render;
using mesh_test::PlyWriter;
using mesh_test::TempFile;

namespace {

using Reader = std::function<MeshData(const std::string&)>;
const Reader kObj = [](const std::string& path) { return read_obj(path); };
const Reader kPly = [](const std::string& path) { return read_ply(path); };

/// Reading `contents` raises FileError whose message names the file and contains each of `parts`.
void expect_file_error(const Reader& read, const std::string& contents, std::initializer_list<const char*> parts) {
  TempFile file("bad", contents);
  try {
    read(file.path());
    ADD_FAILURE() << "no error for:\n" << contents;
  } catch (const FileError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(file.path()), std::string::npos) << message;
    for (const char* part : parts) EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
  }
}

/// A header with x y z floats and a face list, ready for body values.
PlyWriter triangle_ply(const std::string& format, int vertices = 3, int faces = 1) {
  PlyWriter ply(format);
  ply.header("element vertex " + std::to_string(vertices));
  for (const char* name : {"x", "y", "z"}) ply.header(std::string("property float ") + name);
  ply.header("element face " + std::to_string(faces)).header("property list uchar int vertex_indices");
  return ply;
}

/// A valid triangle in `format` whose face indices are `a b c`.
std::string triangle_file(const std::string& format, double a = 0, double b = 1, double c = 2) {
  PlyWriter ply = triangle_ply(format);
  ply.values("float", {0, 0, 0}).end_record().values("float", {1, 0, 0}).end_record();
  ply.values("float", {0, 1, 0}).end_record().value("uchar", 3).values("int", {a, b, c}).end_record();
  return ply.str();
}

/// The header of a PLY file followed by `statements` and end_header.
std::string ply_header(const std::string& statements) {
  return "ply\nformat ascii 1.0\n" + statements + "end_header\n";
}

}  // namespace

TEST(MeshIoErrors, MissingFilesAndDirectories) {
  for (const Reader& read : {kObj, kPly}) {
    EXPECT_THROW(read("/nonexistent/kiln/mesh.obj"), FileError);
    EXPECT_THROW(read(std::filesystem::temp_directory_path().string()), FileError);
  }
}

TEST(MeshIoErrors, ObjFaces) {
  const std::string vertices = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
  expect_file_error(kObj, vertices + "f 1 2\n", {"line 4", "2 corners", "at least 3"});
  expect_file_error(kObj, vertices + "f 1 2 9\n", {"line 4", "refers to vertex 9", "defines 3"});
  expect_file_error(kObj, vertices + "vt 0 0\nf 1/1 2/2 3/3\n", {"line 5", "texture coordinate 2", "defines 1"});
  expect_file_error(kObj, vertices + "vn 0 0 1\nf 1//1 2//1 3//4\n", {"line 5", "corner 3//4", "normal 4"});
  expect_file_error(kObj, vertices + "f 0 1 2\n", {"line 4", "corner 1 has no vertex index"});
  expect_file_error(kObj, vertices + "f nonsense 1 2\n", {"line 4", "no vertex index"});
  expect_file_error(kObj, vertices + "f -4 -2 -1\n", {"line 4", "relative vertex index -4", "3 defined so far"});
  expect_file_error(kObj, vertices + "vt 0 0\nf 1/1 2/1 3\n", {"line 5", "differ", "1/1 and 3"});
  expect_file_error(kObj, vertices + "vn 0 0 1\nf 1//1 2//1 3/1/1\n", {"line 5", "differ"});
}

TEST(MeshIoErrors, ObjValues) {
  expect_file_error(kObj, "v 0 0 0\nv 1e39 0 0\n", {"line 2", "vertex position (inf, 0, 0) is not finite"});
  expect_file_error(kObj, "vn 0 0 0\n", {"line 1", "vertex normal (0, 0, 0) has no direction"});
  expect_file_error(kObj, "# uv\nvt 0 -1e39\n", {"line 2", "texture coordinate (0, -inf) is not finite"});
}

TEST(MeshIoErrors, ObjFaceNormalsIgnoreTheNormals) {
  // As Mitsuba 3.9.1: with face_normals, normals are neither kept nor checked.
  TempFile file("normals.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 0\nf 1//1 2//1 3//7\n");
  MeshData mesh = read_obj(file.path(), {.face_normals = true});
  EXPECT_EQ(mesh.face_count(), 1u);
  EXPECT_TRUE(mesh.normals.empty());
}

TEST(MeshIoErrors, PlyHeader) {
  const std::string vertex = "element vertex 1\nproperty float x\nproperty float y\nproperty float z\n";
  expect_file_error(kPly, "solid cube\n", {"line 1", "not a PLY file"});
  expect_file_error(kPly, "ply\nelement vertex 0\nend_header\n", {"header", "no `format`"});
  expect_file_error(kPly, "ply\nformat binary 1.0\n", {"line 2", "unknown format `binary`"});
  expect_file_error(kPly, "ply\nformat ascii 2.0\n", {"line 2", "expected `format"});
  expect_file_error(kPly, "ply\nformat ascii 1.0\nformat ascii 1.0\n", {"line 3", "second `format`"});
  expect_file_error(kPly, ply_header("element vertex 1\nproperty doubel x\n"), {"line 4", "unknown type `doubel`"});
  expect_file_error(kPly, ply_header("property float x\n"), {"line 3", "before any element"});
  expect_file_error(kPly, ply_header("element vertex many\n"), {"line 3", "expected `element <name> <count>`"});
  expect_file_error(kPly, ply_header(vertex + "element vertex 1\n"), {"line 7", "second element `vertex`"});
  expect_file_error(kPly, ply_header(vertex + "property float x\n"), {"line 7", "second property `x`"});
  expect_file_error(kPly, ply_header("element face 0\nproperty list float int vertex_indices\n"),
                    {"line 4", "floating-point count type"});
  expect_file_error(kPly, ply_header("element vertex 0\nproperty list int x\n"), {"line 4", "expected `property"});
  expect_file_error(kPly, ply_header("vertices 3\n"), {"line 3", "unknown header statement `vertices`"});
  expect_file_error(kPly, ply_header("end_header now\n"), {"line 3", "after `end_header`"});
  expect_file_error(kPly, "ply\nformat ascii 1.0\n" + vertex, {"header", "ends before `end_header`"});
}

TEST(MeshIoErrors, PlyElementsAndProperties) {
  const std::string vertex = "element vertex 1\nproperty float x\nproperty float y\nproperty float z\n";
  expect_file_error(kPly, ply_header("element face 0\nproperty list uchar int vertex_indices\n"),
                    {"no element `vertex`"});
  expect_file_error(kPly, ply_header("element vertex 0\nproperty float x\nproperty float y\n"),
                    {"line 3", "element `vertex` has no property `z`"});
  expect_file_error(kPly,
                    ply_header("element vertex 0\nproperty list uchar float x\nproperty float y\nproperty float z\n"),
                    {"line 3", "property `x` of element `vertex` is a list"});
  expect_file_error(kPly, ply_header(vertex + "element face 0\nproperty list uchar int vertex\n"),
                    {"line 7", "has no list `vertex_indices`"});
  expect_file_error(kPly, ply_header(vertex + "element face 0\nproperty int vertex_indices\n"),
                    {"line 7", "`vertex_indices` of element `face` is not a list"});
  expect_file_error(kPly, ply_header(vertex + "element face 0\nproperty list uchar float vertex_indices\n"),
                    {"line 7", "floating-point entries"});
  expect_file_error(kPly,
                    ply_header("element vertex 4294967296\nproperty float x\nproperty float y\nproperty float z\n"),
                    {"line 3", "more vertices than 32-bit indices"});
}

TEST(MeshIoErrors, PlyFaces) {
  for (const char* format : {"ascii", "binary_little_endian", "binary_big_endian"}) {
    SCOPED_TRACE(format);
    expect_file_error(kPly, triangle_file(format, 0, 1, 3),
                      {"element `face` 0 (of 1)", "property `vertex_indices`", "vertex index 3 out of range"});
    expect_file_error(kPly, triangle_file(format, 0, -1, 2), {"vertex index -1 out of range"});
    PlyWriter ply = triangle_ply(format);
    ply.values("float", {0, 0, 0, 1, 0, 0, 0, 1, 0}).value("uchar", 2).values("int", {0, 1});
    expect_file_error(kPly, ply.str(), {"element `face` 0", "a face of 2 corners"});
  }
}

TEST(MeshIoErrors, PlyValues) {
  for (const char* format : {"ascii", "binary_little_endian", "binary_big_endian"}) {
    SCOPED_TRACE(format);
    const double nan = std::nan("");
    PlyWriter ply = triangle_ply(format, 3, 0);
    ply.values("float", {0, 0, 0, 1, nan, 0}).end_record();
    expect_file_error(kPly, ply.str(), {"element `vertex` 1 (of 3)", "vertex position (1, nan, 0) is not finite"});

    PlyWriter normals(format);
    normals.header("element vertex 1");
    for (const char* name : {"x", "y", "z", "nx", "ny", "nz", "u", "v"})
      normals.header(std::string("property double ") + name);
    normals.values("double", {0, 0, 0, 0, 0, 0, 0, 0});
    expect_file_error(kPly, normals.str(), {"element `vertex` 0", "vertex normal (0, 0, 0) has no direction"});

    PlyWriter uvs(format);
    uvs.header("element vertex 1");
    for (const char* name : {"x", "y", "z", "u", "v"}) uvs.header(std::string("property double ") + name);
    uvs.values("double", {0, 0, 0, 1e300, 0});
    expect_file_error(kPly, uvs.str(), {"element `vertex` 0", "texture coordinate (inf, 0) is not finite"});
  }
}

TEST(MeshIoErrors, PlyTruncatedAndTrailingBodies) {
  for (const char* format : {"binary_little_endian", "binary_big_endian"}) {
    std::string whole = triangle_file(format);
    expect_file_error(kPly, whole.substr(0, whole.size() - 1),
                      {"element `face` 0 (of 1)", "property `vertex_indices`", "the file ends here"});
    expect_file_error(kPly, whole.substr(0, whole.size() - 21), {"element `vertex` 2 (of 3)", "property `y`"});
    expect_file_error(kPly, whole + "x", {"1 byte(s) after the last element"});
  }
  std::string ascii = triangle_file("ascii");
  expect_file_error(kPly, ascii.substr(0, ascii.size() - 3), {"line 13", "element `face` 0", "the file ends here"});
  expect_file_error(kPly, ascii + "\n\n4\n", {"line 16", "content after the last element"});
}

TEST(MeshIoErrors, PlyAsciiTokens) {
  auto with_vertex = [](const std::string& type, const std::string& value) {
    return ply_header("element vertex 1\nproperty " + type + " x\nproperty float y\nproperty float z\n") + value +
           " 0 0\n";
  };
  expect_file_error(kPly, with_vertex("float", "abc"), {"line 8", "`abc` is not a value of the property's type"});
  expect_file_error(kPly, with_vertex("uchar", "256"), {"`256` is not a value"});
  expect_file_error(kPly, with_vertex("char", "-129"), {"`-129` is not a value"});
  expect_file_error(kPly, with_vertex("int", "1.5"), {"`1.5` is not a value"});
  expect_file_error(kPly, with_vertex("uint", "-1"), {"`-1` is not a value"});
  expect_file_error(kPly, with_vertex("ulong", "-1"), {"`-1` is not a value"});
  expect_file_error(kPly, with_vertex("float", "1e39"), {"vertex position (inf, 0, 0) is not finite"});
}

TEST(MeshIoErrors, PlyCountsLargerThanTheFileFailWithoutAllocatingThem) {
  // A header may claim any count: the reader must neither reserve it nor loop over it.
  std::string huge = "element vertex 4000000000\nproperty float x\nproperty float y\nproperty float z\n";
  expect_file_error(kPly, ply_header(huge), {"element `vertex` 0 (of 4000000000)", "the file ends here"});
  std::string empty_element = "element nothing 18446744073709551615\n";
  TempFile file("empty_element.ply", ply_header(empty_element + "element vertex 0\nproperty float x\n"
                                                                "property float y\nproperty float z\n"));
  EXPECT_EQ(read_ply(file.path()).vertex_count(), 0u);
}

namespace {

/// Reads every prefix of `whole` and every copy with one byte overwritten: each must give a
/// mesh or a FileError (never another exception, a crash or a hang). Returns how many prefixes
/// were read without an error.
size_t read_damaged_copies(const Reader& read, const std::string& whole) {
  TempFile file("damaged", "");
  size_t prefixes_read = 0;
  auto attempt = [&](const std::string& contents) {
    file.write(contents);
    try {
      read(file.path());
      return true;
    } catch (const FileError&) {
      return false;
    }
  };
  for (size_t size = 0; size < whole.size(); ++size) prefixes_read += attempt(whole.substr(0, size));
  for (size_t i = 0; i < whole.size(); ++i)
    for (char byte : {'\0', '\xff', '\n', '9', '-', ' '}) {
      std::string damaged = whole;
      damaged[i] = byte;
      attempt(damaged);
    }
  return prefixes_read;
}

std::string textured_ply(const std::string& format) {
  PlyWriter ply(format);
  ply.header("element vertex 4");
  for (const char* name :
       {"float x", "float y", "float z", "double nx", "double ny", "double nz", "uchar red", "float s", "float t"})
    ply.header(std::string("property ") + name);
  ply.header("element face 1").header("property list uchar ushort vertex_indices");
  for (int i = 0; i < 4; ++i) {
    ply.values("float", {double(i & 1), double(i >> 1), 0}).values("double", {0, 0, 1}).value("uchar", 7);
    ply.values("float", {double(i & 1), double(i >> 1)}).end_record();
  }
  ply.value("uchar", 4).values("ushort", {0, 1, 3, 2}).end_record();
  return ply.str();
}

}  // namespace

TEST(MeshIoErrors, DamagedFilesNeverCrash) {
  // A binary PLY cut anywhere lacks bytes its header promised: every prefix fails.
  for (const char* format : {"binary_little_endian", "binary_big_endian"})
    EXPECT_EQ(read_damaged_copies(kPly, textured_ply(format)), 0u) << format;
  // Text may end at a line break and still be a (smaller) valid file; it must still never crash.
  read_damaged_copies(kPly, textured_ply("ascii"));
  read_damaged_copies(kObj,
                      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 1\nvn 0 0 1\n"
                      "f 1/1/1 2/2/1 3/1/1 4/2/1\nf -1/-1/-1 -2/-2/-1 -3/-1/-1\n");
}
