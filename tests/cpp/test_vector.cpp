// Vectors and matrices of arrays (vector.h, matrix.h) against the same algebra computed
// lane by lane in double on the host, on random inputs.
#include <kiln/kiln.h>
#include <kiln/matrix.h>
#include <kiln/vector.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

using namespace kiln;

namespace {

constexpr size_t kLanes = 203;  // not a multiple of any packet width
constexpr double kTolerance = 1e-4;

/// Random host values in [lo, hi), reproducible per seed.
std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(gen);
  return out;
}

/// Host copy of a vector of N Float components: host[j][lane].
template <size_t N> using Host = std::array<std::vector<float>, N>;

template <size_t N> Host<N> random_host(uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Host<N> host;
  for (size_t j = 0; j < N; ++j) host[j] = random_values(kLanes, seed * 31 + uint32_t(j), lo, hi);
  return host;
}
template <size_t N> Vector<Float, N> upload(const Host<N>& host) {
  Vector<Float, N> v;
  for (size_t j = 0; j < N; ++j) v[j] = Float::from(host[j]);
  return v;
}
template <size_t N> Host<N> download(const Vector<Float, N>& v) {
  eval(v);
  Host<N> host;
  for (size_t j = 0; j < N; ++j) host[j] = v[j].to_vector();
  return host;
}

/// Checks every component of `v` against expected(lane, component).
template <size_t N, typename F>
void expect_vector(const Vector<Float, N>& v, F&& expected, double tolerance = kTolerance) {
  Host<N> got = download(v);
  for (size_t i = 0; i < kLanes; ++i)
    for (size_t j = 0; j < N; ++j)
      ASSERT_NEAR(got[j][i], expected(i, j), tolerance) << "lane " << i << " component " << j;
}
void expect_array(const Float& a, const std::function<double(size_t)>& expected, double tolerance = kTolerance) {
  std::vector<float> got = a.to_vector();
  ASSERT_EQ(got.size(), kLanes);
  for (size_t i = 0; i < kLanes; ++i) ASSERT_NEAR(got[i], expected(i), tolerance) << "lane " << i;
}

// ---- host reference for matrices ------------------------------------------------------------

template <size_t N> using HostMatrix = std::array<std::array<double, N>, N>;

/// Per lane, a random matrix made well-conditioned by a dominant diagonal.
template <size_t N> std::vector<HostMatrix<N>> random_matrices(uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<HostMatrix<N>> out(kLanes);
  for (HostMatrix<N>& m : out)
    for (size_t r = 0; r < N; ++r)
      for (size_t c = 0; c < N; ++c) m[r][c] = dist(gen) + (r == c ? 3.f : 0.f);  // exact in float
  return out;
}
template <size_t N> Matrix<Float, N> upload(const std::vector<HostMatrix<N>>& host) {
  Matrix<Float, N> m;
  for (size_t r = 0; r < N; ++r)
    for (size_t c = 0; c < N; ++c) {
      std::vector<float> column(kLanes);
      for (size_t i = 0; i < kLanes; ++i) column[i] = float(host[i][r][c]);
      m(r, c) = Float::from(column);
    }
  return m;
}
/// Determinant by Gaussian elimination with partial pivoting (a method unlike Kiln's).
template <size_t N> double host_determinant(HostMatrix<N> m) {
  double det = 1;
  for (size_t k = 0; k < N; ++k) {
    size_t pivot = k;
    for (size_t r = k + 1; r < N; ++r)
      if (std::abs(m[r][k]) > std::abs(m[pivot][k])) pivot = r;
    if (pivot != k) std::swap(m[pivot], m[k]), det = -det;
    det *= m[k][k];
    for (size_t r = k + 1; r < N; ++r) {
      double factor = m[r][k] / m[k][k];
      for (size_t c = k; c < N; ++c) m[r][c] -= factor * m[k][c];
    }
  }
  return det;
}
template <size_t N> void expect_matrix(const Matrix<Float, N>& m,
                                       const std::function<double(size_t, size_t, size_t)>& expected,
                                       double tolerance = kTolerance) {
  eval(m);
  for (size_t r = 0; r < N; ++r)
    for (size_t c = 0; c < N; ++c) {
      std::vector<float> got = m(r, c).to_vector();
      for (size_t i = 0; i < kLanes; ++i)
        ASSERT_NEAR(got[i], expected(i, r, c), tolerance) << "lane " << i << " entry " << r << "," << c;
    }
}

/// Kernel lookups (compiled or cached) so far: one per kernel launched.
size_t kernels_launched() {
  CacheStats s = cache_stats();
  return s.memory_hits + s.disk_hits + s.compiles;
}

}  // namespace

