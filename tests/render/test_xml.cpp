// The Mitsuba 3 XML loader: every element, `$name` defaults, includes, references, file
// names, transforms against the numbers Mitsuba 3.9.1 prints, and every error path (each
// naming file:line, the element and the plugin).
#include <kiln/errors.h>
#include <kiln/render/load.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "loader_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;
namespace fs = std::filesystem;

namespace {

/// `body` inside `<scene version="3.0.0">` (line 1), so the body starts on line 2.
std::string scene(const std::string& body) { return "<scene version=\"3.0.0\">\n" + body + "\n</scene>"; }

/// A fresh folder for one test's files, removed afterwards.
class TempFolder {
 public:
  explicit TempFolder(const std::string& name)
      : path_(fs::temp_directory_path() / ("kiln_test_xml_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempFolder() { fs::remove_all(path_); }
  /// Writes `content` to `relative` (creating folders) and returns its path.
  std::string write(const std::string& relative, const std::string& content) const {
    fs::path file = path_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << content;
    return file.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const NodeParameter& parameter(const PluginNode& node, const std::string& name) {
  for (const NodeParameter& p : node.parameters)
    if (p.name == name) return p;
  throw std::runtime_error("no parameter " + name);
}

const Properties::Value& value_of(const PluginNode& node, const std::string& name) {
  return std::get<Properties::Value>(parameter(node, name).value);
}

const PluginNode& child(const PluginNode& node, const std::string& name) {
  return *std::get<std::unique_ptr<PluginNode>>(parameter(node, name).value);
}

/// The composed `to_world` of a test_shape whose <transform> holds `steps`.
Matrix4d transform_of(const std::string& steps) {
  PluginNode root = parse_xml_string(
      scene("<shape type=\"test_shape\"><transform name=\"to_world\">" + steps + "</transform></shape>"));
  return std::get<Matrix4d>(value_of(child(root, "_arg_0"), "to_world"));
}

void expect_matrix_near(const Matrix4d& actual, const Matrix4d& expected) {
  for (int i = 0; i < 16; ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-12 * std::max(1.0, std::abs(expected[i]))) << "entry " << i;
}

}  // namespace

TEST(Xml, ObjectsBecomeNodesWithKindPluginIdNameAndSource) {
  PluginNode root = parse_xml_string(scene(R"(<shape type="test_shape" id="floor">
  <bsdf type="test_bsdf" name="bsdf" id="red">
    <rgb name="color" value="1 0 0"/>
  </bsdf>
</shape>
<emitter type="area"/>
<sensor type="perspective"><film type="hdrfilm"><rfilter type="box"/></film><sampler type="independent"/></sensor>
<integrator type="path"/><texture type="checkerboard"/>)"));
  EXPECT_EQ(root.kind, PluginKind::Scene);
  EXPECT_EQ(root.plugin, "scene");
  EXPECT_EQ(root.source, "<string>:1");
  ASSERT_EQ(root.parameters.size(), 5u);
  const PluginNode& shape = child(root, "_arg_0");
  EXPECT_EQ(shape.kind, PluginKind::Shape);
  EXPECT_EQ(shape.plugin, "test_shape");
  EXPECT_EQ(shape.id, "floor");
  EXPECT_EQ(shape.source, "<string>:2");
  EXPECT_EQ(root.parameters[0].source, "<string>:2");
  const PluginNode& bsdf = child(shape, "bsdf");
  EXPECT_EQ(bsdf.kind, PluginKind::Bsdf);
  EXPECT_EQ(bsdf.id, "red");
  EXPECT_EQ(bsdf.source, "<string>:3");
  EXPECT_EQ(std::get<Color3d>(value_of(bsdf, "color")), (Color3d{1, 0, 0}));
  EXPECT_EQ(parameter(bsdf, "color").source, "<string>:4");
  EXPECT_EQ(child(root, "_arg_1").kind, PluginKind::Emitter);
  const PluginNode& sensor = child(root, "_arg_2");
  EXPECT_EQ(sensor.kind, PluginKind::Sensor);
  EXPECT_EQ(child(sensor, "_arg_0").kind, PluginKind::Film);
  EXPECT_EQ(child(child(sensor, "_arg_0"), "_arg_0").kind, PluginKind::Filter);
  EXPECT_EQ(child(sensor, "_arg_1").kind, PluginKind::Sampler);
  EXPECT_EQ(child(root, "_arg_3").kind, PluginKind::Integrator);
  EXPECT_EQ(child(root, "_arg_4").kind, PluginKind::Texture);
}

TEST(Xml, ValueTagsBecomeTypedValues) {
  PluginNode root = parse_xml_string(scene(R"(<bsdf type="test_bsdf">
  <float name="f" value="-2.5e-1"/>
  <float name="f_int" value="+3"/>
  <integer name="i" value=" -42 "/>
  <boolean name="yes" value="True"/>
  <boolean name="no" value="FALSE"/>
  <string name="s" value="a b, c"/>
  <rgb name="c3" value="0.1, 0.2 0.3"/>
  <rgb name="c1" value="0.4"/>
  <spectrum name="gray" value="0.7"/>
  <point name="p" x="1" y="2" z="3"/>
  <vector name="v" value="4 5 6"/>
  <vector name="v1" value="-1"/>
</bsdf>)"));
  const PluginNode& bsdf = child(root, "_arg_0");
  EXPECT_EQ(std::get<double>(value_of(bsdf, "f")), -0.25);
  EXPECT_EQ(std::get<double>(value_of(bsdf, "f_int")), 3.0);
  EXPECT_EQ(std::get<int64_t>(value_of(bsdf, "i")), -42);
  EXPECT_EQ(std::get<bool>(value_of(bsdf, "yes")), true);
  EXPECT_EQ(std::get<bool>(value_of(bsdf, "no")), false);
  EXPECT_EQ(std::get<std::string>(value_of(bsdf, "s")), "a b, c");
  EXPECT_EQ(std::get<Color3d>(value_of(bsdf, "c3")), (Color3d{0.1, 0.2, 0.3}));
  EXPECT_EQ(std::get<Color3d>(value_of(bsdf, "c1")), (Color3d{0.4, 0.4, 0.4}));
  EXPECT_EQ(std::get<Color3d>(value_of(bsdf, "gray")), (Color3d{0.7, 0.7, 0.7}));
  EXPECT_EQ(std::get<Vector3d>(value_of(bsdf, "p")), (Vector3d{1, 2, 3}));
  EXPECT_EQ(std::get<Vector3d>(value_of(bsdf, "v")), (Vector3d{4, 5, 6}));
  EXPECT_EQ(std::get<Vector3d>(value_of(bsdf, "v1")), (Vector3d{-1, -1, -1}));
  EXPECT_EQ(parameter(bsdf, "i").source, "<string>:5");
}

// The expected matrices are what Mitsuba 3.9.1 (scalar_rgb) gives for the same <transform>:
// mi.parser.parse_string(mi.parser.ParserConfig('scalar_rgb'), xml).nodes[1].props['to_world'].
TEST(Xml, TransformsComposeLikeMitsuba) {
  expect_matrix_near(
      transform_of(R"(<translate x="1" y="2" z="3"/><rotate x="1" y="1" angle="30"/><scale value="2"/>)"),
      {2.0, 0.2679491924311226, 0.9999999999999999, 5.535898384862245, 0.2679491924311226, 2.0, -0.9999999999999999,
       1.2679491924311228, -0.9999999999999999, 0.9999999999999999, 1.7320508075688774, 6.196152422706632, 0, 0, 0, 1});
  expect_matrix_near(transform_of(R"(<translate value="-1 0.5 2"/><rotate value="0, 0, 1" angle="-45"/>
                                     <scale x="2" z="3"/><translate value="0.25"/>)"),
                     {1.4142135623730951, 1.414213562373095, 0.0, -0.4571067811865477, -0.7071067811865475,
                      0.7071067811865476, 0.0, 1.3106601717798212, 0.0, 0.0, 3.0, 6.25, 0, 0, 0, 1});
  expect_matrix_near(transform_of(R"(<rotate value="1" angle="120"/>
                                     <matrix value="1 2 3 4 0 1 0 -1 0 0 1 0.5 0 0 0 1"/><scale value="1, 2, 3"/>)"),
                     {7.63397459621556, 9.732050807568875, 6.633974596215561, 4.0, 4.732050807568877, 2.0,
                      1.267949192431122, -2.0, 1.9019237886466829, 7.098076211353315, 3.0, 1.5, 0, 0, 0, 1});
  expect_matrix_near(transform_of(R"(<matrix value="0 -1 0 1 0 0 0 0 2"/><translate y="1"/>)"),
                     {0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 1});
  expect_matrix_near(
      transform_of(R"(<lookat origin="1 2 3" target="0 0 0" up="0 0 1"/>)"),
      {0.8944271909999159, -0.3585685828003181, -0.2672612419124244, 1.0, -0.4472135954999579, -0.7171371656006362,
       -0.5345224838248488, 2.0, 0.0, 0.5976143046671968, -0.8017837257372732, 3.0, 0, 0, 0, 1});
  expect_matrix_near(
      transform_of(R"(<lookat origin="0, 1, 5" target="0.5 -1 0"/>)"),
      {0.017764628931282698, 0.9955588427671793, 0.09245003270420485, 0.0, 0.9289414842748693, 0.0177646289312827,
       -0.3698001308168194, 1.0, -0.36980013081681945, 0.09245003270420486, -0.9245003270420484, 5.0, 0, 0, 0, 1});
  expect_matrix_near(transform_of(R"(<scale x="-1"/><lookat origin="0 0 4" target="0 0 0" up="0 1 0"/>
                                     <rotate y="1" angle="10"/>)"),
                     {0.9848077530122081, 0.0, -0.17364817766693033, 0.6945927106677213, 0.0, 1.0, 0.0, 0.0,
                      -0.17364817766693033, 0.0, -0.9848077530122081, 3.9392310120488325, 0, 0, 0, 1});
  expect_matrix_near(transform_of(""), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
}

TEST(Xml, DefaultsAndLoadTimeValuesAreSubstituted) {
  std::string xml = scene(R"(<default name="alpha" value="0.3"/>
<default name="alpha_x" value="0.9"/>
<default name="kind" value="test_bsdf"/>
<default name="angle" value="$alpha"/>
<bsdf type="$kind">
  <float name="a" value="$alpha"/>
  <float name="longest_name_wins" value="$alpha_x"/>
  <string name="s" value="cost: \$5, $kind$alpha"/>
</bsdf>
<shape type="test_shape"><transform name="to_world"><rotate z="1" angle="$angle"/></transform></shape>)");
  PluginNode root = parse_xml_string(xml);
  const PluginNode& bsdf = child(root, "_arg_0");
  EXPECT_EQ(bsdf.plugin, "test_bsdf");
  EXPECT_EQ(std::get<double>(value_of(bsdf, "a")), 0.3);
  EXPECT_EQ(std::get<double>(value_of(bsdf, "longest_name_wins")), 0.9);
  EXPECT_EQ(std::get<std::string>(value_of(bsdf, "s")), "cost: $5, test_bsdf0.3");
  Matrix4d rotation = std::get<Matrix4d>(value_of(child(root, "_arg_1"), "to_world"));
  EXPECT_NEAR(rotation[4], std::sin(0.3 * M_PI / 180), 1e-15);

  // Values given when loading win over the file's <default>s.
  PluginNode overridden = parse_xml_string(xml, {{"alpha", "0.5"}, {"kind", "test_texture"}});
  EXPECT_EQ(child(overridden, "_arg_0").plugin, "test_texture");
  EXPECT_EQ(std::get<double>(value_of(child(overridden, "_arg_0"), "a")), 0.5);
}

TEST(Xml, SubstitutionErrorsNameTheAttribute) {
  expect_error<ValueError>(
      [] {
        parse_xml_string(scene(R"(<bsdf type="test_bsdf">
  <float name="a" value="$roughness"/>
</bsdf>)"));
      },
      {"<string>:3: <float name=\"a\"> in bsdf 'test_bsdf' (<string>:2)",
       "attribute value=\"$roughness\" uses $roughness, which is not defined"});
  // A <default> must come before its use.
  expect_error<ValueError>(
      [] { parse_xml_string(scene("<float name=\"a\" value=\"$x\"/>\n<default name=\"x\" value=\"1\"/>")); },
      {"<string>:2", "uses $x, which is not defined"});
  expect_error<ValueError>([] { parse_xml_string(scene("<string name=\"a\" value=\"5$\"/>")); },
                           {"<string>:2", "has a '$' that names no parameter"});
  expect_error<ValueError>([] { parse_xml_string(scene("<float name=\"a\" value=\"1\"/>"), {{"spp", "4"}}); },
                           {"the scene uses no $name for the load-time parameter(s) 'spp'"});
  expect_error<ValueError>([] { parse_xml_string(scene("<default name=\"\" value=\"1\"/>")); },
                           {"<string>:2: <default name=\"\">", "the name is empty"});
  expect_error<ValueError>([] { parse_xml_string(scene("<default name=\"a\"/>")); },
                           {"<string>:2: <default name=\"a\">", "the attribute 'value' is missing"});
}

TEST(Xml, ReferencesBecomeReferenceParameters) {
  PluginNode root = parse_xml_string(scene(R"(<bsdf type="test_bsdf" id="red"/>
<shape type="test_shape">
  <ref id="red"/>
  <ref name="bsdf" id="red"/>
</shape>)"));
  const PluginNode& shape = child(root, "_arg_1");
  const Reference& unnamed = std::get<Reference>(parameter(shape, "_arg_0").value);
  EXPECT_EQ(unnamed.id, "red");
  EXPECT_EQ(unnamed.source, "<string>:4");
  EXPECT_EQ(std::get<Reference>(parameter(shape, "bsdf").value).source, "<string>:5");
  expect_error<ValueError>(
      [] { parse_xml_string(scene("<shape type=\"test_shape\"><ref name=\"bsdf\"/></shape>")); },
      {"<string>:2: <ref name=\"bsdf\"> in shape 'test_shape' (<string>:2)", "the attribute 'id' is missing"});
}

TEST(Xml, AScenesObjectsAreInstantiatedWithSharedReferences) {
  int before = TestBsdf::constructed;
  std::shared_ptr<Object> root = instantiate(parse_xml_string(R"(<scene version="3.0.0" type="test_scene">
  <shape type="test_shape"><ref name="bsdf" id="gold"/></shape>
  <bsdf type="test_bsdf" id="gold"><float name="alpha" value="0.2"/><rgb name="color" value="1 0.8 0.3"/></bsdf>
  <shape type="test_shape"><ref name="bsdf" id="gold"/></shape>
</scene>)"));
  EXPECT_EQ(TestBsdf::constructed, before + 1);
  auto& children = dynamic_cast<TestScene&>(*root).children;
  ASSERT_EQ(children.size(), 3u);
  auto& gold = dynamic_cast<TestBsdf&>(*children[1].second);
  EXPECT_EQ(gold.alpha, 0.2);
  EXPECT_EQ(gold.color, (Color3d{1, 0.8, 0.3}));
  EXPECT_EQ(gold.source(), "<string>:3");
  EXPECT_EQ(dynamic_cast<TestShape&>(*children[0].second).bsdf.get(), &gold);
  EXPECT_EQ(dynamic_cast<TestShape&>(*children[2].second).bsdf.get(), &gold);
}

TEST(Xml, InstantiationErrorsCarryTheXmlLines) {
  PluginNode root = parse_xml_string(scene(R"(<bsdf type="test_bsdf">
  <float name="alpah" value="0.2"/>
</bsdf>)"));
  expect_error<ValueError>([&] { instantiate(child(root, "_arg_0")); },
                           {"bsdf 'test_bsdf' (<string>:2) does not take these parameters:",
                            "'alpah' (<string>:3): float", "test_bsdf accepts alpha, color"});
  PluginNode twice = parse_xml_string(scene(R"(<bsdf type="test_bsdf">
  <float name="alpha" value="0.2"/>
  <float name="alpha" value="0.3"/>
</bsdf>)"));
  expect_error<ValueError>([&] { instantiate(child(twice, "_arg_0")); },
                           {"'alpha' (<string>:4) is given twice (first (at <string>:3))"});
  PluginNode unknown = parse_xml_string(scene("<bsdf type=\"test_bsfd\"/>"));
  expect_error<ValueError>([&] { instantiate(child(unknown, "_arg_0")); },
                           {"unknown bsdf plugin 'test_bsfd' (<string>:2)", "test_bsdf"});
}

TEST(Xml, IncludesJoinTheIncludingObject) {
  TempFolder folder("include");
  folder.write("parts/materials.xml", R"(<scene version="3.0.0">
  <bsdf type="test_bsdf" id="red"/>
  <texture type="test_texture"/>
  <default name="from_include" value="0.5"/>
</scene>)");
  folder.write("parts/shape.xml", R"(<shape version="3.0" type="test_shape">
  <string name="filename" value="mesh.obj"/>
</shape>)");
  folder.write("parts/mesh.obj", "");
  std::string main = folder.write("main.xml", R"(<scene version="3.0.0">
  <sensor type="perspective"/>
  <include filename="parts/materials.xml"/>
  <include filename="parts/$part.xml" name="floor"/>
  <float name="after" value="$from_include"/>
  <integrator type="path"/>
</scene>)");
  PluginNode root = parse_xml_file(main, {{"part", "shape"}});
  ASSERT_EQ(root.parameters.size(), 6u);
  EXPECT_EQ(root.parameters[0].name, "_arg_0");
  EXPECT_EQ(root.parameters[1].name, "_arg_1");
  const PluginNode& red = child(root, "_arg_1");
  EXPECT_EQ(red.id, "red");
  EXPECT_EQ(red.source, (folder.path() / "parts/materials.xml").string() + ":2");
  EXPECT_EQ(child(root, "_arg_2").kind, PluginKind::Texture);
  const PluginNode& floor = child(root, "floor");
  EXPECT_EQ(floor.plugin, "test_shape");
  // A file name is relative to the XML file that holds it.
  EXPECT_EQ(std::get<std::string>(value_of(floor, "filename")), (folder.path() / "parts/mesh.obj").string());
  EXPECT_EQ(std::get<double>(value_of(root, "after")), 0.5);
  EXPECT_EQ(root.parameters[5].name, "_arg_3");
  EXPECT_EQ(root.source, main + ":1");
}

TEST(Xml, IncludeErrors) {
  TempFolder folder("include_errors");
  std::string main = folder.write("main.xml", scene("<include filename=\"missing.xml\"/>"));
  expect_error<FileError>(
      [&] { parse_xml_file(main); },
      {main + ":2: <include>", "the included file '" + (folder.path() / "missing.xml").string() + "' does not exist"});
  std::string a = folder.write("a.xml", scene("<include filename=\"b.xml\"/>"));
  folder.write("b.xml", scene("<bsdf type=\"test_bsdf\"/>\n<include filename=\"a.xml\"/>"));
  expect_error<ValueError>([&] { parse_xml_file(a); },
                           {"b.xml:3: <include>", "the includes form a cycle:", "a.xml -> "});
  std::string self = folder.write("self.xml", scene("<include filename=\"self.xml\"/>"));
  expect_error<ValueError>([&] { parse_xml_file(self); }, {"self.xml:2", "the includes form a cycle"});
  folder.write("noversion.xml", "<scene>\n</scene>");
  std::string includer = folder.write("includer.xml", scene("<include filename=\"noversion.xml\"/>"));
  expect_error<ValueError>([&] { parse_xml_file(includer); },
                           {"noversion.xml:1: <scene>", "the attribute 'version' is missing"});
  folder.write("plain.xml", scene("<bsdf type=\"test_bsdf\"/>"));
  std::string named = folder.write("named.xml", scene("<include filename=\"plain.xml\" name=\"x\"/>"));
  expect_error<ValueError>([&] { parse_xml_file(named); },
                           {"named.xml:2", "applies only to an included file whose root is an object"});
}

TEST(Xml, FileNamesResolveAgainstTheFileThenPathFolders) {
  TempFolder folder("filenames");
  folder.write("meshes/bunny.obj", "");
  folder.write("textures/wood.png", "");
  std::string main = folder.write("scene.xml", scene(R"(<path value="textures"/>
<shape type="test_shape"><string name="filename" value="meshes/bunny.obj"/></shape>
<shape type="test_shape"><string name="filename" value="wood.png"/></shape>
<shape type="test_shape"><string name="filename" value="missing.obj"/></shape>
<shape type="test_shape"><string name="filename" value="/abs/olute.obj"/></shape>
<shape type="test_shape"><string name="other" value="meshes/bunny.obj"/></shape>)"));
  PluginNode root = parse_xml_file(main);
  auto filename = [&](const std::string& shape, const std::string& name = "filename") {
    return std::get<std::string>(value_of(child(root, shape), name));
  };
  EXPECT_EQ(filename("_arg_0"), (folder.path() / "meshes/bunny.obj").string());
  EXPECT_EQ(filename("_arg_1"), (folder.path() / "textures/wood.png").string());
  EXPECT_EQ(filename("_arg_2"), (folder.path() / "missing.obj").string());
  EXPECT_EQ(filename("_arg_3"), "/abs/olute.obj");
  EXPECT_EQ(filename("_arg_4", "other"), "meshes/bunny.obj");

  std::string nested = folder.write("nested.xml", scene("<bsdf type=\"test_bsdf\"><path value=\"textures\"/></bsdf>"));
  expect_error<ValueError>([&] { parse_xml_file(nested); },
                           {"nested.xml:2: <path> in bsdf 'test_bsdf'", "can only be a child of the root element"});
  std::string missing = folder.write("missing.xml", scene("<path value=\"nowhere\"/>"));
  expect_error<FileError>([&] { parse_xml_file(missing); }, {"missing.xml:2: <path>", "nowhere' does not exist"});
}

TEST(Xml, MalformedXmlNamesTheLine) {
  TempFolder folder("malformed");
  std::string broken = folder.write("broken.xml", "<scene version=\"3.0.0\">\n<bsdf type=\"test_bsdf\">\n</scene>");
  expect_error<FileError>([&] { parse_xml_file(broken); }, {broken + ":3: malformed XML"});
  expect_error<ValueError>([] { parse_xml_string("<scene version=\"3.0.0\">\n\n<float name=\"a\" value=\"1\">\n"); },
                           {"<string>:", "malformed XML"});
  expect_error<FileError>([&] { parse_xml_file((folder.path() / "absent.xml").string()); },
                          {"cannot read the scene file", "absent.xml' (no such file)"});
  expect_error<FileError>([&] { parse_xml_file(folder.path().string()); }, {"cannot read the scene file"});
}

TEST(Xml, TheRootNeedsAVersionOfMitsuba3sFormat) {
  expect_error<ValueError>([] { parse_xml_string("<scene>\n</scene>"); },
                           {"<string>:1: <scene>", "the attribute 'version' is missing"});
  expect_error<ValueError>([] { parse_xml_string("<scene version=\"0.6.0\"/>"); },
                           {"version 0.6.0 is not supported", "versions 2.x and 3.x"});
  expect_error<ValueError>([] { parse_xml_string("<scene version=\"three\"/>"); },
                           {"version=\"three\" is not a version number"});
  expect_error<ValueError>(
      [] { parse_xml_string("<float version=\"3.0.0\" name=\"a\" value=\"1\"/>"); },
      {"<string>:1: <float name=\"a\">", "the root element must be <scene> or another object tag"});
  expect_error<ValueError>([] { parse_xml_string("<bsdf version=\"3.0.0\"/>"); }, {"the attribute 'type' is missing"});
  expect_error<ValueError>([] { parse_xml_string("<scene version=\"3.0.0\"/>\n<scene version=\"3.0.0\"/>"); },
                           {"<string>:2: <scene>", "a second root element"});
  expect_error<ValueError>([] { parse_xml_string("<!-- nothing -->\n"); }, {"<string>: no root element"});
  expect_error<ValueError>([] { parse_xml_string("<scene version=\"3.0.0\"/>\ntrailing"); },
                           {"<string>:1: <scene>", "unexpected text 'trailing'"});
  PluginNode bsdf = parse_xml_string("<?xml version=\"1.0\"?>\n<bsdf version=\"2.1\" type=\"test_bsdf\" id=\"b\"/>");
  EXPECT_EQ(bsdf.kind, PluginKind::Bsdf);
  EXPECT_EQ(bsdf.id, "b");
}

TEST(Xml, UnsupportedAndMisplacedElementsAreErrors) {
  auto expect_scene_error = [](const std::string& body, std::initializer_list<std::string> needles) {
    expect_error<ValueError>([&] { parse_xml_string(scene(body)); }, needles);
  };
  expect_scene_error("<medium type=\"homogeneous\"/>",
                     {"<string>:2: <medium>", "participating media are out of scope"});
  expect_scene_error("<phase type=\"hg\"/>", {"<phase>", "participating media are out of scope"});
  // A <volume> is an object (what a `volume` texture reads); an unknown one fails when built.
  PluginNode parsed =
      parse_xml_string(scene("<texture type=\"volume\" id=\"t\"><volume type=\"grid\" name=\"volume\"/></texture>"));
  expect_error<ValueError>([&] { instantiate(parsed); }, {"unknown volume plugin 'grid'", "gridvolume"});
  expect_scene_error("<alias id=\"a\" as=\"b\"/>", {"<alias>", "is not supported"});
  expect_scene_error("<blob name=\"x\"/>", {"<string>:2: <blob name=\"x\">", "is not an element of Mitsuba 3's scene"});
  expect_scene_error("<translate x=\"1\"/>", {"<translate>", "can only appear inside a <transform>"});
  expect_scene_error("<scene version=\"3.0.0\"/>", {"<scene> can only be the root element"});
  expect_scene_error("<bsdf type=\"test_bsdf\">loose text</bsdf>",
                     {"<string>:2: <bsdf>", "unexpected text 'loose text'"});
  expect_scene_error("<float name=\"a\" value=\"1\"><float name=\"b\" value=\"2\"/></float>",
                     {"<float name=\"a\">", "unexpected <float> inside a value element"});
  expect_scene_error("<bsdf/>", {"<bsdf>", "the attribute 'type' is missing"});
  expect_scene_error("<bsdf type=\"test_bsdf\" colour=\"red\"/>",
                     {"<bsdf>", "unexpected attribute 'colour' (accepted: type, id, name)"});
  expect_scene_error("<bsdf type=\"test_bsdf\" name=\"\"/>", {"the name is empty"});
  expect_scene_error("<float value=\"1\"/>", {"<float>", "the attribute 'name' is missing"});
}

TEST(Xml, BadValuesNameTheFileLineElementAndPlugin) {
  auto expect_value_error = [](const std::string& element, std::initializer_list<std::string> needles) {
    expect_error<ValueError>(
        [&] { parse_xml_string(scene("<bsdf type=\"test_bsdf\" id=\"b\">\n" + element + "\n</bsdf>")); }, needles);
  };
  std::string in_bsdf = "in bsdf 'test_bsdf' id 'b' (<string>:2)";
  expect_value_error("<float name=\"alpha\" value=\"abc\"/>",
                     {"<string>:3: <float name=\"alpha\"> " + in_bsdf, "'abc' in value=\"abc\" is not a number"});
  expect_value_error("<float name=\"alpha\" value=\"1 2\"/>", {"has 2 numbers, expected 1"});
  expect_value_error("<integer name=\"n\" value=\"1.5\"/>", {"<integer name=\"n\">", "is not an integer"});
  expect_value_error("<integer name=\"n\" value=\"99999999999999999999\"/>", {"is not an integer (64-bit)"});
  expect_value_error("<boolean name=\"b\" value=\"yes\"/>", {"value=\"yes\" is not true or false"});
  expect_value_error("<rgb name=\"color\" value=\"1 0\"/>",
                     {"<rgb name=\"color\">", "an 'rgb' value has 3 numbers (or 1 for gray), not 2"});
  expect_value_error(
      "<spectrum name=\"eta\" value=\"400:1.5, 700:1.4\"/>",
      {"<spectrum name=\"eta\">", "is spectral data, which kiln.render does not render (it is RGB only"});
  expect_value_error("<spectrum name=\"eta\" value=\"0.5 0.6\"/>", {"value=\"0.5 0.6\" is spectral data"});
  expect_value_error("<spectrum name=\"eta\" filename=\"gold.spd\"/>", {"a file of wavelengths", "is spectral data"});
  expect_value_error("<spectrum type=\"blackbody\" name=\"radiance\"/>",
                     {"<spectrum name=\"radiance\">", "a 'blackbody' spectrum is spectral data"});
  // A spectrum plugin's parameters are checked as in load_dict (they were ignored before).
  expect_value_error("<spectrum type=\"d65\" name=\"radiance\"><float name=\"temprature\" value=\"3\"/></spectrum>",
                     {"<spectrum name=\"radiance\">", "a 'd65' spectrum takes only 'scale', not 'temprature'"});
  expect_value_error("<spectrum type=\"d65\" name=\"radiance\"><rgb name=\"scale\" value=\"3\"/></spectrum>",
                     {"<rgb name=\"scale\">", "a spectrum's parameters are <float> elements"});
  // Spectral data is refused before its parameters are read (they are not numbers).
  expect_value_error("<spectrum type=\"regular\" name=\"radiance\"><string name=\"values\" value=\"1, 2\"/></spectrum>",
                     {"<spectrum name=\"radiance\">", "a 'regular' spectrum is spectral data"});
  expect_value_error("<point name=\"p\" x=\"1\" y=\"2\"/>",
                     {"<point name=\"p\">", "needs value=\"...\" or all of x, y, z"});
  expect_value_error("<vector name=\"v\" value=\"1\" x=\"2\"/>", {"give either value or x, y, z"});
  expect_value_error("<vector name=\"v\" value=\"1 2\"/>", {"has 2 numbers, expected 1 or 3"});
  expect_value_error("<string name=\"s\"/>", {"the attribute 'value' is missing"});
}

TEST(Xml, BadTransformStepsAreErrors) {
  auto expect_step_error = [](const std::string& step, std::initializer_list<std::string> needles) {
    expect_error<ValueError>([&] { transform_of("\n" + step); }, needles);
  };
  std::string in_shape = "in <transform name=\"to_world\"> in shape 'test_shape' (<string>:2)";
  expect_step_error("<rotate x=\"0\" angle=\"30\"/>",
                    {"<string>:3: <rotate> " + in_shape, "the rotation axis is zero"});
  expect_step_error("<rotate x=\"1\"/>", {"<rotate>", "the attribute 'angle' is missing"});
  expect_step_error("<rotate x=\"1\" angle=\"a lot\"/>", {"'a' in angle=\"a lot\" is not a number"});
  expect_step_error("<translate x=\"1\" w=\"2\"/>", {"unexpected attribute 'w' (accepted: value, x, y, z)"});
  expect_step_error("<scale value=\"1 2\"/>", {"<scale>", "has 2 numbers, expected 1 or 3"});
  expect_step_error("<matrix value=\"1 0 0 1\"/>", {"<matrix>", "has 4 numbers, expected 16 or 9"});
  expect_step_error("<lookat origin=\"1 1 1\" target=\"1 1 1\"/>",
                    {"<lookat>", "origin and target coincide, or up is parallel to the viewing direction"});
  expect_step_error("<lookat origin=\"0 0 0\" target=\"0 0 1\" up=\"0 0 2\"/>", {"up is parallel"});
  expect_step_error("<lookat origin=\"0 0\" target=\"0 0 1\"/>", {"origin=\"0 0\" has 2 numbers, expected 3"});
  expect_step_error("<float name=\"x\" value=\"1\"/>",
                    {"<float name=\"x\"> in <transform", "is not a transform step (accepted: translate, rotate"});
  expect_step_error("<translate x=\"1\"><scale value=\"2\"/></translate>", {"unexpected <scale> inside a value"});
}
