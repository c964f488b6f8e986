// Mesh files: OBJ and PLY read as Mitsuba 3.9.1 reads them (welding, fans, flips, every PLY
// format and type), compared with arrays Mitsuba printed. The error paths are in
// test_mesh_io_errors.cpp.
#include <kiln/render/mesh_data.h>

#include <gtest/gtest.h>

#include "mesh_test_files.h"

using namespace kiln::render;
using mesh_test::expect_close;
using mesh_test::PlyWriter;
using mesh_test::TempFile;

namespace {

// Two objects, a group and a material; a quad, two triangles and a pentagon sharing corners.
// Corner 6/3/1 of the pentagon reuses position 6 with another uv, so it is a new vertex.
const char* kSharedObj = R"(# test
o first
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vn 0 0 1
f 1/1/1 2/2/1 3/3/1 4/4/1
g second
usemtl red
v 2 0 0
v 2 1 0.5
vt 0.5 0.25
f 2/2/1 5/5/1 6/1/1
f 3/3/1 2/2/1 6/1/1
f 1/1/1 2/2/1 5/5/1 6/3/1 4/4/1
)";

// Mitsuba 3.9.1 (scalar_rgb) loading kSharedObj: mi.traverse(mi.load_dict({'type': 'obj', ...})).
const std::vector<uint32_t> kSharedFaces = {0, 1, 2, 0, 2, 3, 1, 4, 5, 2, 1, 5, 0, 1, 4, 0, 4, 6, 0, 6, 3};
const std::vector<double> kSharedPositions = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 0, 0, 2, 1, 0.5, 2, 1, 0.5};
const std::vector<double> kSharedUvs = {0, 1, 1, 1, 1, 0, 0, 0, 0.5, 0.75, 0, 1, 1, 0};  // flipped: v -> 1 - v

// A tetrahedron and one more triangle, with neither normals nor uvs.
const char* kPlainObj = R"(v 0 0 0
v 1 0 0
v 0 1 0
v 0 0 1
v 0.3 0.4 2
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
f 2 5 4
)";

const std::vector<uint32_t> kPlainFaces = {0, 1, 2, 0, 2, 3, 0, 3, 1, 2, 1, 3, 2, 4, 3};

std::vector<double> repeat(const std::vector<double>& values, size_t times) {
  std::vector<double> result;
  for (size_t i = 0; i < times; ++i) result.insert(result.end(), values.begin(), values.end());
  return result;
}

}  // namespace

TEST(MeshIo, ObjWeldsCornersAndFansPolygonsAsMitsuba) {
  TempFile file("shared.obj", kSharedObj);
  MeshData mesh = read_obj(file.path());
  EXPECT_EQ(mesh.faces, kSharedFaces);
  expect_close(mesh.positions, kSharedPositions);
  expect_close(mesh.uvs, kSharedUvs);
  expect_close(mesh.normals, repeat({0, 0, 1}, 7));
}

TEST(MeshIo, ObjPlacedByToWorldMatchesMitsuba) {
  TempFile file("shared.obj", kSharedObj);
  MeshData mesh = read_obj(file.path());
  place_mesh(mesh, mesh_test::kMitsubaToWorld, false, "test");
  // Mitsuba 3.9.1 with 'to_world': the kMitsubaToWorld transform.
  expect_close(mesh.positions, {0.5,
                                -1.0,
                                2.0,
                                2.232050895690918,
                                0.0,
                                2.0,
                                2.0405397415161133,
                                0.3317069709300995,
                                2.3213937282562256,
                                0.3084889054298401,
                                -0.6682929992675781,
                                2.3213937282562256,
                                3.964101552963257,
                                1.0,
                                2.0,
                                4.013635635375977,
                                0.9142042398452759,
                                2.8959269523620605,
                                4.013635635375977,
                                0.9142042398452759,
                                2.8959269523620605});
  expect_close(mesh.normals, repeat({0.32139378786087036, -0.5566703677177429, 0.7660444378852844}, 7));
  expect_close(mesh.uvs, kSharedUvs);
  EXPECT_EQ(mesh.faces, kSharedFaces);
}

