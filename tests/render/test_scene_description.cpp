// The plugin registry and instantiate(): plugins built bottom-up from trees made in C++
// (as the dict binding will make them), ids shared by references, and every error path.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene_description.h>

#include "loader_test_support.h"

using namespace kiln;
using namespace kiln::render;
using namespace kiln::render::test;

namespace {

/// Registered as a BSDF but makes a texture: a plugin bug create_object() must catch.
KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "test_makes_texture",
                     [](const Properties& props) { return std::make_shared<TestTexture>(props); });
KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "test_makes_nothing", [](const Properties&) { return nullptr; });

PluginNode node(PluginKind kind, const std::string& plugin, const std::string& id, const std::string& source) {
  PluginNode result;
  result.kind = kind;
  result.plugin = plugin;
  result.id = id;
  result.source = source;
  return result;
}

/// load_dict: {'type': 'test_scene', 'red': {'type': 'test_bsdf', 'color': [1, 0, 0]},
///             'shape1': {'type': 'test_shape', 'bsdf': {'type': 'ref', 'id': 'red'}},
///             'shape2': {'type': 'test_shape', 'bsdf': {'type': 'ref', 'id': 'red'}}}
PluginNode scene_with_shared_bsdf() {
  PluginNode scene = node(PluginKind::Scene, "test_scene", "", "load_dict");
  PluginNode red = node(PluginKind::Bsdf, "test_bsdf", "red", "load_dict: ['red']");
  red.add_value("color", Color3d{1, 0, 0}, "load_dict: ['red']['color']");
  scene.add_child("red", std::move(red));
  for (std::string shape : {"shape1", "shape2"}) {
    PluginNode& added =
        scene.add_child(shape, node(PluginKind::Shape, "test_shape", "", "load_dict: ['" + shape + "']"));
    added.add_reference("bsdf", Reference{"red", "load_dict: ['" + shape + "']['bsdf']"});
  }
  return scene;
}

}  // namespace

TEST(PluginRegistry, ListsPluginsByKindAndKnowsEachNamesKind) {
  std::vector<std::string> bsdfs = plugin_names(PluginKind::Bsdf);
  EXPECT_NE(std::find(bsdfs.begin(), bsdfs.end(), "test_bsdf"), bsdfs.end());
  EXPECT_TRUE(std::is_sorted(bsdfs.begin(), bsdfs.end()));
  EXPECT_EQ(std::find(bsdfs.begin(), bsdfs.end(), "test_texture"), bsdfs.end());
  EXPECT_EQ(plugin_kind("test_texture"), PluginKind::Texture);
  EXPECT_EQ(plugin_kind("no_such_plugin"), std::nullopt);
}

TEST(PluginRegistry, ANameIsRegisteredOnce) {
  expect_error<InternalError>(
      [] { register_plugin(PluginKind::Texture, "test_bsdf", [](const Properties&) { return nullptr; }); },
      {"two plugins are registered as 'test_bsdf' (bsdf and texture)"});
  EXPECT_EQ(plugin_kind("test_bsdf"), PluginKind::Bsdf);
}

TEST(PluginRegistry, CreateObjectBuildsChecksAndSetsTheOrigin) {
  Properties props(PluginKind::Bsdf, "test_bsdf", "gold", "scene.xml:4");
  props.set("alpha", int64_t(2), "scene.xml:5");
  std::shared_ptr<Object> object = create_object(props);
  auto* bsdf = dynamic_cast<TestBsdf*>(object.get());
  ASSERT_NE(bsdf, nullptr);
  EXPECT_EQ(bsdf->alpha, 2.0);
  EXPECT_EQ(bsdf->color, (Color3d{0.5, 0.5, 0.5}));
  EXPECT_EQ(object->plugin(), "test_bsdf");
  EXPECT_EQ(object->id(), "gold");
  EXPECT_EQ(object->source(), "scene.xml:4");
}

TEST(PluginRegistry, AnUnknownPluginNamesTheKindTheSourceAndTheKnownPlugins) {
  expect_error<ValueError>(
      [] { create_object(Properties(PluginKind::Bsdf, "test_bsfd", "", "scene.xml:9")); },
      {"unknown bsdf plugin 'test_bsfd' (scene.xml:9)", "the bsdf plugins are:", "test_bsdf", "test_makes_texture"});
  expect_error<ValueError>([] { create_object(Properties(PluginKind::Shape, "test_bsdf", "", "scene.xml:2")); },
                           {"unknown shape plugin 'test_bsdf'", "'test_bsdf' is registered as bsdf, not shape",
                            "the shape plugins are:", "test_shape"});
  expect_error<ValueError>([] { create_object(Properties(PluginKind::Film, "ldrfilm", "", "scene.xml:2")); },
                           {"unknown film plugin 'ldrfilm'", "the film plugins are:", "hdrfilm"});
}

