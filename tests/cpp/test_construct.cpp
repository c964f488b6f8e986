// Construction and shape helpers (construct.h): ones, full/zeros/ones/empty of vectors and
// matrices, repeat, tile, meshgrid (both indexings, against NumPy's layout computed on the
// host), ravel/unravel, width and shape.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <vector>

using namespace kiln;

namespace {

TEST(Construct, OnesAndCompositeConstructors) {
  EXPECT_EQ(ones<Float>(3).to_vector(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(ones<Int64>().to_vector(), (std::vector<int64_t>{1}));
  Array3f z = zeros<Array3f>(4);
  EXPECT_EQ(width(z), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(z[i].to_vector(), (std::vector<float>(4, 0.f)));
  Array2u f = full<Array2u>(7u, 2);
  EXPECT_EQ(f.y.to_vector(), (std::vector<uint32_t>{7, 7}));
  Matrix3f m = ones<Matrix3f>(5);
  EXPECT_EQ(m(2, 1).to_vector(), (std::vector<float>(5, 1.f)));
  Array4f e = empty<Array4f>(6);
  EXPECT_EQ(e.w.size(), 6u);
}

TEST(Construct, RepeatAndTileAsNumPy) {
  Int32 a = Int32{4, -1, 9};
  EXPECT_EQ(repeat(a, 2).to_vector(), (std::vector<int32_t>{4, 4, -1, -1, 9, 9}));
  EXPECT_EQ(tile(a, 2).to_vector(), (std::vector<int32_t>{4, -1, 9, 4, -1, 9}));
  EXPECT_EQ(repeat(a, 0).size(), 0u);
  EXPECT_EQ(tile(a, 1).to_vector(), a.to_vector());
}

/// NumPy's meshgrid(*axes, indexing) flattened, computed on the host.
std::vector<std::vector<float>> host_meshgrid(const std::vector<std::vector<float>>& axes, bool ij) {
  size_t k = axes.size();
  std::vector<size_t> order(k);
  for (size_t i = 0; i < k; ++i) order[i] = i;
  if (!ij && k >= 2) std::swap(order[0], order[1]);
  size_t total = 1;
  for (const auto& a : axes) total *= a.size();
  std::vector<std::vector<float>> out(k);
  for (size_t point = 0; point < total; ++point) {
    size_t rest = point;
    std::vector<size_t> index(k);
    for (size_t j = k; j-- > 0;) {
      index[order[j]] = rest % axes[order[j]].size();
      rest /= axes[order[j]].size();
    }
    for (size_t a = 0; a < k; ++a) out[a].push_back(axes[a][index[a]]);
  }
  return out;
}

TEST(Construct, MeshgridMatchesNumPyLayout) {
  std::vector<float> xs = {0, 1, 2}, ys = {10, 20}, zs = {-1, -2, -3, -4};
  for (bool ij : {false, true}) {
    auto [gx, gy] = meshgrid(Float::from(xs), Float::from(ys), ij);
    auto expected = host_meshgrid({xs, ys}, ij);
    EXPECT_EQ(gx.to_vector(), expected[0]) << (ij ? "ij" : "xy");
    EXPECT_EQ(gy.to_vector(), expected[1]) << (ij ? "ij" : "xy");
    auto [hx, hy, hz] = meshgrid(Float::from(xs), Float::from(ys), Float::from(zs), ij);
    auto expected3 = host_meshgrid({xs, ys, zs}, ij);
    EXPECT_EQ(hx.to_vector(), expected3[0]);
    EXPECT_EQ(hy.to_vector(), expected3[1]);
    EXPECT_EQ(hz.to_vector(), expected3[2]);
  }
  // "xy": x varies fastest, as numpy.meshgrid(x, y)[0].ravel() = [0, 1, 2, 0, 1, 2].
  auto [gx, gy] = meshgrid(Float::from(xs), Float::from(ys));
  EXPECT_EQ(gx.to_vector(), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(gy.to_vector(), (std::vector<float>{10, 10, 10, 20, 20, 20}));
}

TEST(Construct, RavelUnravelWidthShape) {
  Array3f v(Float{1, 2}, Float{3, 4}, Float{5, 6});
  Float flat = ravel(v);
  EXPECT_EQ(flat.to_vector(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  Array3f back = unravel<Array3f>(flat);
  EXPECT_EQ(back.z.to_vector(), (std::vector<float>{5, 6}));
  EXPECT_EQ(ravel(Float{1, 2}).to_vector(), (std::vector<float>{1, 2}));
  EXPECT_EQ(shape(v), (std::vector<size_t>{3, 2}));
  EXPECT_EQ(shape(Float{1, 2, 3}), (std::vector<size_t>{3}));
  EXPECT_EQ(shape(Matrix2f::identity()), (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(width(Array2f(Float{1, 2, 3}, Float(0.f))), 3u);
  EXPECT_THROW(unravel<Array3f>(Float{1, 2}), SizeError);
}

}  // namespace