// ---- vectors ----------------------------------------------------------------------------------

TEST(Vector, ComponentsByNameAndIndex) {
  Array4f v(1.f, 2.f, 3.f, 4.f);
  EXPECT_EQ(v.x.item(), 1.f);
  EXPECT_EQ(v.w.item(), 4.f);
  for (size_t j = 0; j < 4; ++j) EXPECT_EQ(v[j].item(), float(j + 1));
  v[2] = Float(7.f);
  EXPECT_EQ(v.z.item(), 7.f);
  Array2f broadcast(Float(5.f));
  EXPECT_EQ(broadcast.x.item(), 5.f);
  EXPECT_EQ(broadcast.y.item(), 5.f);
  static_assert(Array3f::Size == 3 && std::is_same_v<Array3u::Component, UInt32>);
}

TEST(Vector, SizeIsTheWidestComponent) {
  Array3f v(arange<Float>(10), 1.f, 2.f);
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(Array3f().size(), 0u);
}

TEST(Vector, ArithmeticWithVectorsArraysAndScalars) {
  Host<3> a = random_host<3>(1), b = random_host<3>(2, 0.5f, 2.f);
  std::vector<float> s = random_values(kLanes, 3);
  Array3f va = upload(a), vb = upload(b);
  Float vs = Float::from(s);
  expect_vector(va + vb, [&](size_t i, size_t j) { return double(a[j][i]) + b[j][i]; });
  expect_vector(va - vb, [&](size_t i, size_t j) { return double(a[j][i]) - b[j][i]; });
  expect_vector(va * vb, [&](size_t i, size_t j) { return double(a[j][i]) * b[j][i]; });
  expect_vector(va / vb, [&](size_t i, size_t j) { return double(a[j][i]) / b[j][i]; });
  expect_vector(va * vs, [&](size_t i, size_t j) { return double(a[j][i]) * s[i]; });
  expect_vector(vs - va, [&](size_t i, size_t j) { return double(s[i]) - a[j][i]; });
  expect_vector(va * 2.f, [&](size_t i, size_t j) { return 2.0 * a[j][i]; });
  expect_vector(1.f / vb, [&](size_t i, size_t j) { return 1.0 / b[j][i]; });
  expect_vector(-va, [&](size_t i, size_t j) { return -double(a[j][i]); });
  Array3f acc = va;
  acc += vb;
  acc *= 0.5f;
  acc -= vs;
  expect_vector(acc, [&](size_t i, size_t j) { return (double(a[j][i]) + b[j][i]) * 0.5 - s[i]; });
}

TEST(Vector, ComponentwiseFunctions) {
  Host<2> a = random_host<2>(4), b = random_host<2>(5), c = random_host<2>(6);
  Array2f va = upload(a), vb = upload(b), vc = upload(c);
  expect_vector(abs(va), [&](size_t i, size_t j) { return std::abs(double(a[j][i])); });
  expect_vector(min(va, vb), [&](size_t i, size_t j) { return std::min(a[j][i], b[j][i]); });
  expect_vector(max(va, vb), [&](size_t i, size_t j) { return std::max(a[j][i], b[j][i]); });
  expect_vector(fma(va, vb, vc), [&](size_t i, size_t j) { return double(a[j][i]) * b[j][i] + c[j][i]; });
  Bool mask = va.x < vb.x;
  expect_vector(select(mask, va, vb), [&](size_t i, size_t j) { return a[0][i] < b[0][i] ? a[j][i] : b[j][i]; });
}

TEST(Vector, DotCrossAndNorms) {
  Host<3> a = random_host<3>(7), b = random_host<3>(8);
  Array3f va = upload(a), vb = upload(b);
  auto host_dot = [&](size_t i) {
    double sum = 0;
    for (size_t j = 0; j < 3; ++j) sum += double(a[j][i]) * b[j][i];
    return sum;
  };
  auto host_norm = [&](size_t i) {
    return std::sqrt(double(a[0][i]) * a[0][i] + double(a[1][i]) * a[1][i] + double(a[2][i]) * a[2][i]);
  };
  expect_array(dot(va, vb), host_dot);
  expect_array(squared_norm(va), [&](size_t i) { return host_norm(i) * host_norm(i); });
  expect_array(norm(va), host_norm);

  Array3f c = cross(va, vb);
  expect_vector(c, [&](size_t i, size_t j) {
    size_t k = (j + 1) % 3, l = (j + 2) % 3;
    return double(a[k][i]) * b[l][i] - double(a[l][i]) * b[k][i];
  });
  expect_array(dot(c, va), [](size_t) { return 0.0; });
  expect_array(dot(c, vb), [](size_t) { return 0.0; });

  Array3f n = normalize(va);
  expect_array(norm(n), [](size_t) { return 1.0; }, 1e-6);
  expect_vector(n, [&](size_t i, size_t j) { return a[j][i] / host_norm(i); });
}

