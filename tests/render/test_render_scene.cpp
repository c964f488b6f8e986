// Whole renders from C++: a scene read from XML, rendered by each integrator in symbolic and
// evaluated mode (the same image), and again after its parameters change (no new kernel).
// The sanitizer build runs the scene, integrators, films and ray tracing through this file.
#include <gtest/gtest.h>

#include <kiln/errors.h>
#include <kiln/render/load.h>
#include <kiln/render/mesh_data.h>
#include <kiln/render/parameters.h>
#include <kiln/render/scene.h>
#include <kiln/runtime.h>

#include <algorithm>
#include <cmath>

using namespace kiln;
using namespace kiln::render;

namespace {

/// A small scene with every kind of shape, a textured and a glossy BSDF and three emitters.
std::string scene_xml(const std::string& integrator) {
  return R"(<scene version="3.0.0">
  <integrator type=")" +
         integrator + R"(">)" + (integrator == "aov" ? R"(<string name="aovs" value="dd:depth,nn:sh_normal"/>)" : "") +
         R"(</integrator>
  <sensor type="perspective">
    <float name="fov" value="45"/>
    <transform name="to_world"><lookat origin="0, 1, 4" target="0, 0.3, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="20"/><integer name="height" value="14"/>
      <rfilter type="tent"/></film>
  </sensor>
  <shape type="rectangle">
    <transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/></transform>
    <bsdf type="diffuse"><texture type="checkerboard" name="reflectance"/></bsdf>
  </shape>
  <shape type="sphere"><point name="center" x="-0.6" y="0.5" z="0"/><float name="radius" value="0.5"/>
    <bsdf type="roughconductor"><float name="alpha" value="0.3"/></bsdf></shape>
  <shape type="cube"><transform name="to_world"><scale value="0.3"/><translate x="0.7" y="0.3"/></transform>
    <bsdf type="plastic"/></shape>
  <shape type="disk"><transform name="to_world"><scale value="0.4"/><rotate x="1" angle="90"/>
    <translate y="2"/></transform><emitter type="area"><rgb name="radiance" value="10"/></emitter></shape>
  <emitter type="point"><point name="position" x="2" y="2" z="2"/><rgb name="intensity" value="5"/></emitter>
  <emitter type="constant"><rgb name="radiance" value="0.1"/></emitter>
</scene>)";
}

std::shared_ptr<Scene> load(const std::string& integrator) {
  return std::dynamic_pointer_cast<Scene>(instantiate(parse_xml_string(scene_xml(integrator))));
}

std::vector<float> render_image(const Scene& scene, ControlMode mode, uint32_t seed = 1) {
  bool saved = flag(Flag::Symbolic);
  set_flag(Flag::Symbolic, mode == ControlMode::Symbolic);
  TensorXf image = scene.integrator()->render(scene, *scene.sensors()[0], seed, 8);
  set_flag(Flag::Symbolic, saved);
  return image.array().to_vector();
}

}  // namespace

TEST(RenderScene, EveryIntegratorGivesTheSameImageInBothModes) {
  for (const char* integrator : {"path", "prb", "direct", "aov"}) {
    auto scene = load(integrator);
    ASSERT_TRUE(scene) << integrator;
    std::vector<float> symbolic = render_image(*scene, ControlMode::Symbolic);
    std::vector<float> evaluated = render_image(*scene, ControlMode::Evaluated);
    size_t channels = std::string(integrator) == "aov" ? 4 : 3;
    ASSERT_EQ(symbolic.size(), size_t(20 * 14) * channels) << integrator;
    EXPECT_EQ(symbolic, evaluated) << integrator;
    double sum = 0;
    for (float v : symbolic) {
      ASSERT_TRUE(std::isfinite(v)) << integrator;
      sum += v;
    }
    EXPECT_GT(sum, 0.0) << integrator;
  }
}

TEST(RenderScene, ParticleTracerGivesTheSameImageInBothModes) {
  // The same light paths in both modes; their splats add up atomically, in whatever order
  // the threads run, so the pixels agree to float rounding.
  auto scene = load("ptracer");
  std::vector<float> symbolic = render_image(*scene, ControlMode::Symbolic);
  std::vector<float> evaluated = render_image(*scene, ControlMode::Evaluated);
  ASSERT_EQ(symbolic.size(), size_t(20 * 14) * 3);
  double sum = 0;
  for (size_t i = 0; i < symbolic.size(); ++i) {
    ASSERT_TRUE(std::isfinite(symbolic[i])) << i;
    EXPECT_NEAR(symbolic[i], evaluated[i], 1e-4f * (1.0f + std::abs(evaluated[i]))) << i;
    sum += symbolic[i];
  }
  EXPECT_GT(sum, 0.0);
}

