// Textures (texture.h) against a host reference written here lane by lane: every dimension,
// filter and wrap mode at random and at edge positions, the defined results for non-finite
// and inactive lanes, bad shapes, and gradient checks on texels and positions.
#include <kiln/grad_check.h>
#include <kiln/texture.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace kiln;

namespace {

enum class Filter { Nearest, Linear, Cubic };

std::vector<double> random_values(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> out(n);
  for (double& x : out) x = uniform(gen);
  return out;
}

long host_wrap(long i, long n, WrapMode mode) {
  switch (mode) {
    case WrapMode::Clamp: return std::min(std::max(i, 0L), n - 1);
    case WrapMode::Repeat: return ((i % n) + n) % n;
    case WrapMode::Mirror: {
      long p = ((i % (2 * n)) + 2 * n) % (2 * n);
      return p >= n ? 2 * n - 1 - p : p;
    }
  }
  return 0;
}

/// The host texture read: per axis the taps (texel, weight), then the weighted sum over
/// every combination. Texel coordinates are computed in float as the kernel does, so
/// both floor the same value.
template <size_t Dim> std::vector<double> host_read(const std::vector<double>& texels, const Shape& shape,
                                                    const std::array<float, Dim>& pos, Filter filter, WrapMode mode) {
  size_t channels = shape[Dim];
  std::array<std::vector<std::pair<long, double>>, Dim> axes;
  for (size_t axis = 0; axis < Dim; ++axis) {
    long n = long(shape[Dim - 1 - axis]);
    if (filter == Filter::Nearest) {
      axes[axis] = {{host_wrap(long(std::floor(pos[axis] * float(n))), n, mode), 1.0}};
      continue;
    }
    float scaled = std::fma(pos[axis], float(n), -0.5f);
    long first = long(std::floor(scaled));
    double a = double(scaled - std::floor(scaled));
    if (filter == Filter::Linear) {
      axes[axis] = {{host_wrap(first, n, mode), 1 - a}, {host_wrap(first + 1, n, mode), a}};
    } else {
      double w[4] = {std::pow(1 - a, 3) / 6, (3 * a * a * a - 6 * a * a + 4) / 6,
                     (-3 * a * a * a + 3 * a * a + 3 * a + 1) / 6, a * a * a / 6};
      for (long k = 0; k < 4; ++k) axes[axis].push_back({host_wrap(first - 1 + k, n, mode), w[k]});
    }
  }
  std::vector<double> out(channels, 0.0);
  size_t count = 1;
  for (const auto& taps : axes) count *= taps.size();
  for (size_t corner = 0; corner < count; ++corner) {
    size_t index = 0, rest = corner;
    double weight = 1;
    std::array<long, Dim> texel{};
    for (size_t axis = 0; axis < Dim; ++axis) {
      const auto& tap = axes[axis][rest % axes[axis].size()];
      rest /= axes[axis].size();
      texel[axis] = tap.first;
      weight *= tap.second;
    }
    for (size_t axis = Dim; axis-- > 0;) index = index * shape[Dim - 1 - axis] + size_t(texel[axis]);
    for (size_t c = 0; c < channels; ++c) out[c] += weight * texels[index * channels + c];
  }
  return out;
}

template <typename T, size_t Dim>
typename Texture<T, Dim>::Position upload_positions(const std::array<std::vector<float>, Dim>& pos) {
  using V = typename T::Value;
  auto axis = [&](size_t d) { return T::from(std::vector<V>(pos[d].begin(), pos[d].end())); };
  if constexpr (Dim == 1)
    return axis(0);
  else {
    typename Texture<T, Dim>::Position p;
    for (size_t d = 0; d < Dim; ++d) p[d] = axis(d);
    return p;
  }
}

/// Random positions in [-1.5, 2.5] (outside the texture on both sides), then the edge
/// cases 0 and 1 and exact texel centers on every axis.
template <size_t Dim> std::array<std::vector<float>, Dim> test_positions(const Shape& shape, uint32_t seed) {
  std::array<std::vector<float>, Dim> pos;
  for (size_t d = 0; d < Dim; ++d) {
    for (double x : random_values(61, seed + uint32_t(d), -1.5, 2.5)) pos[d].push_back(float(x));
    float n = float(shape[Dim - 1 - d]);
    for (float x : {0.f, 1.f, -0.f, 0.5f / n, 1.5f / n, 1.f - 0.5f / n, -1.f, 2.f}) pos[d].push_back(x);
  }
  return pos;
}

template <size_t Dim> void expect_matches_host(const Shape& shape) {
  size_t count = 1;
  for (size_t e : shape) count *= e;
  std::vector<double> texels = random_values(count, 11, -1, 1);
  Tensor<float> tensor(Float::from(std::vector<float>(texels.begin(), texels.end())), shape);
  for (double& t : texels) t = double(float(t));
  auto pos = test_positions<Dim>(shape, 3);
  auto positions = upload_positions<Float, Dim>(pos);
  for (WrapMode mode : {WrapMode::Repeat, WrapMode::Clamp, WrapMode::Mirror}) {
    for (Filter filter : {Filter::Nearest, Filter::Linear, Filter::Cubic}) {
      Texture<Float, Dim> texture(tensor, filter == Filter::Nearest ? FilterMode::Nearest : FilterMode::Linear, mode);
      std::vector<Float> out = filter == Filter::Cubic ? texture.eval_cubic(positions) : texture.eval(positions);
      ASSERT_EQ(out.size(), shape[Dim]);
      for (size_t i = 0; i < pos[0].size(); ++i) {
        std::array<float, Dim> p;
        for (size_t d = 0; d < Dim; ++d) p[d] = pos[d][i];
        std::vector<double> want = host_read<Dim>(texels, shape, p, filter, mode);
        for (size_t c = 0; c < want.size(); ++c)
          ASSERT_NEAR(out[c].read(i), want[c], 2e-6)
              << Dim << "-D, wrap " << int(mode) << ", filter " << int(filter) << ", lane " << i << ", channel " << c;
      }
    }
  }
}

TEST(Texture, OneDimensionalMatchesHost) { expect_matches_host<1>({7, 2}); }
TEST(Texture, TwoDimensionalMatchesHost) { expect_matches_host<2>({5, 4, 3}); }
TEST(Texture, ThreeDimensionalMatchesHost) { expect_matches_host<3>({3, 4, 2, 1}); }

TEST(Texture, TexelCentersReturnTexelsExactly) {
  Texture2f texture(TensorXf(Float({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}), {2, 3, 1}));
  Array2f centers(Float({0.5f / 3, 1.5f / 3, 2.5f / 3, 0.5f / 3}), Float({0.25f, 0.25f, 0.25f, 0.75f}));
  EXPECT_EQ(texture.eval(centers)[0].to_vector(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
}

TEST(Texture, NonFiniteAndInactiveLanes) {
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (FilterMode filter : {FilterMode::Nearest, FilterMode::Linear}) {
    Texture1f texture(TensorXf(Float({1.f, 2.f, 3.f}), {3, 1}), filter, WrapMode::Repeat);
    Float pos({nan, inf, -inf, 1e30f, -1e30f, 0.5f});
    Bool active({true, true, true, true, true, false});
    std::vector<float> plain = texture.eval(pos, active)[0].to_vector();
    std::vector<float> cubic = texture.eval_cubic(pos, active)[0].to_vector();
    for (const auto& out : {plain, cubic}) {
      for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(out[i])) << "lane " << i;
      for (size_t i = 3; i < 5; ++i) EXPECT_TRUE(std::isfinite(out[i]) && out[i] >= 1.f && out[i] <= 3.f) << i;
      EXPECT_EQ(out[5], 0.f) << "inactive lane";
    }
  }
  Texture1f clamped(TensorXf(Float({1.f, 2.f, 3.f}), {3, 1}), FilterMode::Linear, WrapMode::Clamp);
  EXPECT_EQ(clamped.eval(Float({1e30f, -1e30f}))[0].to_vector(), (std::vector<float>{3.f, 1.f}));
}

TEST(Texture, ShapeValueAndSetters) {
  Texture3f zeros({2, 3, 4}, 5, FilterMode::Nearest, WrapMode::Mirror);
  EXPECT_EQ(zeros.shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(zeros.channels(), 5u);
  EXPECT_EQ(zeros.filter_mode(), FilterMode::Nearest);
  EXPECT_EQ(zeros.wrap_mode(), WrapMode::Mirror);
  EXPECT_EQ(sum(zeros.value()).item(), 0.f);
  Texture1f texture({2}, 1);
  texture.set_value(Float({4.f, 8.f}));
  EXPECT_EQ(texture.eval(Float(0.5f))[0].item(), 6.f);
  texture.set_tensor(TensorXf(Float({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}), {3, 2}));
  EXPECT_EQ(texture.shape(), (Shape{3, 2}));
  EXPECT_EQ(texture.tensor().to_vector(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Texture, BadShapesAndValuesRaise) {
  EXPECT_THROW(Texture2f(TensorXf(zeros<Float>(6), {6})), ValueError);        // too few axes
  EXPECT_THROW(Texture1f(TensorXf(zeros<Float>(6), {1, 2, 3})), ValueError);  // too many
  EXPECT_THROW(Texture2f(std::array<size_t, 2>{0, 3}, 1), ValueError);        // zero resolution
  EXPECT_THROW(Texture2f(std::array<size_t, 2>{2, 3}, 0), ValueError);        // no channels
  EXPECT_THROW(Texture1f(std::array<size_t, 1>{(size_t(1) << 30) + 1}, 1), SizeError);
  EXPECT_THROW(Texture2f(std::array<size_t, 2>{size_t(1) << 17, size_t(1) << 17}, 1), SizeError);  // 2^34 texels
  EXPECT_THROW(Texture2f{TensorXf()}, ValueError);                                                 // an empty tensor
  Texture2f texture({2, 2}, 3);
  try {
    texture.set_value(zeros<Float>(11));
    FAIL() << "set_value with the wrong number of texels did not raise";
  } catch (const SizeError& e) {
    EXPECT_NE(std::string(e.what()).find("11 elements given for a texture of shape (2, 2, 3) (12 elements)"),
              std::string::npos)
        << e.what();
  }
  try {
    texture.eval(Array2f(Float({0.1f, 0.2f, 0.3f}), Float({0.1f, 0.2f})));
    FAIL() << "coordinates of different sizes did not raise";
  } catch (const SizeError& e) {
    EXPECT_NE(std::string(e.what()).find("Texture2f.eval(): the coordinates have 3, 2 lanes and the mask 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(texture.eval_cubic(Array2f(Float({0.1f, 0.2f}), Float(0.5f)), Bool({true, false, true})), SizeError);
  try {
    texture.set_tensor(TensorXf(zeros<Float>(4)));
    FAIL() << "set_tensor with a 1-D tensor did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(height, width, channels)"), std::string::npos) << e.what();
  }
}

// ---- gradients ------------------------------------------------------------------------------

template <size_t Dim> void expect_gradients(const Shape& shape, FilterMode filter, WrapMode mode, bool cubic) {
  size_t count = 1;
  for (size_t e : shape) count *= e;
  Float64 texels = Float64::from(random_values(count, 5, -1, 1));
  typename Texture<Float64, Dim>::Position pos;
  if constexpr (Dim == 1)
    pos = Float64::from(random_values(9, 6, -0.4, 1.4));
  else
    for (size_t d = 0; d < Dim; ++d) pos[d] = Float64::from(random_values(9, 6 + uint32_t(d), -0.4, 1.4));
  auto f = [&](const Float64& texels, const typename Texture<Float64, Dim>::Position& pos) {
    Texture<Float64, Dim> texture(TensorXd(texels, shape), filter, mode);
    std::vector<Float64> out = cubic ? texture.eval_cubic(pos) : texture.eval(pos);
    return std::tuple(out[0], out[1]);
  };
  GradCheckResult both = check_grads(f, std::tuple(texels, pos));
  EXPECT_TRUE(both.ok) << Dim << "-D: " << both.message;
}

TEST(TextureGrad, LinearTexelsAndPositions) {
  expect_gradients<1>({5, 2}, FilterMode::Linear, WrapMode::Repeat, false);
  expect_gradients<2>({4, 3, 2}, FilterMode::Linear, WrapMode::Mirror, false);
  expect_gradients<3>({3, 2, 3, 2}, FilterMode::Linear, WrapMode::Clamp, false);
}
TEST(TextureGrad, CubicTexelsAndPositions) {
  expect_gradients<2>({4, 3, 2}, FilterMode::Linear, WrapMode::Repeat, true);
  expect_gradients<3>({3, 2, 3, 2}, FilterMode::Nearest, WrapMode::Mirror, true);
}
TEST(TextureGrad, NearestTexels) {
  // positions select texels (zero derivative almost everywhere): differentiate the texels
  Float64 texels = Float64::from(random_values(12, 7, -1, 1));
  Array2<Float64> pos(Float64::from(random_values(9, 8, -0.4, 1.4)), Float64::from(random_values(9, 9, -0.4, 1.4)));
  auto f = [&](const Float64& texels) {
    return Texture2f64(TensorXd(texels, {3, 2, 2}), FilterMode::Nearest, WrapMode::Repeat).eval(pos)[1];
  };
  GradCheckResult result = check_grads(f, texels);
  EXPECT_TRUE(result.ok) << result.message;
}

TEST(TextureGrad, NonFiniteLanesLeaveTexelGradientsFinite) {
  Texture1f64 texture(TensorXd(Float64({1.0, 2.0, 3.0}), {3, 1}));
  enable_grad(texture);
  Float64 pos({0.4, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()});
  enable_grad(pos);
  backward(sum(texture.eval(pos)[0] * Float64({1.0, 0.0, 0.0})));
  std::vector<double> g = grad(texture).value().to_vector();
  for (double x : g) EXPECT_TRUE(std::isfinite(x));
  EXPECT_NEAR(g[0] + g[1] + g[2], 1.0, 1e-12);               // lane 0's weights
  EXPECT_NEAR(grad(pos).read(0), 3.0 * (2.0 - 1.0), 1e-12);  // resolution times the slope
}

}  // namespace
