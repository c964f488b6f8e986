// kiln::render::Transform4f against matrices printed by Mitsuba 3.9 (scalar_rgb,
// mi.ScalarTransform4f and an XML <transform>), exact inverses, normals, and gradients.
#include <kiln/autodiff.h>
#include <kiln/render/transform.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln;
using kiln::render::Transform4f;

namespace {

using Rows = float[4][4];

void expect_matrix(const Matrix4f& m, const Rows& expected, float tolerance = 2e-5f) {
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 4; ++c) EXPECT_NEAR(m(r, c).item(), expected[r][c], tolerance) << "entry " << r << "," << c;
}

void expect_inverse_exact(const Transform4f& t) {
  Rows identity = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  expect_matrix(t.matrix() * t.inverse_matrix(), identity, 1e-5f);
  expect_matrix(t.inverse_matrix() * t.matrix(), identity, 1e-5f);
}

Array3f vec(float x, float y, float z) { return Array3f(Float(x), Float(y), Float(z)); }

}  // namespace

TEST(Transform, ChainingMultipliesOnTheRightAsMitsubasPythonApi) {
  // mi.ScalarTransform4f().translate([1, 2, 3]).rotate([0, 1, 0], 30)
  Transform4f t = Transform4f().translate(vec(1, 2, 3)).rotate(vec(0, 1, 0), Float(30.0f));
  Rows expected = {{0.866025f, 0, 0.5f, 1}, {0, 1, 0, 2}, {-0.5f, 0, 0.866025f, 3}, {0, 0, 0, 1}};
  expect_matrix(t.matrix(), expected);
  expect_inverse_exact(t);
  // mi.ScalarTransform4f().scale([2, 3, 4]).translate([1, 0, 0])
  Transform4f s = Transform4f().scale(vec(2, 3, 4)).translate(vec(1, 0, 0));
  Rows scaled = {{2, 0, 0, 2}, {0, 3, 0, 0}, {0, 0, 4, 0}, {0, 0, 0, 1}};
  expect_matrix(s.matrix(), scaled);
  expect_inverse_exact(s);
}

TEST(Transform, RotateUsesTheAxisAsGivenLikeMitsuba) {
  // mi.ScalarTransform4f().rotate([1, 1, 0], 45): Mitsuba does not normalize the axis.
  Transform4f t = Transform4f().rotate(vec(1, 1, 0), Float(45.0f));
  Rows expected = {
      {1, 0.292893f, 0.707107f, 0}, {0.292893f, 1, -0.707107f, 0}, {-0.707107f, 0.707107f, 0.707107f, 0}, {0, 0, 0, 1}};
  expect_matrix(t.matrix(), expected);
  // With a unit axis the transpose is the exact inverse.
  float h = std::sqrt(0.5f);
  expect_inverse_exact(Transform4f().rotate(vec(h, h, 0), Float(45.0f)));
}

TEST(Transform, LookAtMatchesMitsubasCameraFrame) {
  // mi.ScalarTransform4f().look_at(origin=[1, 2, 3], target=[0, 0, 0], up=[0, 0, 1])
  Transform4f t = Transform4f().look_at(vec(1, 2, 3), vec(0, 0, 0), vec(0, 0, 1));
  Rows expected = {{0.894427f, -0.358569f, -0.267261f, 1},
                   {-0.447214f, -0.717137f, -0.534522f, 2},
                   {0, 0.597614f, -0.801784f, 3},
                   {0, 0, 0, 1}};
  expect_matrix(t.matrix(), expected);
  expect_inverse_exact(t);
  // The camera sits at the origin argument and looks along +z towards the target.
  Array3f eye = t.apply_point(vec(0, 0, 0));
  Array3f ahead = t.apply_vector(vec(0, 0, 1));
  EXPECT_NEAR(eye.y.item(), 2.0f, 1e-6f);
  EXPECT_NEAR(ahead.z.item(), -3.0f / std::sqrt(14.0f), 1e-6f);
}

TEST(Transform, XmlOrderIsLeftMultiplication) {
  // <rotate y="1" angle="30"/><translate x="1" y="2" z="3"/><scale x="2" y="3" z="4"/> in
  // Mitsuba's XML: each element applies after the previous ones, so Scale · Translate · Rotate.
  Transform4f t = Transform4f().scale(vec(2, 3, 4)).translate(vec(1, 2, 3)).rotate(vec(0, 1, 0), Float(30.0f));
  Rows expected = {{1.732051f, 0, 1, 2}, {0, 3, 0, 6}, {-2, 0, 3.4641f, 12}, {0, 0, 0, 1}};
  expect_matrix(t.matrix(), expected);
  expect_inverse_exact(t);
  // Mitsuba's inverse_transpose of the same transform, transposed back.
  Rows inverse = {
      {0.433013f, 0, -0.125f, 0.633975f}, {0, 0.333333f, 0, -2}, {0.25f, 0, 0.216506f, -3.09808f}, {0, 0, 0, 1}};
  expect_matrix(t.inverse_matrix(), inverse);
  expect_matrix(t.inverse().matrix(), inverse);
}

TEST(Transform, NormalsStayPerpendicularUnderNonUniformScale) {
  Transform4f t = Transform4f().rotate(vec(0, 0, 1), Float(20.0f)).scale(vec(1, 5, 0.5f));
  Array3f tangent = vec(1, -1, 0), normal = vec(1, 1, 3);  // perpendicular before
  Float d = dot(t.apply_vector(tangent), t.apply_normal(normal));
  EXPECT_NEAR(d.item(), 0.0f, 1e-5f);
  // A general matrix: the constructor computes its inverse.
  Transform4f general(t.matrix());
  expect_inverse_exact(general);
}

TEST(Transform, ParametersCarryGradients) {
  Float angle(40.0f);
  enable_grad(angle);
  Array3f p = Transform4f().rotate(vec(0, 0, 1), angle).apply_point(vec(1, 0, 0));
  backward(p.x);  // x = cos(angle°): d/d(angle) = -sin(angle°)·π/180
  float expected = -std::sin(40.0f * 3.14159265f / 180.0f) * 3.14159265f / 180.0f;
  EXPECT_NEAR(grad(angle).item(), expected, 1e-6f);
  Array3f offset = vec(0.5f, 0, 0);
  enable_grad(offset);
  Array3f q = Transform4f().scale(vec(2, 2, 2)).translate(offset).apply_point(vec(1, 1, 1));
  backward(q.x);  // x = 2·(1 + offset.x)
  EXPECT_NEAR(grad(offset.x).item(), 2.0f, 1e-6f);
}
