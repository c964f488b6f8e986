// Shared by the loader tests: expect_error(), and dummy plugins (registered here, so
// include this header from one file per test executable) that stand in for the real ones:
// a container scene, a BSDF with a float and an RGB parameter, a texture, and a shape that
// takes a BSDF, a transform and a file name.
#pragma once

#include <kiln/render/plugin.h>

#include <gtest/gtest.h>

#include <string>

#include "expect_error.h"

namespace kiln::render::test {

/// Keeps every nested object in declaration order (the real scene is another plugin).
struct TestScene : Object {
  explicit TestScene(const Properties& props) : children(props.objects()) {}
  PluginKind kind() const override { return PluginKind::Scene; }
  std::vector<std::pair<std::string, std::shared_ptr<Object>>> children;
};

struct TestBsdf : Object {
  explicit TestBsdf(const Properties& props)
      : alpha(props.get_float("alpha", 0.1)), color(props.get_color("color", {0.5, 0.5, 0.5})) {
    ++constructed;
  }
  PluginKind kind() const override { return PluginKind::Bsdf; }
  double alpha;
  Color3d color;
  /// How many were built: references share one object.
  static inline int constructed = 0;
};

struct TestTexture : Object {
  explicit TestTexture(const Properties& props) : value(props.get_float("value", 1.0)) {}
  PluginKind kind() const override { return PluginKind::Texture; }
  double value;
};

struct TestShape : Object {
  explicit TestShape(const Properties& props)
      : to_world(props.get_transform("to_world", {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})),
        filename(props.get_string("filename", "")) {
    if (props.has("bsdf")) bsdf = props.get_object("bsdf", PluginKind::Bsdf);
  }
  PluginKind kind() const override { return PluginKind::Shape; }
  std::shared_ptr<Object> bsdf;
  Matrix4d to_world;
  std::string filename;
};

KILN_REGISTER_PLUGIN(PluginKind::Scene, "test_scene",
                     [](const Properties& props) { return std::make_shared<TestScene>(props); });
KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "test_bsdf",
                     [](const Properties& props) { return std::make_shared<TestBsdf>(props); });
KILN_REGISTER_PLUGIN(PluginKind::Texture, "test_texture",
                     [](const Properties& props) { return std::make_shared<TestTexture>(props); });
KILN_REGISTER_PLUGIN(PluginKind::Shape, "test_shape",
                     [](const Properties& props) { return std::make_shared<TestShape>(props); });

}  // namespace kiln::render::test