TEST(RenderScene, PathReplayRendersThePathTracersImage) {
  // prb differs from path only in how it is differentiated.
  for (ControlMode mode : {ControlMode::Symbolic, ControlMode::Evaluated})
    EXPECT_EQ(render_image(*load("prb"), mode), render_image(*load("path"), mode));
}

TEST(RenderScene, ChangedParametersCompileNothing) {
  auto scene = load("path");
  SceneParameters params(*scene);
  render_image(*scene, ControlMode::Symbolic);
  for (uint32_t it = 0; it < 3; ++it) {
    params.set("object_1.film.size", std::array<uint32_t, 2>{22 + it, 15 + it});
    params.set("object_1.x_fov", Float(40.0f + float(it)));
    params.update();
    size_t before = cache_stats().compiles + cache_stats().disk_hits;
    std::vector<float> image = render_image(*scene, ControlMode::Symbolic, it);
    EXPECT_EQ(image.size(), size_t(22 + it) * (15 + it) * 3);
    if (it > 0) EXPECT_EQ(cache_stats().compiles + cache_stats().disk_hits, before) << it;
  }
}

TEST(RenderScene, ShapesKeepTheirGeometryWhenOnlyTheirMaterialChanged) {
  // update() tells an ancestor which of its children changed ("bsdf"): a shape whose BSDF
  // changed keeps its geometry, so the scene does not update its ray tracer.
  auto scene = load("path");
  const auto& shapes = scene->shapes();
  auto changed = [&] {
    return std::count_if(shapes.begin(), shapes.end(),
                         [](const auto& s) { return s->geometry_change() != render::Shape::GeometryChange::kNone; });
  };
  for (const auto& shape : shapes) {  // what update() tells each shape
    shape->parameters_changed({"bsdf"});
    shape->parameters_changed({"emitter"});
  }
  EXPECT_EQ(changed(), 0);
  for (const auto& shape : shapes) shape->parameters_changed({"bsdf", "to_world"});
  EXPECT_EQ(changed(), long(shapes.size()));  // a geometric change besides the material
  scene->parameters_changed({});              // the scene takes the changes in
  EXPECT_EQ(changed(), 0);
  for (const auto& shape : shapes) shape->parameters_changed({});  // no names: anything may have changed
  EXPECT_EQ(changed(), long(shapes.size()));
  scene->parameters_changed({});
  // A mesh's attribute alone is no geometric change.
  add_mesh_attribute(*shapes[0], "vertex_weight", 1, zeros<Float>(mesh_arrays(*shapes[0]).vertex_count()));
  shapes[0]->parameters_changed({"vertex_weight"});
  EXPECT_EQ(changed(), 0);
}

TEST(RenderScene, UpdateTellsAncestorsWhichChildrenChanged) {
  // A root holding two children, each owning a value; what parameters_changed() hears.
  struct Node : Object {
    PluginKind kind() const override { return PluginKind::Bsdf; }
    void traverse(TraversalCallback& callback) override {
      callback.put("value", &value, param_flags::kDifferentiable);
      for (auto& [name, child] : children) callback.put_object(name, child.get());
    }
    void parameters_changed(const std::vector<std::string>& keys) override { heard.push_back(keys); }
    Float value = Float(1.0f);
    std::vector<std::pair<std::string, std::shared_ptr<Node>>> children;
    std::vector<std::vector<std::string>> heard;
  };
  Node root;
  root.children = {{"left", std::make_shared<Node>()}, {"right", std::make_shared<Node>()}};
  SceneParameters params(root);
  params.set("left.value", Float(2.0f));
  params.set("right.value", Float(3.0f));
  params.update();
  using Heard = std::vector<std::vector<std::string>>;
  EXPECT_EQ(root.children[0].second->heard, (Heard{{"value"}}));
  ASSERT_EQ(root.heard.size(), 1u);  // once, naming both children (in no particular order)
  std::sort(root.heard[0].begin(), root.heard[0].end());
  EXPECT_EQ(root.heard, (Heard{{"left", "right"}}));
}

TEST(RenderScene, UpdateSeesParametersChangedInPlace) {
  // An array changed through get()'s reference (given derivatives, or a new value) counts
  // as changed at the next update(); values an owner derives in parameters_changed() do not
  // count at the update after.
  struct Node : Object {
    PluginKind kind() const override { return PluginKind::Bsdf; }
    void traverse(TraversalCallback& callback) override {
      callback.put("value", &value, param_flags::kDifferentiable);
      callback.put("derived", &derived, param_flags::kNonDifferentiable);
    }
    void parameters_changed(const std::vector<std::string>& keys) override {
      heard.push_back(keys);
      derived = value * 2.0f;
    }
    Float value = Float(1.0f), derived = Float(2.0f);
    std::vector<std::vector<std::string>> heard;
  };
  Node node;
  SceneParameters params(node);
  params.update();
  EXPECT_TRUE(node.heard.empty());  // nothing changed
  enable_grad(*std::get<Float*>(params.get("value")));
  params.update();
  using Heard = std::vector<std::vector<std::string>>;
  EXPECT_EQ(node.heard, (Heard{{"value"}}));
  params.update();  // `derived` was given a new node by the owner itself
  EXPECT_EQ(node.heard.size(), 1u);
  *std::get<Float*>(params.get("value")) = Float(5.0f);
  params.update();
  EXPECT_EQ(node.heard.size(), 2u);
  EXPECT_EQ(node.derived.read(0), 10.0f);
}