TEST(PluginRegistry, AnUnreadParameterIsAnError) {
  Properties props(PluginKind::Bsdf, "test_bsdf", "", "scene.xml:4");
  props.set("alpah", 0.3, "scene.xml:5");
  expect_error<ValueError>([&] { create_object(props); },
                           {"bsdf 'test_bsdf' (scene.xml:4) does not take these parameters:",
                            "'alpah' (scene.xml:5): float", "test_bsdf accepts alpha, color"});
}

TEST(PluginRegistry, APluginThatMakesTheWrongKindIsAnInternalError) {
  expect_error<InternalError>([] { create_object(Properties(PluginKind::Bsdf, "test_makes_texture")); },
                              {"the bsdf plugin 'test_makes_texture' made an object of kind texture"});
  expect_error<InternalError>([] { create_object(Properties(PluginKind::Bsdf, "test_makes_nothing")); },
                              {"the bsdf plugin 'test_makes_nothing' made no object"});
}

TEST(Instantiate, BuildsChildrenFirstAndReturnsTheRoot) {
  PluginNode scene = node(PluginKind::Scene, "test_scene", "", "scene.xml:1");
  PluginNode& shape = scene.add_child("_arg_0", node(PluginKind::Shape, "test_shape", "", "scene.xml:2"));
  shape.add_value("to_world", Matrix4d{1, 0, 0, 5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, "scene.xml:3");
  PluginNode& bsdf = shape.add_child("bsdf", node(PluginKind::Bsdf, "test_bsdf", "", "scene.xml:4"));
  bsdf.add_value("alpha", 0.7, "scene.xml:5");
  scene.add_child("_arg_1", node(PluginKind::Texture, "test_texture", "", "scene.xml:7"));

  std::shared_ptr<Object> root = instantiate(scene);
  auto* built = dynamic_cast<TestScene*>(root.get());
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(root->source(), "scene.xml:1");
  ASSERT_EQ(built->children.size(), 2u);
  EXPECT_EQ(built->children[0].first, "_arg_0");
  auto* built_shape = dynamic_cast<TestShape*>(built->children[0].second.get());
  ASSERT_NE(built_shape, nullptr);
  EXPECT_EQ(built_shape->to_world[3], 5.0);
  auto* built_bsdf = dynamic_cast<TestBsdf*>(built_shape->bsdf.get());
  ASSERT_NE(built_bsdf, nullptr);
  EXPECT_EQ(built_bsdf->alpha, 0.7);
  EXPECT_EQ(built_bsdf->source(), "scene.xml:4");
  EXPECT_NE(dynamic_cast<TestTexture*>(built->children[1].second.get()), nullptr);
}

TEST(Instantiate, ReferencesShareOneObjectPerId) {
  int before = TestBsdf::constructed;
  std::shared_ptr<Object> root = instantiate(scene_with_shared_bsdf());
  EXPECT_EQ(TestBsdf::constructed, before + 1);
  auto& children = dynamic_cast<TestScene&>(*root).children;
  ASSERT_EQ(children.size(), 3u);
  std::shared_ptr<Object> red = children[0].second;
  EXPECT_EQ(red->id(), "red");
  EXPECT_EQ(dynamic_cast<TestShape&>(*children[1].second).bsdf, red);
  EXPECT_EQ(dynamic_cast<TestShape&>(*children[2].second).bsdf, red);
  EXPECT_EQ(dynamic_cast<TestBsdf&>(*red).color, (Color3d{1, 0, 0}));
}

TEST(Instantiate, AReferenceMayComeBeforeTheDeclaration) {
  PluginNode scene = node(PluginKind::Scene, "test_scene", "", "scene.xml:1");
  PluginNode& shape = scene.add_child("_arg_0", node(PluginKind::Shape, "test_shape", "", "scene.xml:2"));
  shape.add_reference("bsdf", Reference{"later", "scene.xml:3"});
  scene.add_child("_arg_1", node(PluginKind::Bsdf, "test_bsdf", "later", "scene.xml:5"));
  int before = TestBsdf::constructed;
  std::shared_ptr<Object> root = instantiate(scene);
  auto& children = dynamic_cast<TestScene&>(*root).children;
  EXPECT_EQ(TestBsdf::constructed, before + 1);
  EXPECT_EQ(dynamic_cast<TestShape&>(*children[0].second).bsdf, children[1].second);
}

TEST(Instantiate, AnAlreadyBuiltObjectPassesThrough) {
  auto bsdf = std::make_shared<TestBsdf>(Properties(PluginKind::Bsdf, "test_bsdf"));
  PluginNode shape = node(PluginKind::Shape, "test_shape", "", "load_dict");
  shape.add_value("bsdf", std::shared_ptr<Object>(bsdf), "load_dict: ['bsdf']");
  EXPECT_EQ(dynamic_cast<TestShape&>(*instantiate(shape)).bsdf, bsdf);
}

TEST(Instantiate, AnUnknownIdNamesTheReferenceAndThePluginHoldingIt) {
  PluginNode scene = scene_with_shared_bsdf();
  std::get<Reference>(std::get<std::unique_ptr<PluginNode>>(scene.parameters[2].value)->parameters[0].value).id =
      "blue";
  expect_error<ValueError>(
      [&] { instantiate(scene); },
      {"shape 'test_shape' (load_dict: ['shape2'])", "parameter 'bsdf' (load_dict: ['shape2']['bsdf'])",
       "refers to the id 'blue', which nothing declares", "(declared ids: red)"});
}

TEST(Instantiate, ADuplicateIdNamesBothDeclarations) {
  PluginNode scene = scene_with_shared_bsdf();
  scene.add_child("_arg_0", node(PluginKind::Texture, "test_texture", "red", "scene.xml:30"));
  expect_error<ValueError>([&] { instantiate(scene); },
                           {"the id 'red' is declared twice: by bsdf 'test_bsdf' id 'red' (load_dict: ['red'])",
                            "and by texture 'test_texture' id 'red' (scene.xml:30)"});
}

TEST(Instantiate, AReferenceToTheWrongKindIsAnError) {
  PluginNode scene = node(PluginKind::Scene, "test_scene", "", "scene.xml:1");
  scene.add_child("_arg_0", node(PluginKind::Texture, "test_texture", "checks", "scene.xml:2"));
  PluginNode& shape = scene.add_child("_arg_1", node(PluginKind::Shape, "test_shape", "", "scene.xml:3"));
  shape.add_reference("bsdf", Reference{"checks", "scene.xml:4"});
  expect_error<TypeError>([&] { instantiate(scene); },
                          {"shape 'test_shape' (scene.xml:3), parameter 'bsdf' (scene.xml:4)", "expected bsdf",
                           "found texture 'test_texture' id 'checks' (scene.xml:2)"});
  // Unnamed, nobody asks for it: the unread check names it.
  PluginNode lone = node(PluginKind::Shape, "test_shape", "", "scene.xml:3");
  lone.add_child("_arg_0", node(PluginKind::Texture, "test_texture", "", "scene.xml:4"));
  expect_error<ValueError>([&] { instantiate(lone); },
                           {"does not take these parameters:", "'_arg_0' (scene.xml:4): texture 'test_texture'"});
}

TEST(Instantiate, ACycleOfReferencesIsAnError) {
  PluginNode scene = node(PluginKind::Scene, "test_scene", "", "scene.xml:1");
  PluginNode& outer = scene.add_child("_arg_0", node(PluginKind::Shape, "test_shape", "a", "scene.xml:2"));
  PluginNode& inner = outer.add_child("_arg_0", node(PluginKind::Shape, "test_shape", "b", "scene.xml:3"));
  inner.add_reference("_arg_0", Reference{"a", "scene.xml:4"});
  expect_error<ValueError>([&] { instantiate(scene); },
                           {"a cycle of references: shape 'test_shape' id 'a' (scene.xml:2) -> shape 'test_shape' id "
                            "'b' (scene.xml:3) -> shape 'test_shape' id 'a' (scene.xml:2)"});
}

TEST(Instantiate, ParameterErrorsKeepTheirSources) {
  PluginNode bsdf = node(PluginKind::Bsdf, "test_bsdf", "", "load_dict: ['bsdf']");
  bsdf.add_value("alpha", std::string("rough"), "load_dict: ['bsdf']['alpha']");
  expect_error<TypeError>([&] { instantiate(bsdf); },
                          {"bsdf 'test_bsdf' (load_dict: ['bsdf']), parameter 'alpha' (load_dict: ['bsdf']['alpha'])",
                           "expected float, found string"});
  bsdf.parameters[0].value = Properties::Value(0.5);
  bsdf.add_value("alpha", 0.6, "load_dict: ['bsdf']['alpha'] again");
  expect_error<ValueError>([&] { instantiate(bsdf); }, {"'alpha' (load_dict: ['bsdf']['alpha'] again) is given twice"});
}
