// Quaternions (quaternion.h) against host references in double: rotations against
// Rodrigues' formula, products against composed rotation matrices, slerp against the
// textbook formula, exp/log against their closed forms; gradient checks of each.
#include <kiln/grad_check.h>
#include <kiln/quaternion.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

using namespace kiln;

namespace {

constexpr size_t kLanes = 37;        // not a multiple of any packet width
using Quat = std::array<double, 4>;  // x, y, z, w
using Vec = std::array<double, 3>;
using Mat = std::array<std::array<double, 3>, 3>;

/// A unit axis and an angle in (-π, π) per lane.
struct AxisAngle {
  std::vector<Vec> axis;
  std::vector<double> angle;
};
AxisAngle random_rotations(uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-3.1, 3.1);
  AxisAngle r;
  for (size_t i = 0; i < kLanes; ++i) {
    Vec a{normal(gen), normal(gen), normal(gen)};
    double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    r.axis.push_back({a[0] / n, a[1] / n, a[2] / n});
    r.angle.push_back(uniform(gen));
  }
  return r;
}
/// Rodrigues' rotation matrix: I + sin θ K + (1 - cos θ) K².
Mat rodrigues(const Vec& k, double angle) {
  double s = std::sin(angle), c = std::cos(angle);
  Mat m;
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) m[r][col] = (r == col ? c : 0) + (1 - c) * k[r] * k[col];
  m[0][1] -= s * k[2], m[0][2] += s * k[1], m[1][0] += s * k[2];
  m[1][2] -= s * k[0], m[2][0] -= s * k[1], m[2][1] += s * k[0];
  return m;
}
Mat multiply(const Mat& a, const Mat& b) {
  Mat m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) m[r][c] += a[r][k] * b[k][c];
  return m;
}

template <typename T> std::vector<T> column(const std::vector<Vec>& v, size_t j) {
  std::vector<T> out;
  for (const Vec& e : v) out.push_back(T(e[j]));
  return out;
}
template <typename A> Vector<A, 3> upload(const std::vector<Vec>& v) {
  using T = typename A::Value;
  return {A::from(column<T>(v, 0)), A::from(column<T>(v, 1)), A::from(column<T>(v, 2))};
}
template <typename A> Quaternion<A> quaternions(const AxisAngle& r) {
  std::vector<typename A::Value> angle(r.angle.begin(), r.angle.end());
  return rotate<Quaternion<A>>(upload<A>(r.axis), A::from(angle));
}
template <typename A> Quat lane(const Quaternion<A>& q, size_t i) {
  return {double(q.x.read(i)), double(q.y.read(i)), double(q.z.read(i)), double(q.w.read(i))};
}
template <typename A> Quat host_value(const Quaternion<A>& q) { return lane(q, 0); }

void expect_matrix(const Matrix3f& m, size_t lane_index, const Mat& expected, double tolerance) {
  for (size_t r = 0; r < 3; ++r)
    for (size_t c = 0; c < 3; ++c)
      EXPECT_NEAR(m(r, c).read(lane_index), expected[r][c], tolerance)
          << "lane " << lane_index << " entry (" << r << ", " << c << ")";
}
/// q equals expected or -expected (the same rotation).
void expect_same_rotation(const Quat& q, const Quat& expected, double tolerance, const std::string& where) {
  double sign = q[0] * expected[0] + q[1] * expected[1] + q[2] * expected[2] + q[3] * expected[3] < 0 ? -1 : 1;
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(q[j], sign * expected[j], tolerance) << where << " component " << j;
}

TEST(Quaternion, BasisUnitsMultiplyAsHamiltonDefined) {
  Quaternion4f i(1.f, 0.f, 0.f, 0.f), j(0.f, 1.f, 0.f, 0.f), k(0.f, 0.f, 1.f, 0.f);
  Quaternion4f minus_one(0.f, 0.f, 0.f, -1.f);
  EXPECT_EQ(host_value(i * j), host_value(k));
  EXPECT_EQ(host_value(j * k), host_value(i));
  EXPECT_EQ(host_value(k * i), host_value(j));
  EXPECT_EQ(host_value(j * i), host_value(-k));
  for (const Quaternion4f& u : {i, j, k}) EXPECT_EQ(host_value(u * u), host_value(minus_one));
  EXPECT_EQ(host_value(i * j * k), host_value(minus_one));
}

