// Properties: typed getters, fallbacks, read tracking, nested objects, and every error a
// plugin's parameters can raise (each naming the plugin, the parameter and its source).
#include <kiln/errors.h>
#include <kiln/render/properties.h>

#include "loader_test_support.h"

using namespace kiln;
using namespace kiln::render;
using kiln::render::test::expect_error;

namespace {

/// A bsdf 'rough' declared at scene.xml:3 with one parameter of every value type.
Properties every_type() {
  Properties props(PluginKind::Bsdf, "rough", "", "scene.xml:3");
  props.set("flag", true, "scene.xml:4");
  props.set("count", int64_t(7), "scene.xml:5");
  props.set("alpha", 0.25, "scene.xml:6");
  props.set("name", std::string("gold"), "scene.xml:7");
  props.set("tint", Color3d{0.1, 0.2, 0.3}, "scene.xml:8");
  props.set("up", Vector3d{0, 1, 0}, "scene.xml:9");
  props.set("to_world", Matrix4d{2, 0, 0, 1, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}, "scene.xml:10");
  return props;
}

struct Leaf : Object {
  explicit Leaf(PluginKind kind) : kind_(kind) {}
  PluginKind kind() const override { return kind_; }
  PluginKind kind_;
};

}  // namespace

TEST(Properties, GettersReturnTheValuesAndMarkThemRead) {
  Properties props = every_type();
  EXPECT_EQ(props.unread().size(), 7u);
  EXPECT_EQ(props.get_bool("flag"), true);
  EXPECT_EQ(props.get_int("count"), 7);
  EXPECT_EQ(props.get_float("alpha"), 0.25);
  EXPECT_EQ(props.get_string("name"), "gold");
  EXPECT_EQ(props.get_color("tint"), (Color3d{0.1, 0.2, 0.3}));
  EXPECT_EQ(props.get_vector("up"), (Vector3d{0, 1, 0}));
  EXPECT_EQ(props.get_transform("to_world")[3], 1.0);
  EXPECT_TRUE(props.unread().empty());
  props.check_all_read();
  EXPECT_EQ(props.kind(), PluginKind::Bsdf);
  EXPECT_EQ(props.plugin(), "rough");
  EXPECT_EQ(props.source(), "scene.xml:3");
}

TEST(Properties, HasDoesNotMarkReadButGetDoes) {
  Properties props = every_type();
  EXPECT_TRUE(props.has("alpha"));
  EXPECT_FALSE(props.has("beta"));
  EXPECT_EQ(props.unread().size(), 7u);
  EXPECT_TRUE(std::holds_alternative<double>(props.get("alpha")));
  EXPECT_EQ(props.unread().size(), 6u);
  EXPECT_EQ(props.unread().front(), "flag");  // declaration order
}

TEST(Properties, FallbacksApplyOnlyWhenTheParameterIsMissing) {
  Properties props = every_type();
  EXPECT_EQ(props.get_float("alpha", 9.0), 0.25);
  EXPECT_EQ(props.get_float("beta", 9.0), 9.0);
  EXPECT_EQ(props.get_bool("missing", true), true);
  EXPECT_EQ(props.get_int("missing", -3), -3);
  EXPECT_EQ(props.get_string("missing", "x"), "x");
  EXPECT_EQ(props.get_color("missing", {1, 2, 3}), (Color3d{1, 2, 3}));
  EXPECT_EQ(props.get_vector("missing", {4, 5, 6}), (Vector3d{4, 5, 6}));
  EXPECT_EQ(props.get_transform("missing", Matrix4d{})[0], 0.0);
  // A fallback does not excuse a wrong type.
  expect_error<TypeError>([&] { props.get_color("alpha", {1, 1, 1}); }, {"'alpha'", "expected rgb, found float"});
}

TEST(Properties, IntegersServeAsFloatsButNothingElseConverts) {
  Properties props = every_type();
  EXPECT_EQ(props.get_float("count"), 7.0);
  expect_error<TypeError>(
      [&] { props.get_int("alpha"); },
      {"bsdf 'rough' (scene.xml:3), parameter 'alpha' (scene.xml:6): expected integer, found float"});
  expect_error<TypeError>([&] { props.get_color("up"); }, {"'up' (scene.xml:9): expected rgb, found vector"});
  expect_error<TypeError>([&] { props.get_vector("tint"); },
                          {"'tint' (scene.xml:8): expected vector or point, found rgb"});
  expect_error<TypeError>([&] { props.get_bool("count"); }, {"expected boolean, found integer"});
  expect_error<TypeError>([&] { props.get_string("flag"); }, {"expected string, found boolean"});
  expect_error<TypeError>([&] { props.get_transform("name"); }, {"expected transform, found string"});
  expect_error<TypeError>([&] { props.get_float("tint"); }, {"expected float, found rgb"});
}

TEST(Properties, AMissingRequiredParameterNamesThePlugin) {
  Properties props(PluginKind::Emitter, "area", "lamp", "scene.xml:20");
  expect_error<ValueError>([&] { props.get_color("radiance"); },
                           {"emitter 'area' id 'lamp' (scene.xml:20)", "the required parameter 'radiance' is missing"});
  expect_error<ValueError>([&] { props.get("radiance"); }, {"'radiance' is missing"});
}