TEST(Vector, IntegerAndDoubleVectors) {
  Array3u u(arange<UInt32>(kLanes), 7u, arange<UInt32>(kLanes) * 3u);
  Array3u w = u * 5u + Array3u(1u, 2u, 3u);
  eval(w);
  for (size_t i = 0; i < kLanes; ++i) {
    ASSERT_EQ(w.x.read(i), uint32_t(i * 5 + 1));
    ASSERT_EQ(w.z.read(i), uint32_t(i * 15 + 3));
  }
  EXPECT_EQ(w.y.item(), 37u);  // all-literal components fold to one literal lane
  EXPECT_EQ(dot(Array2i(2, -3), Array2i(4, 5)).item(), -7);
  Array3f f = cast<float>(u);
  EXPECT_EQ(f.z.read(4), 12.f);

  // Float64 keeps precision that Float would lose (braces: evaluated arrays, not literals,
  // so that a kernel computes this rather than literal folding).
  Array3f64 d(Float64{1.0}, Float64{1e-12}, Float64{0.0});
  EXPECT_NEAR(((d + Array3f64(1e-12, 1.0, 0.0)) - Array3f64(1.0)).x.item(), 1e-12, 1e-15);
  EXPECT_DOUBLE_EQ(norm(Array3f64(3.0, 4.0, 12.0)).item(), 13.0);
}

TEST(Vector, GatherAndScatterWholeVectors) {
  const size_t count = 50;
  std::vector<float> flat_host = random_values(3 * count, 9);
  Float flat = Float::from(flat_host);
  std::vector<uint32_t> index_host(kLanes);
  for (size_t i = 0; i < kLanes; ++i) index_host[i] = uint32_t((i * 17 + 3) % count);
  UInt32 index = UInt32::from(index_host);

  Array3f v = gather<Array3f>(flat, index);
  expect_vector(v, [&](size_t i, size_t j) { return flat_host[3 * index_host[i] + j]; }, 0.0);

  Bool even = (arange<UInt32>(kLanes) & 1u) == 0u;
  Array3f masked = gather<Array3f>(flat, index, even);
  expect_vector(masked, [&](size_t i, size_t j) { return i % 2 == 0 ? flat_host[3 * index_host[i] + j] : 0.0; }, 0.0);

  // Scatter distinct slots: lane i writes vector (i, 2i, 3i) to slot count - 1 - i.
  UInt32 lane = arange<UInt32>(count);
  Float lane_f = cast<float>(lane);
  Float target = zeros<Float>(3 * count);
  scatter(target, Array3f(lane_f, lane_f * 2.f, lane_f * 3.f), uint32_t(count - 1) - lane);
  std::vector<float> written = target.to_vector();
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < 3; ++j) ASSERT_EQ(written[3 * (count - 1 - i) + j], float(i * (j + 1)));

  // scatter_add with every lane on slot 0 sums them.
  Float sums = zeros<Float>(6);
  scatter_add(sums, Array2f(Float(1.f), lane_f), zeros<UInt32>(count));
  std::vector<float> summed = sums.to_vector();
  EXPECT_EQ(summed[0], float(count));
  EXPECT_EQ(summed[1], float(count * (count - 1) / 2));
  EXPECT_EQ(summed[2], 0.f);
}

TEST(Vector, EvalTakesAllComponentsInOneKernel) {
  Float base = arange<Float>(kLanes);
  eval(base);
  Array3f v(base + 1.f, base * 2.f, base - 3.f);
  size_t before = kernels_launched();
  eval(v);
  EXPECT_EQ(kernels_launched() - before, 1u);
  EXPECT_EQ(v.y.read(10), 20.f);

  // A mix of vectors, matrices and arrays of one size is still one kernel.
  Array2f w(base * 4.f, base * 5.f);
  Matrix2f m(base, base + 1.f, base + 2.f, base + 3.f);
  Float plain = base * 6.f;
  before = kernels_launched();
  eval(w, m, plain);
  EXPECT_EQ(kernels_launched() - before, 1u);
  EXPECT_EQ(m(1, 1).read(2), 5.f);
  EXPECT_EQ(plain.read(2), 12.f);
}

// ---- matrices ---------------------------------------------------------------------------------