TEST(MeshIo, ObjWithoutNormalsGetsMitsubasComputedNormals) {
  TempFile file("plain.obj", kPlainObj);
  MeshData mesh = read_obj(file.path());
  EXPECT_TRUE(mesh.normals.empty());
  EXPECT_TRUE(mesh.uvs.empty());
  EXPECT_EQ(mesh.faces, kPlainFaces);
  MeshData placed = mesh;
  place_mesh(placed, mesh_test::kIdentity, false, "test");
  // Mitsuba 3.9.1 loading kPlainObj without and with to_world.
  expect_close(placed.positions, {0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0.30000001192092896, 0.4000000059604645, 2});
  expect_close(placed.normals, {-0.5773502588272095, -0.5773502588272095, -0.5773502588272095, -0.2754214107990265,
                                0.9210245609283447, -0.2754214107990265, 0.7640367746353149, -0.6435480117797852,
                                -0.0457579605281353, 0.16398805379867554, -0.8545886278152466, 0.4927334785461426,
                                0.28213825821876526, -0.9169492721557617, 0.28213825821876526});
  place_mesh(mesh, mesh_test::kMitsubaToWorld, false, "test");
  expect_close(mesh.positions, {0.5, -1.0, 2.0, 0.3084889054298401, -0.6682929992675781, 2.3213937282562256,
                                2.232050895690918, 0.0, 2.0, 0.9820907115936279, -1.835005521774292, 3.149066686630249,
                                1.9071922302246094, -2.237328290939331, 4.426691055297852});
  expect_close(mesh.normals, {-0.464418888092041, -0.3503035008907318, -0.8133895397186279, -0.8534290790557861,
                              0.5072759389877319, 0.11970724910497665, 0.6788038015365601, -0.4534919559955597,
                              -0.5775555372238159, 0.47006097435951233, -0.7716137766838074, -0.4285498261451721,
                              0.4786851108074188, -0.6765097975730896, -0.5596383213996887});
}

TEST(MeshIo, ObjFaceNormalsDropTheFileNormalsButNotTheirWelding) {
  TempFile file("shared.obj", kSharedObj);
  MeshData mesh = read_obj(file.path(), {.flip_tex_coords = true, .face_normals = true});
  EXPECT_TRUE(mesh.normals.empty());  // Mitsuba 3.9.1: vertex_normals []
  EXPECT_EQ(mesh.faces, kSharedFaces);
  expect_close(mesh.positions, kSharedPositions);
  place_mesh(mesh, mesh_test::kIdentity, true, "test");
  EXPECT_TRUE(mesh.normals.empty());
}

TEST(MeshIo, ObjKeepsTheFilesUvsWithoutFlip) {
  TempFile file("shared.obj", kSharedObj);
  MeshData mesh = read_obj(file.path(), {.flip_tex_coords = false});
  for (size_t i = 1; i < mesh.uvs.size(); i += 2) EXPECT_FLOAT_EQ(mesh.uvs[i], 1 - kSharedUvs[i]);
}

TEST(MeshIo, ObjResolvesRelativeIndicesAndLineEndings) {
  // Relative indices count back from the last value defined; CRLF, a lone CR and a last line
  // without a line break all end lines.
  TempFile file("relative.obj",
                "v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\rvn 0 0 5\nf -3//-1 -2//-1 -1//-1\nv 1 1 0\nf 2//1 4//1 3//1");
  MeshData mesh = read_obj(file.path());
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{0, 1, 2, 1, 3, 2}));
  expect_close(mesh.positions, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0});
  expect_close(mesh.normals, repeat({0, 0, 1}, 4));  // normalized
  EXPECT_TRUE(mesh.uvs.empty());
}