TEST(Properties, SettingAParameterTwiceNamesBothSources) {
  Properties props(PluginKind::Bsdf, "diffuse", "", "scene.xml:3");
  props.set("reflectance", 0.5, "scene.xml:4");
  expect_error<ValueError>(
      [&] { props.set("reflectance", Color3d{1, 0, 0}, "scene.xml:9"); },
      {"bsdf 'diffuse' (scene.xml:3)", "'reflectance' (scene.xml:9) is given twice", "first (at scene.xml:4)"});
}

TEST(Properties, SourceOfFallsBackToThePluginsSource) {
  Properties props = every_type();
  EXPECT_EQ(props.source_of("alpha"), "scene.xml:6");
  EXPECT_EQ(props.source_of("missing"), "scene.xml:3");
}

TEST(Properties, CheckAllReadListsWhatWasNotReadAndWhatThePluginAccepts) {
  Properties props = every_type();
  props.get_float("alpha");
  props.has("roughness");
  std::string message = expect_error<ValueError>(
      [&] { props.check_all_read(); },
      {"bsdf 'rough' (scene.xml:3) does not take these parameters:", "'flag' (scene.xml:4): boolean",
       "'tint' (scene.xml:8): rgb", "'to_world' (scene.xml:10): transform", "rough accepts alpha, roughness"});
  EXPECT_EQ(message.find("'alpha' (scene.xml:6)"), std::string::npos) << message;
  Properties empty_handed(PluginKind::Sampler, "independent", "", "scene.xml:30");
  empty_handed.set("sample_count", int64_t(4), "scene.xml:31");
  expect_error<ValueError>([&] { empty_handed.check_all_read(); }, {"independent accepts no parameters"});
}

TEST(Properties, ObjectsComeInDeclarationOrderAndByKind) {
  auto bsdf = std::make_shared<Leaf>(PluginKind::Bsdf);
  auto texture = std::make_shared<Leaf>(PluginKind::Texture);
  auto other_bsdf = std::make_shared<Leaf>(PluginKind::Bsdf);
  Properties props(PluginKind::Shape, "mesh", "", "scene.xml:1");
  props.set("_arg_0", bsdf, "scene.xml:2");
  props.set("alpha", 1.0, "scene.xml:3");
  props.set("map", texture, "scene.xml:4");
  props.set("_arg_1", other_bsdf, "scene.xml:5");

  std::vector<std::shared_ptr<Object>> bsdfs = props.objects(PluginKind::Bsdf);
  ASSERT_EQ(bsdfs.size(), 2u);
  EXPECT_EQ(bsdfs[0], bsdf);
  EXPECT_EQ(bsdfs[1], other_bsdf);
  EXPECT_EQ(props.unread(), (std::vector<std::string>{"alpha", "map"}));
  expect_error<ValueError>([&] { props.check_all_read(); }, {"mesh accepts nested bsdfs"});

  auto all = props.objects();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].first, "map");
  EXPECT_EQ(all[1].second, texture);
  EXPECT_EQ(props.unread(), (std::vector<std::string>{"alpha"}));
}

TEST(Properties, GetObjectChecksTheKind) {
  auto texture = std::make_shared<Leaf>(PluginKind::Texture);
  texture->set_origin("checkerboard", "checks", "scene.xml:40");
  Properties props(PluginKind::Shape, "mesh", "", "scene.xml:1");
  props.set("bsdf", texture, "scene.xml:2");
  props.set("alpha", 0.5, "scene.xml:3");
  EXPECT_EQ(props.get_object("bsdf", PluginKind::Texture), texture);
  expect_error<TypeError>(
      [&] { props.get_object("bsdf", PluginKind::Bsdf); },
      {"parameter 'bsdf' (scene.xml:2): expected bsdf, found texture 'checkerboard' id 'checks' (scene.xml:40)"});
  expect_error<TypeError>([&] { props.get_object("alpha", PluginKind::Bsdf); }, {"expected bsdf, found float"});
  expect_error<ValueError>([&] { props.get_object("emitter", PluginKind::Emitter); }, {"'emitter' is missing"});
}

TEST(Properties, KindTagsAreMitsubasXmlTags) {
  EXPECT_STREQ(kind_tag(PluginKind::Scene), "scene");
  EXPECT_STREQ(kind_tag(PluginKind::Shape), "shape");
  EXPECT_STREQ(kind_tag(PluginKind::Bsdf), "bsdf");
  EXPECT_STREQ(kind_tag(PluginKind::Emitter), "emitter");
  EXPECT_STREQ(kind_tag(PluginKind::Texture), "texture");
  EXPECT_STREQ(kind_tag(PluginKind::Sensor), "sensor");
  EXPECT_STREQ(kind_tag(PluginKind::Film), "film");
  EXPECT_STREQ(kind_tag(PluginKind::Filter), "rfilter");
  EXPECT_STREQ(kind_tag(PluginKind::Sampler), "sampler");
  EXPECT_STREQ(kind_tag(PluginKind::Integrator), "integrator");
}

TEST(Properties, DescribeStartsAPluginsOwnErrorMessage) {
  Properties props = every_type();
  EXPECT_EQ(props.describe("alpha"), "kiln.render: bsdf 'rough' (scene.xml:3), parameter 'alpha' (scene.xml:6)");
  EXPECT_EQ(props.describe("beta"), "kiln.render: bsdf 'rough' (scene.xml:3), parameter 'beta'");
}