TEST(Quaternion, RotateMatchesRodrigues) {
  AxisAngle r = random_rotations(1);
  Quaternion4f q = quaternions<Float>(r);
  std::vector<Vec> v;
  std::mt19937 gen(2);
  std::uniform_real_distribution<double> uniform(-2, 2);
  for (size_t i = 0; i < kLanes; ++i) v.push_back({uniform(gen), uniform(gen), uniform(gen)});
  Array3f rotated = rotate_vector(q, upload<Float>(v));
  Matrix3f m3 = quat_to_matrix<Matrix3f>(q);
  Matrix4f m4 = quat_to_matrix<Matrix4f>(q);
  eval(rotated, m3, m4);
  for (size_t i = 0; i < kLanes; ++i) {
    Mat expected = rodrigues(r.axis[i], r.angle[i]);
    expect_matrix(m3, i, expected, 1e-5);
    for (size_t row = 0; row < 4; ++row)
      for (size_t c = 0; c < 4; ++c) {
        double want = row < 3 && c < 3 ? expected[row][c] : row == c ? 1 : 0;
        const Float& entry = m4(row, c);  // the constant entries are one lane
        EXPECT_NEAR(entry.read(entry.size() == 1 ? 0 : i), want, 1e-5) << "Matrix4 lane " << i;
      }
    for (size_t j = 0; j < 3; ++j) {
      double want = 0;
      for (size_t k = 0; k < 3; ++k) want += expected[j][k] * v[i][k];
      EXPECT_NEAR(rotated[j].read(i), want, 1e-5) << "lane " << i << " component " << j;
    }
  }
}

TEST(Quaternion, ProductComposesRotations) {
  AxisAngle ra = random_rotations(3), rb = random_rotations(4);
  Matrix3f m = quat_to_matrix<Matrix3f>(quaternions<Float>(ra) * quaternions<Float>(rb));
  eval(m);
  for (size_t i = 0; i < kLanes; ++i)
    expect_matrix(m, i, multiply(rodrigues(ra.axis[i], ra.angle[i]), rodrigues(rb.axis[i], rb.angle[i])), 1e-5);
}

TEST(Quaternion, ConjugateReciprocalNormAndDivision) {
  Quaternion4f q(1.f, -2.f, 3.f, 0.5f), p(0.25f, 1.f, -1.f, 2.f);
  EXPECT_NEAR(norm(q).item(), std::sqrt(1 + 4 + 9 + 0.25), 1e-6);
  Quat one = host_value(q * rcp(q));
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(one[j], j == 3 ? 1 : 0, 1e-6);
  Quat back = host_value(q / p * p);
  Quat want = host_value(q);
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(back[j], want[j], 1e-5);
  EXPECT_EQ(host_value(conj(q)), (Quat{-1, 2, -3, 0.5}));
  EXPECT_NEAR(norm(normalize(q)).item(), 1.0, 1e-6);
  Vector<Float, 3> im = imag(q);
  EXPECT_EQ(im.y.item(), -2.f);
  EXPECT_EQ(real(q).item(), 0.5f);
}

/// One rotation per branch of matrix_to_quat (pivot x, y, z, w largest), including the
/// half turns where a trace-only formula divides by ~0, plus random rotations.
TEST(Quaternion, MatrixToQuatRoundTripsEveryBranch) {
  AxisAngle r = random_rotations(5);
  double half_turn = 3.14159265358979;
  std::vector<std::pair<Vec, double>> special = {{{1, 0, 0}, half_turn},     {{0, 1, 0}, half_turn},
                                                 {{0, 0, 1}, half_turn},     {{0, 0, 1}, 0.0},
                                                 {{0.6, 0.8, 0}, half_turn}, {{0, 0.6, -0.8}, 3.0}};
  for (size_t i = 0; i < special.size(); ++i) r.axis[i] = special[i].first, r.angle[i] = special[i].second;
  Quaternion4f q = quaternions<Float>(r);
  Quaternion4f from3 = matrix_to_quat(quat_to_matrix<Matrix3f>(q));
  Quaternion4f from4 = matrix_to_quat(quat_to_matrix<Matrix4f>(q));
  eval(q, from3, from4);
  for (size_t i = 0; i < kLanes; ++i) {
    expect_same_rotation(lane(from3, i), lane(q, i), 2e-6, "Matrix3 lane " + std::to_string(i));
    expect_same_rotation(lane(from4, i), lane(q, i), 2e-6, "Matrix4 lane " + std::to_string(i));
  }
}

