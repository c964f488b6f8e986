// Derivatives of renders with respect to geometry and the camera from C++ (issue 30): the
// gradient render's fresh leaves set through SceneParameters, pooled mesh arrays, vertex
// normals following positions, a sphere's transform, the camera's pose, the projective
// integrators' visibility terms (mesh, sphere and disk silhouettes, a shadow under an area
// light), and LargeSteps. The sanitizer build runs these paths through this file.
#include <gtest/gtest.h>

#include <kiln/autodiff.h>
#include <kiln/render/large_steps.h>
#include <kiln/render/load.h>
#include <kiln/render/parameters.h>
#include <kiln/render/render.h>
#include <kiln/render/scene.h>

#include <cmath>

using namespace kiln;
using namespace kiln::render;

namespace {

/// Two rectangles (one pool of joined arrays), a sphere, a point light and a disk light, a
/// small film.
std::shared_ptr<Scene> load(const std::string& integrator) {
  std::string xml = R"(<scene version="3.0.0">
  <integrator type=")" +
                    integrator + R"(">)" + (integrator == "direct" ? "" : R"(<integer name="max_depth" value="3"/>)") +
                    R"(</integrator>
  <sensor type="perspective" id="sensor">
    <float name="fov" value="45"/>
    <transform name="to_world"><lookat origin="0, 1.5, 3" target="0, 0.2, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="12"/><integer name="height" value="10"/></film>
  </sensor>
  <shape type="rectangle" id="floor">
    <transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/></transform>
    <bsdf type="diffuse"/>
  </shape>
  <shape type="rectangle" id="wall"><transform name="to_world"><scale value="3"/><translate z="-1"/></transform>
    <bsdf type="diffuse"/></shape>
  <shape type="sphere" id="ball"><point name="center" x="0.3" y="0.4" z="0"/><float name="radius" value="0.4"/>
    <bsdf type="diffuse"/></shape>
  <emitter type="point"><point name="position" x="1" y="2" z="1.5"/><rgb name="intensity" value="6"/></emitter>
  <shape type="disk" id="lamp"><transform name="to_world"><scale value="0.5"/><rotate x="1" angle="90"/>
    <translate x="-0.5" y="2.2"/></transform>
    <emitter type="area"><rgb name="radiance" value="4"/></emitter></shape>
</scene>)";
  return std::dynamic_pointer_cast<Scene>(instantiate(parse_xml_string(xml)));
}

bool all_finite(const std::vector<float>& values) {
  for (float v : values)
    if (!std::isfinite(v)) return false;
  return true;
}

double absolute_sum(const std::vector<float>& values) {
  double sum = 0;
  for (float v : values) sum += std::abs(v);
  return sum;
}

}  // namespace

TEST(GeometryDerivatives, ReverseModeReachesVerticesTransformsAndTheCameraAndRestoresTheScene) {
  for (const char* integrator : {"path", "prb", "ptracer", "direct_projective", "prb_projective"}) {
    auto scene = load(integrator);
    SceneParameters params(*scene);
    Float positions = detach(*std::get<Float*>(params.get("wall.vertex_positions")));
    enable_grad(positions);
    params.set("wall.vertex_positions", positions);
    Float shift(0.0f);
    enable_grad(shift);
    Transform4f ball = *std::get<Transform4f*>(params.get("ball.to_world"));
    params.set("ball.to_world", Transform4f().translate(Array3f(shift, Float(0.0f), Float(0.0f))) * ball);
    Float turn(0.0f);
    enable_grad(turn);
    Transform4f camera = *std::get<Transform4f*>(params.get("sensor.to_world"));
    params.set("sensor.to_world", camera.rotate(Array3f(0.0f, 1.0f, 0.0f), turn));
    params.update();
    // The normals follow the positions, with their derivatives.
    EXPECT_TRUE(grad_enabled(*std::get<Float*>(params.get("wall.vertex_normals")))) << integrator;

    RenderOptions options;
    options.spp = 4;
    TensorXf image = kiln::render::render(scene, scene->sensors()[0], options);
    backward_from(image.array(), Float(1.0f) + zeros<Float>(image.array().size()));
    std::vector<float> vertex_grad = grad(positions).to_vector();
    ASSERT_TRUE(all_finite(vertex_grad)) << integrator;
    EXPECT_GT(absolute_sum(vertex_grad), 0.0) << integrator;
    for (const Float& g : {grad(shift), grad(turn)}) {
      ASSERT_TRUE(std::isfinite(g.read(0))) << integrator;
      EXPECT_NE(g.read(0), 0.0f) << integrator;
    }
    // The scene holds the values it held before (the user's, with their derivatives).
    EXPECT_EQ(std::get<Float*>(params.get("wall.vertex_positions"))->to_vector(), positions.to_vector());
    EXPECT_TRUE(grad_enabled(*std::get<Float*>(params.get("wall.vertex_positions"))));
  }
}

TEST(GeometryDerivatives, LargeStepsRoundTripsAndDifferentiatesItsSolve) {
  auto scene = load("direct");
  SceneParameters params(*scene);
  Float positions = *std::get<Float*>(params.get("floor.vertex_positions"));
  UInt32 faces = *std::get<UInt32*>(params.get("floor.faces"));
  LargeSteps steps(positions, faces, 5.0f);
  EXPECT_EQ(steps.unique_count(), 4u);
  Float u = steps.to_differential(positions);
  enable_grad(u);
  Float v = steps.from_differential(u);
  std::vector<float> back = v.to_vector(), original = positions.to_vector();
  for (size_t i = 0; i < back.size(); ++i) EXPECT_NEAR(back[i], original[i], 1e-4f);
  backward_from(v, Float(1.0f) + zeros<Float>(v.size()));
  std::vector<float> g = grad(u).to_vector();
  ASSERT_TRUE(all_finite(g));
  // Each coordinate's adjoint sums to that of a constant field: (I + λL) 1 = 1, so the
  // solve of all ones is all ones.
  for (float value : g) EXPECT_NEAR(value, 1.0f, 1e-4f);
  EXPECT_THROW(LargeSteps(positions, faces, -1.0f), ValueError);
}