TEST(MeshIo, ObjCornersWithoutUvOrNormalGetDefinedValues) {
  // Mitsuba 3.9.1 leaves these undefined (uninitialized memory): here a missing uv is (0, 0)
  // and a missing normal is the vertex's computed normal.
  TempFile file("partial.obj",
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 1\nvt 0.5 0.5\nvn 1 0 0\nf 1/1/1 2/1/1 3/1/1\nf 2 4 3\n");
  MeshData mesh = read_obj(file.path(), {.flip_tex_coords = false});
  ASSERT_EQ(mesh.vertex_count(), 6u);
  expect_close(mesh.uvs, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0, 0, 0});
  std::vector<float> computed = vertex_normals(mesh);
  std::vector<double> expected = repeat({1, 0, 0}, 3);
  expected.insert(expected.end(), computed.begin() + 9, computed.end());
  expect_close(mesh.normals, expected);
  EXPECT_GT(std::abs(mesh.normals[11]), 0.1f);  // the computed ones face the second triangle's way
}

TEST(MeshIo, ObjWithoutFacesIsAnEmptyMesh) {
  TempFile file("points.obj", "# only vertices\nv 0 0 0\nv 1 0 0\nl 1 2\n");
  MeshData mesh = read_obj(file.path());
  EXPECT_EQ(mesh.vertex_count(), 0u);
  EXPECT_EQ(mesh.face_count(), 0u);
}

TEST(MeshIo, PlyBinaryLittleEndianMatchesMitsuba) {
  PlyWriter ply("binary_little_endian");
  ply.header("comment made by hand").header("element vertex 4");
  for (const char* name : {"x", "y", "z", "nx", "ny", "nz", "s", "t"})
    ply.header(std::string("property float ") + name);
  ply.header("element face 2").header("property list uchar int vertex_indices");
  ply.values("float", {0, 0, 0, 0, 0, 2, 0, 0}).values("float", {1, 0, 0, 0, 0.6, 0.8, 1, 0});
  ply.values("float", {1, 1, 0, 0, 0, 1, 1, 1}).values("float", {0, 1, 0, 1, 1, 1, 0, 1});
  ply.value("uchar", 3).values("int", {0, 1, 2}).value("uchar", 3).values("int", {0, 2, 3});
  TempFile file("le.ply", ply.str());
  MeshData mesh = read_ply(file.path());
  // Mitsuba 3.9.1 loading the same file, without and with to_world.
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3}));
  expect_close(mesh.positions, {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0});
  expect_close(mesh.normals, {0, 0, 1, 0, 0.6000000238418579, 0.800000011920929, 0, 0, 1, 0.5773502588272095,
                              0.5773502588272095, 0.5773502588272095});
  expect_close(mesh.uvs, {0, 0, 1, 0, 1, 1, 0, 1});
  // With to_world: normals off the scaling axes show the inverse transpose.
  place_mesh(mesh, mesh_test::kMitsubaToWorld, false, "test");
  expect_close(mesh.positions, {0.5, -1.0, 2.0, 2.232050895690918, 0.0, 2.0, 2.0405397415161133, 0.3317069709300995,
                                2.3213937282562256, 0.3084889054298401, -0.6682929992675781, 2.3213937282562256});
  expect_close(mesh.normals, {0.32139378786087036, -0.5566703677177429, 0.7660444378852844, -0.2194797545671463,
                              0.38015007972717285, 0.8985068798065186, 0.32139378786087036, -0.5566703677177429,
                              0.7660444378852844, -0.054816555231809616, 0.5564835071563721, 0.8290483355522156});
}