/// The textbook slerp in double: sin((1-t)θ)/sin θ q0 + sin(tθ)/sin θ q1 (shorter arc),
/// with θ = 2 atan2(|q0 - q1|, |q0 + q1|), accurate for nearly parallel q0, q1 too.
Quat host_slerp(Quat a, Quat b, double t) {
  if (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0)
    for (double& x : b) x = -x;
  double difference = 0, sum = 0;
  for (size_t j = 0; j < 4; ++j) difference += (a[j] - b[j]) * (a[j] - b[j]), sum += (a[j] + b[j]) * (a[j] + b[j]);
  double theta = 2 * std::atan2(std::sqrt(difference), std::sqrt(sum));
  Quat out;
  for (size_t j = 0; j < 4; ++j)
    out[j] = theta == 0 ? a[j] : (std::sin((1 - t) * theta) * a[j] + std::sin(t * theta) * b[j]) / std::sin(theta);
  return out;
}

TEST(Quaternion, SlerpMatchesTextbookAlongTheShorterArc) {
  AxisAngle ra = random_rotations(6), rb = random_rotations(7);
  Quaternion4f a = quaternions<Float>(ra), b = quaternions<Float>(rb);
  std::vector<float> t(kLanes);
  for (size_t i = 0; i < kLanes; ++i) t[i] = float(i) / float(kLanes - 1);
  Quaternion4f s = slerp(a, b, Float::from(t));
  Quaternion4f s_negated = slerp(a, -b, Float::from(t));
  eval(a, b, s, s_negated);
  for (size_t i = 0; i < kLanes; ++i) {
    Quat want = host_slerp(lane(a, i), lane(b, i), t[i]);
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(lane(s, i)[j], want[j], 2e-5) << "lane " << i;
      EXPECT_NEAR(lane(s_negated, i)[j], want[j], 2e-5) << "negated q1 (same rotation), lane " << i;
    }
  }
}

TEST(Quaternion, SlerpOfParallelQuaternionsIsFinite) {
  Quaternion4f q = normalize(Quaternion4f(0.1f, 0.2f, 0.3f, 0.9f));
  Quaternion4f nearby = normalize(Quaternion4f(0.1f, 0.2f, 0.3001f, 0.9f));
  for (const Quaternion4f& other : {q, -q, nearby}) {
    Quat got = host_value(slerp(q, other, Float(0.3f)));
    Quat want = host_slerp(host_value(q), host_value(other), 0.3);
    for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(got[j], want[j], 1e-5);
  }
}

TEST(Quaternion, ExpAndLogMatchClosedForms) {
  Quaternion4f q(0.3f, -0.2f, 0.5f, 0.4f);
  Quat e = host_value(exp(q));
  double r = std::sqrt(0.09 + 0.04 + 0.25), scale = std::exp(0.4);
  Quat want{0.3 * scale * std::sin(r) / r, -0.2 * scale * std::sin(r) / r, 0.5 * scale * std::sin(r) / r,
            scale * std::cos(r)};
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(e[j], want[j], 1e-6);
  Quat back = host_value(log(exp(q)));
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(back[j], host_value(q)[j], 1e-6);
  // real quaternions: no imaginary part to divide by
  EXPECT_EQ(host_value(exp(Quaternion4f(0.f, 0.f, 0.f, 1.f))), (Quat{0, 0, 0, double(std::exp(1.f))}));
  EXPECT_EQ(host_value(log(Quaternion4f(0.f, 0.f, 0.f, 2.f))), (Quat{0, 0, 0, double(std::log(2.f))}));
  Quat negative = host_value(log(Quaternion4f(0.f, 0.f, 0.f, -1.f)));
  EXPECT_TRUE(std::isnan(negative[0]) && std::isnan(negative[1]) && std::isnan(negative[2]));
  EXPECT_EQ(negative[3], 0.0);
}