TEST(RenderScene, AMeshTakesNewVertexAndFaceCountsThroughItsParameters) {
  // Remeshing, as Mitsuba's shape_optimization tutorial does: the cube's 24 vertices and 12
  // faces replaced by one triangle behind the camera (the ray tracer built again, normals
  // recomputed, uvs dropped) render as the cube's own vertices moved there (updated in place).
  auto find_key = [](const SceneParameters& params, const std::string& suffix, size_t size) {
    for (const std::string& key : params.keys())
      if (key.ends_with(suffix) && std::get<Float*>(params.get(key))->size() == size) return key;
    return std::string();
  };
  auto remeshed = load("direct"), moved = load("direct");
  SceneParameters remeshed_params(*remeshed), moved_params(*moved);
  std::string positions = find_key(remeshed_params, "vertex_positions", 72);  // the cube's
  ASSERT_FALSE(positions.empty());
  std::string prefix = positions.substr(0, positions.size() - std::string("vertex_positions").size());
  std::vector<float> triangle{0, 0, 10, 1, 0, 10, 0, 1, 10};
  remeshed_params.set(positions, Float::from(triangle));
  remeshed_params.set(prefix + "faces", UInt32::from(std::vector<uint32_t>{0, 1, 2}));
  remeshed_params.update();
  EXPECT_EQ(std::get<Float*>(remeshed_params.get(prefix + "vertex_normals"))->size(), 9u);
  EXPECT_EQ(std::get<Float*>(remeshed_params.get(prefix + "vertex_texcoords"))->size(), 0u);
  std::vector<float> behind(72);
  for (size_t i = 0; i < behind.size(); ++i) behind[i] = triangle[i % 9];
  moved_params.set(positions, Float::from(behind));
  moved_params.update();
  EXPECT_EQ(render_image(*remeshed, ControlMode::Symbolic), render_image(*moved, ControlMode::Symbolic));
  // Faces that name vertices the mesh lacks are an error.
  remeshed_params.set(prefix + "faces", UInt32::from(std::vector<uint32_t>{0, 1, 3}));
  EXPECT_THROW(remeshed_params.update(), ValueError);
}

TEST(RenderScene, MeshAttributeTextureReadsTheHitShapesAttribute) {
  // A rectangle filling the view whose two triangles carry 0.25 and 0.75 (a face attribute
  // added after loading), diffuse under a white sky: the pixels are 0.25 or 0.75 of the sky
  // (those on the diagonal in between). A sphere without the attribute is in the scene too.
  auto scene = std::dynamic_pointer_cast<Scene>(instantiate(parse_xml_string(R"(<scene version="3.0.0">
  <integrator type="path"><integer name="max_depth" value="2"/><boolean name="hide_emitters" value="true"/></integrator>
  <sensor type="perspective"><float name="fov" value="40"/>
    <transform name="to_world"><lookat origin="0, 0, 2" target="0, 0, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="16"/><integer name="height" value="16"/>
      <rfilter type="box"/></film></sensor>
  <shape type="rectangle"><bsdf type="diffuse">
    <texture type="mesh_attribute" name="reflectance"><string name="name" value="face_shade"/></texture></bsdf></shape>
  <shape type="sphere"><point name="center" x="0" y="0" z="-20"/><float name="radius" value="0.1"/>
    <bsdf type="diffuse"><texture type="mesh_attribute" name="reflectance">
      <string name="name" value="face_shade"/></texture></bsdf></shape>
  <emitter type="constant"><rgb name="radiance" value="1"/></emitter>
</scene>)")));
  add_mesh_attribute(*scene->shapes()[0], "face_shade", 1, Float::from(std::vector<float>{0.25f, 0.75f}));
  for (ControlMode mode : {ControlMode::Symbolic, ControlMode::Evaluated}) {
    std::vector<float> image = render_image(*scene, mode), red;
    for (size_t i = 0; i < image.size(); i += 3) red.push_back(image[i]);
    std::sort(red.begin(), red.end());
    EXPECT_NEAR(red[red.size() / 4], 0.25f, 0.03f);  // the quartiles: one triangle each
    EXPECT_NEAR(red[3 * red.size() / 4], 0.75f, 0.06f);
  }
}