TEST(MeshIo, PlyBinaryBigEndianMatchesMitsuba) {
  PlyWriter ply("binary_big_endian");
  ply.header("element vertex 4");
  for (const char* name : {"double x", "double y", "double z", "uchar red", "uchar green", "uchar blue",
                           "double texture_u", "double texture_v"})
    ply.header(std::string("property ") + name);
  ply.header("element face 2").header("property list ushort uint vertex_index");
  ply.values("double", {0, 0, 0}).values("uchar", {255, 0, 0}).values("double", {0.25, 0.5});
  ply.values("double", {2, 0, 0.5}).values("uchar", {0, 255, 0}).values("double", {0.75, 0.5});
  ply.values("double", {0, 2, 0}).values("uchar", {0, 0, 255}).values("double", {0.5, 1});
  ply.values("double", {2, 2, 1}).values("uchar", {1, 2, 3}).values("double", {0.125, 0.875});
  ply.value("ushort", 3).values("uint", {0, 1, 2}).value("ushort", 3).values("uint", {1, 3, 2});
  TempFile file("be.ply", ply.str());
  MeshData mesh = read_ply(file.path());
  // Mitsuba 3.9.1 loading the same file, without and with flip_tex_coords.
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{0, 1, 2, 1, 3, 2}));
  expect_close(mesh.positions, {0, 0, 0, 2, 0, 0.5, 0, 2, 0, 2, 2, 1});
  expect_close(mesh.uvs, {0.25, 0.5, 0.75, 0.5, 0.5, 1, 0.125, 0.875});
  EXPECT_TRUE(mesh.normals.empty());
  place_mesh(mesh, mesh_test::kIdentity, false, "test");
  expect_close(mesh.normals, {-0.24253563582897186, 0.0, 0.9701425433158875, -0.35035744309425354, -0.11807136237621307,
                              0.9291442036628723, -0.3432031571865082, -0.11000388115644455, 0.9327972531318665,
                              -0.4364357888698578, -0.2182178944349289, 0.8728715777397156});
  expect_close(read_ply(file.path(), {.flip_tex_coords = true}).uvs, {0.25, 0.5, 0.75, 0.5, 0.5, 0, 0.125, 0.125});
}

TEST(MeshIo, PlyReadsEveryTypeInEveryFormat) {
  const char* types[] = {"char",  "uchar", "short",  "ushort", "int",    "uint",    "float",   "double", "int8",
                         "uint8", "int16", "uint16", "int32",  "uint32", "float32", "float64", "long",   "ulong"};
  const char* index_types[] = {"uchar", "ushort", "uint", "char", "short", "int", "ulong"};
  for (const char* format : {"ascii", "binary_little_endian", "binary_big_endian"})
    for (const char* type : types)
      for (const char* index_type : index_types) {
        PlyWriter ply(format);
        ply.header("element vertex 3");
        for (const char* name : {"x", "y", "z"}) ply.header(std::string("property ") + type + " " + name);
        ply.header("element face 1")
            .header(std::string("property list ") + index_type + " " + index_type + " vertex_indices");
        ply.values(type, {0, 0, 0}).end_record().values(type, {2, 0, 1}).end_record();
        ply.values(type, {0, 3, 0}).end_record().value(index_type, 3).values(index_type, {2, 0, 1}).end_record();
        TempFile file("types.ply", ply.str());
        MeshData mesh = read_ply(file.path());
        SCOPED_TRACE(std::string(format) + " " + type + " " + index_type);
        expect_close(mesh.positions, {0, 0, 0, 2, 0, 1, 0, 3, 0});
        EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{2, 0, 1}));
      }
}

TEST(MeshIo, PlyFansPolygonsAndSkipsWhatItDoesNotUse) {
  // Mitsuba 3.9.1 refuses faces that are not triangles; here they become fans as in its obj
  // reader. Unused properties (a list among them) and elements are read past.
  const char* text = R"(ply
format ascii 1.0
comment skipped
obj_info skipped too
element material 1
property list uchar float rgb
element vertex 6
property float x
property float y
property list uchar int neighbours
property float z
property float u
property float v
element face 2
property uchar flags
property list uchar uint vertex_indices
property float quality
element edge 0
property int vertex1
end_header
3 1 0.5 0.25
0 0 0 0 0 0
1 0 2 0 1 0 1 0
1 1 0 0 1 1
0 1 0 0 0 1
2 0 0 0 0.5 0
2 1 1 7 0 1 0.25
7 4 0 1 2 3 1.5
1 5 1 4 5 2 3 0.5
)";
  TempFile file("polygons.ply", text);
  MeshData mesh = read_ply(file.path());
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2, 1, 2, 3}));
  expect_close(mesh.positions, {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 0, 0, 2, 1, 0});
  expect_close(mesh.uvs, {0, 0, 1, 0, 1, 1, 0, 1, 0.5, 0, 1, 0.25});
  EXPECT_TRUE(mesh.normals.empty());
  EXPECT_TRUE(mesh.attributes.empty());  // `flags` and `quality` have no channel suffix (as in Mitsuba)
}