// ---- gradients ------------------------------------------------------------------------------

Quaternion4f64 random_quaternion64(uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::array<std::vector<double>, 4> c;
  for (auto& component : c)
    for (size_t i = 0; i < 8; ++i) component.push_back(uniform(gen));
  return {Float64::from(c[0]), Float64::from(c[1]), Float64::from(c[2]), Float64::from(c[3])};
}

TEST(QuaternionGrad, ProductConjugateAndReciprocal) {
  auto f = [](const Quaternion4f64& a, const Quaternion4f64& b) { return a * conj(b) + rcp(a) * b; };
  GradCheckResult result = check_grads(f, std::tuple(random_quaternion64(1), random_quaternion64(2)));
  EXPECT_TRUE(result.ok) << result.message;
}

TEST(QuaternionGrad, RotateAndRotateVector) {
  AxisAngle r = random_rotations(8);
  Array3f64 axis = upload<Float64>(r.axis), v = upload<Float64>(r.axis) * Float64(0.7) + Float64(0.2);
  std::vector<double> angle(r.angle.begin(), r.angle.end());
  auto f = [](const Array3f64& axis, const Float64& angle, const Array3f64& v) {
    return rotate_vector(rotate<Quaternion4f64>(axis, angle), v);
  };
  GradCheckResult result = check_grads(f, std::tuple(axis, Float64::from(angle), v));
  EXPECT_TRUE(result.ok) << result.message;
}

TEST(QuaternionGrad, MatrixConversions) {
  GradCheckResult to = check_grads([](const Quaternion4f64& q) { return quat_to_matrix<Matrix<Float64, 4>>(q); },
                                   random_quaternion64(3));
  EXPECT_TRUE(to.ok) << to.message;
  AxisAngle r = random_rotations(9);
  r.axis[0] = {1, 0, 0}, r.angle[0] = 3.1;  // the x branch
  Matrix<Float64, 3> m = quat_to_matrix<Matrix<Float64, 3>>(quaternions<Float64>(r));
  GradCheckResult from = check_grads([](const Matrix<Float64, 3>& m) { return matrix_to_quat(m); }, m);
  EXPECT_TRUE(from.ok) << from.message;
}

TEST(QuaternionGrad, SlerpOnBothBranches) {
  Quaternion4f64 a = normalize(random_quaternion64(4)), b = normalize(random_quaternion64(5));
  Quaternion4f64 close = normalize(a + Quaternion4f64(Float64(0.01), Float64(0.0), Float64(-0.01), Float64(0.0)));
  Quaternion4f64 b_mixed = select(arange<Float64>(8) < 4.0, b, close);  // lanes 4..7 nearly parallel
  Float64 t = linspace<Float64>(0.1, 0.9, 8);
  GradCheckResult result =
      check_grads([](const Quaternion4f64& a, const Quaternion4f64& b, const Float64& t) { return slerp(a, b, t); },
                  std::tuple(a, b_mixed, t));
  EXPECT_TRUE(result.ok) << result.message;
  // exactly parallel (dot = 1 exactly): the branch not taken divides by 0 unless guarded
  Quaternion4f64 same(Float64(0.5), Float64(0.5), Float64(0.5), Float64(0.5));
  enable_grad(same);
  Quaternion4f64 y = slerp(same, same, Float64(0.25));
  backward(y.x + y.y + y.z + y.w);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(grad(same)[i].item())) << "component " << i;
}

TEST(QuaternionGrad, ExpAndLogIncludingRealQuaternions) {
  Quaternion4f64 q = random_quaternion64(6);
  q.w = q.w + 2.0;  // log: away from the negative real axis
  GradCheckResult result = check_grads([](const Quaternion4f64& q) { return exp(q) + log(q); }, q);
  EXPECT_TRUE(result.ok) << result.message;
  // at r = 0 the quotients by r take their limits: derivatives stay finite and correct
  Quaternion4f64 real(zeros<Float64>(3), zeros<Float64>(3), zeros<Float64>(3), Float64({0.5, 1.0, 2.0}));
  GradCheckResult at_real = check_grads([](const Quaternion4f64& q) { return exp(q) + log(q); }, real);
  EXPECT_TRUE(at_real.ok) << at_real.message;
}

}  // namespace