TEST(Matrix, IdentityTransposeAndProducts) {
  auto ha = random_matrices<3>(10), hb = random_matrices<3>(11);
  Matrix3f a = upload(ha), b = upload(hb);
  expect_matrix(a * Matrix3f::identity(), [&](size_t i, size_t r, size_t c) { return ha[i][r][c]; }, 0.0);
  expect_matrix(transpose(a), [&](size_t i, size_t r, size_t c) { return ha[i][c][r]; }, 0.0);
  expect_matrix(
      a * b,
      [&](size_t i, size_t r, size_t c) {
        double sum = 0;
        for (size_t k = 0; k < 3; ++k) sum += ha[i][r][k] * hb[i][k][c];
        return sum;
      },
      1e-5 * 16);
  expect_matrix(a + b * 2.f, [&](size_t i, size_t r, size_t c) { return ha[i][r][c] + 2 * hb[i][r][c]; });

  Host<3> v = random_host<3>(12);
  expect_vector(
      a * upload(v),
      [&](size_t i, size_t r) {
        double sum = 0;
        for (size_t k = 0; k < 3; ++k) sum += ha[i][r][k] * v[k][i];
        return sum;
      },
      1e-5 * 4);
}

template <size_t N> void check_determinant_and_inverse(uint32_t seed) {
  auto host = random_matrices<N>(seed);
  Matrix<Float, N> m = upload(host);
  Float det = determinant(m);
  std::vector<float> got = det.to_vector();
  for (size_t i = 0; i < kLanes; ++i) {
    double expected = host_determinant<N>(host[i]);
    ASSERT_NEAR(got[i], expected, 1e-5 * std::abs(expected)) << N << "x" << N << " lane " << i;
  }
  Matrix<Float, N> inv = inverse(m);
  auto identity = [](size_t, size_t r, size_t c) { return r == c ? 1.0 : 0.0; };
  expect_matrix(inv * m, identity, 1e-5);
  expect_matrix(m * inv, identity, 1e-5);
}

TEST(Matrix, DeterminantAndInverse2x2) { check_determinant_and_inverse<2>(20); }
TEST(Matrix, DeterminantAndInverse3x3) { check_determinant_and_inverse<3>(21); }
TEST(Matrix, DeterminantAndInverse4x4) { check_determinant_and_inverse<4>(22); }

TEST(Matrix, SingularMatrixGivesNonFiniteInverse) {
  Matrix2f singular(1.f, 2.f, 2.f, 4.f);
  EXPECT_EQ(determinant(singular).item(), 0.f);
  EXPECT_FALSE(std::isfinite(inverse(singular)(0, 0).item()));
}

TEST(Matrix, TransformsOfPointsVectorsAndNormals) {
  auto host = random_matrices<4>(30);
  for (auto& m : host) m[3] = {0.1 * m[3][0], 0.1 * m[3][1], 0.1 * m[3][2], 2.0};  // projective row
  Matrix4f m = upload(host);
  Host<3> p = random_host<3>(31), t = random_host<3>(32), u = random_host<3>(33);

  expect_vector(transform_point(m, upload(p)), [&](size_t i, size_t r) {
    auto row = [&](size_t k) {
      return host[i][k][0] * p[0][i] + host[i][k][1] * p[1][i] + host[i][k][2] * p[2][i] + host[i][k][3];
    };
    return row(r) / row(3);
  });
  expect_vector(transform_vector(m, upload(t)), [&](size_t i, size_t r) {
    return host[i][r][0] * t[0][i] + host[i][r][1] * t[1][i] + host[i][r][2] * t[2][i];
  });

  // A normal stays perpendicular to the surface's transformed tangents.
  Array3f tangent = upload(t), other = upload(u);
  Array3f normal = cross(tangent, other);
  Array3f n = normalize(transform_normal(m, normal));
  expect_array(dot(n, normalize(transform_vector(m, tangent))), [](size_t) { return 0.0; });
  expect_array(dot(n, normalize(transform_vector(m, other))), [](size_t) { return 0.0; });

  // Translation moves points but not vectors.
  Matrix4f shift(1.f, 0.f, 0.f, 5.f, 0.f, 1.f, 0.f, 6.f, 0.f, 0.f, 1.f, 7.f, 0.f, 0.f, 0.f, 1.f);
  Array3f q = transform_point(shift, Array3f(1.f, 2.f, 3.f));
  EXPECT_EQ(q.x.item(), 6.f);
  EXPECT_EQ(q.z.item(), 10.f);
  EXPECT_EQ(transform_vector(shift, Array3f(1.f, 2.f, 3.f)).y.item(), 2.f);
}