TEST(MeshIo, PlyAttributesAreNamedAsMitsubaNamesThem) {
  // Mitsuba 3.9.1 loading this file lists vertex_color (r g b, not normalized), vertex_dir,
  // vertex_albedo_color, vertex_w and face_quality, and skips temp_0 temp_1 (two channels)
  // and density (no suffix): the values below are what it printed. The quad's two triangles
  // each keep its quality.
  const char* text = R"(ply
format ascii 1.0
element vertex 4
property float x
property float y
property float z
property uchar red
property uchar green
property uchar blue
property float temp_0
property float temp_1
property float dir_x
property float dir_y
property float dir_z
property float albedo_r
property float albedo_g
property float albedo_b
property float w_1
property float density
element face 2
property list uchar uint vertex_indices
property float quality_0
end_header
0 0 0 255 0 10 1 2 0 0 1 0.1 0.2 0.3 5 9
1 0 0 0 255 20 1 2 0 1 0 0.4 0.5 0.6 6 9
1 1 0 0 0 30 1 2 1 0 0 0.7 0.8 0.9 7 9
0 1 0 1 2 40 1 2 1 1 1 1.0 1.1 1.2 8 9
3 0 1 2 0.5
4 0 1 2 3 0.25
)";
  TempFile file("attributes.ply", text);
  MeshData mesh = read_ply(file.path());
  std::vector<std::string> names;
  for (const auto& [name, attribute] : mesh.attributes) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"face_quality", "vertex_albedo_color", "vertex_color", "vertex_dir",
                                             "vertex_w"}));
  expect_close(mesh.attributes["vertex_color"].values, {255, 0, 10, 0, 255, 20, 0, 0, 30, 1, 2, 40});
  expect_close(mesh.attributes["vertex_dir"].values, {0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1});
  expect_close(mesh.attributes["vertex_albedo_color"].values,
               {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2});
  expect_close(mesh.attributes["vertex_w"].values, {5, 6, 7, 8});
  EXPECT_EQ(mesh.attributes["vertex_w"].channels, 1u);
  expect_close(mesh.attributes["face_quality"].values, {0.5, 0.25, 0.25});
  // write_ply writes them as <name>_0 ... and read_ply reads them back as they were.
  TempFile copy("attributes_copy.ply", "");
  write_ply(mesh, copy.path());
  MeshData back = read_ply(copy.path());
  ASSERT_EQ(back.attributes.size(), mesh.attributes.size());
  for (const auto& [name, attribute] : mesh.attributes) {
    EXPECT_EQ(back.attributes[name].channels, attribute.channels) << name;
    EXPECT_EQ(back.attributes[name].values, attribute.values) << name;
  }
}

TEST(MeshIo, PlyWithoutFacesOrWithFaceNormals) {
  PlyWriter ply("ascii");
  ply.header("element vertex 1").header("property double x").header("property double y").header("property double z");
  ply.header("property float nx").header("property float ny").header("property float nz");
  ply.values("double", {1, 2, 3}).values("float", {0, 0, -3}).end_record();
  TempFile file("point.ply", ply.str());
  MeshData mesh = read_ply(file.path());
  EXPECT_EQ(mesh.face_count(), 0u);
  expect_close(mesh.normals, {0, 0, -1});
  EXPECT_TRUE(read_ply(file.path(), {.face_normals = true}).normals.empty());
}

TEST(MeshIo, PlyAsciiWithCrlfLineEndings) {
  std::string text =
      "ply\r\nformat ascii 1.0\r\nelement vertex 3\r\nproperty float x\r\nproperty float y\r\n"
      "property float z\r\nelement face 1\r\nproperty list uchar int vertex_indices\r\nend_header\r\n"
      "0 0 0\r\n1 0 0\r\n0 1 0\r\n3 0 1 2\r\n";
  TempFile file("crlf.ply", text);
  MeshData mesh = read_ply(file.path());
  expect_close(mesh.positions, {0, 0, 0, 1, 0, 0, 0, 1, 0});
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{0, 1, 2}));
}
