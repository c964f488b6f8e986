// Helpers of the plugin tests: build a plugin from parameters as a scene file would give
// them, list its traverse() keys, make interactions and direction samples, write test images.
#pragma once

#include <kiln/render/emitter.h>
#include <kiln/render/image.h>
#include <kiln/render/load.h>
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "expect_error.h"

namespace kiln::render::test {

using Parameters = std::vector<std::pair<std::string, Properties::Value>>;

/// Plugin `plugin` of `kind` made from `parameters` (each declared at "test:<name>"),
/// through the registry as the loaders make it.
template <typename T>
std::shared_ptr<T> create(PluginKind kind, const std::string& plugin, const Parameters& parameters) {
  Properties props(kind, plugin, "", "test");
  for (const auto& [name, value] : parameters) props.set(name, value, "test:" + name);
  return std::dynamic_pointer_cast<T>(create_object(props));
}
inline std::shared_ptr<Emitter> emitter(const std::string& plugin, const Parameters& parameters = {}) {
  return create<Emitter>(PluginKind::Emitter, plugin, parameters);
}
inline std::shared_ptr<Texture> texture(const std::string& plugin, const Parameters& parameters = {}) {
  return create<Texture>(PluginKind::Texture, plugin, parameters);
}

/// The object the one plugin element `element` (an `<emitter>` or `<texture>`) of a scene
/// file makes, read by the XML loader.
template <typename T> std::shared_ptr<T> from_xml(const std::string& element) {
  PluginNode scene = parse_xml_string("<scene version=\"3.0.0\">" + element + "</scene>");
  const auto& child = std::get<std::unique_ptr<PluginNode>>(scene.parameters.at(0).value);
  return std::dynamic_pointer_cast<T>(instantiate(*child));
}

/// The keys traverse() gives, nested objects' keys prefixed with "<name>." (as
/// kr.traverse() names them).
inline std::vector<std::string> parameter_keys(Object& object, const std::string& prefix = "") {
  struct Collector : TraversalCallback {
    std::string prefix;
    std::vector<std::string> keys;
    void put(const std::string& name, ParameterRef, uint32_t) override { keys.push_back(prefix + name); }
    void put_object(const std::string& name, Object* child) override {
      std::vector<std::string> nested = parameter_keys(*child, prefix + name + ".");
      keys.insert(keys.end(), nested.begin(), nested.end());
    }
  } collector;
  collector.prefix = prefix;
  object.traverse(collector);
  return collector.keys;
}

/// The parameter `name` of `object` (not nested), of type T: a test changes it in place.
template <typename T> T& parameter(Object& object, const std::string& name) {
  struct Finder : TraversalCallback {
    std::string wanted;
    T* found = nullptr;
    void put(const std::string& key, ParameterRef ref, uint32_t) override {
      if (key == wanted && std::holds_alternative<T*>(ref)) found = std::get<T*>(ref);
    }
    void put_object(const std::string&, Object*) override {}
  } finder;
  finder.wanted = name;
  object.traverse(finder);
  if (!finder.found) throw std::runtime_error("test: no parameter '" + name + "' of the type asked for");
  return *finder.found;
}
inline Float& float_parameter(Object& object, const std::string& name) { return parameter<Float>(object, name); }

/// A row-major 4 x 4 matrix from its rows' first three entries (the last row is 0 0 0 1).
inline Matrix4d affine_rows(const std::array<double, 12>& rows) {
  Matrix4d m{};
  for (size_t i = 0; i < 12; ++i) m[i] = rows[i];
  m[15] = 1;
  return m;
}

/// Interactions at the given uv coordinates (textures read only uv).
inline SurfaceInteraction at_uv(const std::vector<float>& u, const std::vector<float>& v) {
  SurfaceInteraction si;
  si.uv = Array2f(Float::from(u), Float::from(v));
  return si;
}

/// Misses along the world-space directions `d` (what infinite emitters' eval() reads).
inline SurfaceInteraction looking_along(const Array3f& d) {
  SurfaceInteraction si;
  si.wi = -d;
  return si;
}

/// A direction sample holding only the direction (what pdf_direction() of environments reads).
inline DirectionSample3f towards(const Array3f& d) {
  DirectionSample3f ds;
  ds.d = d;
  return ds;
}

/// Lane `i` of a color (of its only lane when it has one: a value that is the same for
/// every lane).
inline std::array<float, 3> lane(const Color3f& c, size_t i = 0) {
  auto at = [&](const Float& a) { return a.read(a.size() == 1 ? 0 : i); };
  return {at(c.x), at(c.y), at(c.z)};
}

/// Expects every channel of lane `i` of `actual` within a relative `tolerance` of `expected`.
inline void expect_color(const Color3f& actual, size_t i, const std::array<float, 3>& expected, float tolerance,
                         const std::string& what) {
  std::array<float, 3> got = lane(actual, i);
  for (size_t c = 0; c < 3; ++c)
    EXPECT_NEAR(got[c], expected[c], tolerance * std::max(1.0f, std::abs(expected[c])))
        << what << ", lane " << i << ", channel " << c;
}

/// A path in the temporary directory unique to this process.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

/// Writes a width x height image of `channels` whose values come from `value(x, y, c)`.
inline std::string write_test_image(const std::string& name, size_t width, size_t height, size_t channels,
                                    const std::function<float(size_t, size_t, size_t)>& value) {
  Bitmap image{width, height, channels, {}};
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x)
      for (size_t c = 0; c < channels; ++c) image.pixels.push_back(value(x, y, c));
  std::string path = temp_path(name);
  write_image(image, path);
  return path;
}

/// Runs `body` with Kiln's reference interpreter instead of the JIT.
inline void on_interpreter(const std::function<void()>& body) {
  struct Restore {
    ~Restore() { set_flag(Flag::Interpreter, false); }
  } restore;
  set_flag(Flag::Interpreter, true);
  body();
}

}  // namespace kiln::render::test
