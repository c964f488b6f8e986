// Tensor<T> (tensor.h, src/tensor/): shapes and data movement (reshape, slice, operator[],
// broadcasting, transpose, concatenate), reductions along an axis (each of the three paths
// of sum(): block sums, one GEMM for the leading axis, a permute for a middle axis), cumsum
// in double precision, matmul through OpenBLAS; every value against a host reference, the
// derivatives with check_grads() in both modes, and each misuse's error.
#include "autodiff_test_support.h"

#include <kiln/tensor.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::expect_error;

namespace {

size_t count_of(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), size_t(1), std::multiplies<>());
}

/// Distinct, reproducible values: lane i is a golden-ratio step from `phase`, in [-1, 1].
template <typename T> std::vector<T> values(size_t n, double phase = 0) {
  std::vector<T> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = T(2 * std::fmod(phase + 0.6180339887498949 * double(i), 1.0) - 1);
  return out;
}
template <typename T> Tensor<T> tensor(const Shape& shape, double phase = 0) {
  std::vector<T> v = values<T>(count_of(shape), phase);
  return Tensor<T>::from(v.data(), shape);
}
/// Integers 0, 1, 2, ... with `shape`.
TensorXi iota(const Shape& shape) { return TensorXi(arange<Int32>(count_of(shape)), shape); }

/// Row-major flat position of `index` in `shape`.
size_t flat(const Shape& shape, const std::vector<size_t>& index) {
  size_t p = 0;
  for (size_t k = 0; k < shape.size(); ++k) p = p * shape[k] + index[k];
  return p;
}
/// Calls f(index) for every index of `shape`, in row-major order.
template <typename F> void for_each_index(const Shape& shape, F&& f) {
  std::vector<size_t> index(shape.size(), 0);
  for (size_t n = count_of(shape); n-- > 0;) {
    f(index);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

template <typename T> void expect_near_all(const std::vector<T>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(double(got[i]), want[i], tol * std::fmax(1.0, std::fabs(want[i]))) << "element " << i;
}

size_t library_calls(const std::vector<KernelLaunch>& history, const std::string& needle = "") {
  size_t n = 0;
  for (const KernelLaunch& k : history)
    if (k.source == KernelSource::Library && k.reason.find(needle) != std::string::npos) ++n;
  return n;
}

class TensorValues : public AutodiffTest {};
class TensorGrads : public AutodiffTest {};
class TensorErrors : public AutodiffTest {};

// ---- shapes and data movement --------------------------------------------------------------

TEST_F(TensorValues, ConstructionAndShape) {
  TensorXf t = tensor<float>({2, 3, 4});
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.ndim(), 3u);
  EXPECT_EQ(t.size(), 24u);
  EXPECT_EQ(t.shape(-1), 4u);
  EXPECT_EQ(t.shape(0), 2u);
  EXPECT_EQ(t.to_vector(), values<float>(24));
  // A one-lane array fills the shape.
  EXPECT_EQ(TensorXf(Float(2.5f), Shape{2, 2}).to_vector(), std::vector<float>(4, 2.5f));
  EXPECT_EQ(TensorXd::full(1.5, {3}).to_vector(), std::vector<double>(3, 1.5));
  EXPECT_EQ(TensorXu::zeros({2, 2}).to_vector(), std::vector<uint32_t>(4, 0u));
  EXPECT_EQ(TensorXi(arange<Int32>(5)).shape(), (Shape{5}));
  EXPECT_EQ(detail::shape_string({2, 3}), "(2, 3)");
  EXPECT_EQ(detail::shape_string({7}), "(7,)");
}

TEST_F(TensorValues, ReshapeKeepsElements) {
  TensorXi t = iota({2, 3, 4});
  TensorXi flat1 = t.reshape({-1});
  EXPECT_EQ(flat1.shape(), (Shape{24}));
  EXPECT_EQ(flat1.to_vector(), t.to_vector());
  TensorXi m = t.reshape({4, -1});
  EXPECT_EQ(m.shape(), (Shape{4, 6}));
  EXPECT_EQ(m.to_vector(), t.to_vector());
  EXPECT_EQ(t.reshape({-1, 1, 2}).shape(), (Shape{12, 1, 2}));
}

TEST_F(TensorValues, SliceAlongEachAxisWithPositiveAndNegativeSteps) {
  Shape shape{5, 4};
  TensorXi t = iota(shape);
  auto check = [&](int64_t axis, int64_t start, int64_t stop, int64_t step, std::vector<int64_t> picks) {
    SCOPED_TRACE("slice(" + std::to_string(axis) + ", " + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                 std::to_string(step) + ")");
    TensorXi s = t.slice(axis, start, stop, step);
    size_t a = axis < 0 ? size_t(axis + 2) : size_t(axis);
    Shape want_shape = shape;
    want_shape[a] = picks.size();
    ASSERT_EQ(s.shape(), want_shape);
    std::vector<int32_t> want;
    for_each_index(want_shape, [&](const std::vector<size_t>& i) {
      std::vector<size_t> source = i;
      source[a] = size_t(picks[i[a]]);
      want.push_back(int32_t(flat(shape, source)));
    });
    EXPECT_EQ(s.to_vector(), want);
  };
  check(0, 1, 4, 1, {1, 2, 3});
  check(0, 0, 5, 2, {0, 2, 4});
  check(1, 1, 100, 1, {1, 2, 3});         // stop clamped
  check(1, -3, -1, 1, {1, 2});            // negative positions
  check(0, 4, 0, -2, {4, 2});             // negative step
  check(0, -1, -6, -1, {4, 3, 2, 1, 0});  // the whole axis reversed (same shape)
  check(-1, -1, -100, -1, {3, 2, 1, 0});
  check(1, 3, 0, -1, {3, 2, 1});
  check(1, 2, 2, 1, {});  // empty
}

TEST_F(TensorValues, IndexTheLeadingAxis) {
  Shape shape{3, 2, 4};
  TensorXi t = iota(shape);
  for (int64_t i : {0, 1, 2, -1, -3}) {
    TensorXi row = t[i];
    EXPECT_EQ(row.shape(), (Shape{2, 4}));
    size_t first = size_t(i < 0 ? i + 3 : i) * 8;
    std::vector<int32_t> want(8);
    std::iota(want.begin(), want.end(), int32_t(first));
    EXPECT_EQ(row.to_vector(), want) << "index " << i;
  }
  EXPECT_EQ(t[1][0].shape(), (Shape{4}));
  EXPECT_EQ(t[1][1].to_vector(), (std::vector<int32_t>{12, 13, 14, 15}));
  EXPECT_EQ(t[2][1][3].shape(), Shape{});
  EXPECT_EQ(t[2][1][3].to_vector(), std::vector<int32_t>{23});
}

TEST_F(TensorValues, BroadcastingOperators) {
  Shape sa{4, 1, 3}, sb{2, 1}, out{4, 2, 3};
  TensorXf a = tensor<float>(sa, 0.1), b = tensor<float>(sb, 0.4);
  std::vector<float> ha = a.to_vector(), hb = b.to_vector();
  TensorXf sum_ab = a + b, diff_ba = b - a, product = a * b;
  ASSERT_EQ(sum_ab.shape(), out);
  ASSERT_EQ(diff_ba.shape(), out);
  std::vector<double> want_sum, want_diff, want_product;
  for_each_index(out, [&](const std::vector<size_t>& i) {
    float x = ha[flat(sa, {i[0], 0, i[2]})], y = hb[flat(sb, {i[1], 0})];
    want_sum.push_back(x + y);
    want_diff.push_back(y - x);
    want_product.push_back(x * y);
  });
  expect_near_all(sum_ab.to_vector(), want_sum, 1e-6);
  expect_near_all(diff_ba.to_vector(), want_diff, 1e-6);
  expect_near_all(product.to_vector(), want_product, 1e-6);

  // Scalars on either side, a (3,) bias over a (2, 3) matrix, comparisons into a TensorXb.
  TensorXd m = tensor<double>({2, 3}, 0.2), bias = tensor<double>({3}, 0.7);
  std::vector<double> hm = m.to_vector(), hbias = bias.to_vector(), want_bias, want_scaled;
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < 3; ++c) {
      want_bias.push_back(hm[r * 3 + c] + hbias[c]);
      want_scaled.push_back(2.0 - hm[r * 3 + c] * 3.0);
    }
  expect_near_all((m + bias).to_vector(), want_bias, 1e-12);
  expect_near_all((2.0 - m * 3.0).to_vector(), want_scaled, 1e-12);
  TensorXb positive = m > 0.0;
  EXPECT_EQ(positive.shape(), (Shape{2, 3}));
  TensorXd clipped = select(positive, m, TensorXd::zeros({}));
  std::vector<double> want_clipped;
  for (double x : hm) want_clipped.push_back(x > 0 ? x : 0);
  expect_near_all(clipped.to_vector(), want_clipped, 0);

  // broadcast_to: new leading axes and repeated unit axes.
  TensorXi col = iota({3, 1});
  TensorXi wide = col.broadcast_to({2, 3, 4});
  ASSERT_EQ(wide.shape(), (Shape{2, 3, 4}));
  std::vector<int32_t> want_wide;
  for_each_index(Shape{2, 3, 4}, [&](const std::vector<size_t>& i) { want_wide.push_back(int32_t(i[1])); });
  EXPECT_EQ(wide.to_vector(), want_wide);
}

// A one-element tensor made by data movement (its index map is a one-lane counter) keeps
// its value when it is broadcast.
TEST_F(TensorValues, OneElementSliceBroadcasts) {
  TensorXi t = iota({3}) * 10;
  EXPECT_EQ(t.slice(0, 2, 3).broadcast_to({4}).to_vector(), std::vector<int32_t>(4, 20));
  EXPECT_EQ((t[1] + TensorXi::zeros({2, 2})).to_vector(), std::vector<int32_t>(4, 10));
  TensorXf f = tensor<float>({2, 3});
  std::vector<float> h = f.to_vector();
  TensorXf corner = f.slice(0, 1, 2).slice(1, 2, 3);  // (1, 1)
  EXPECT_EQ(corner.broadcast_to({2, 3}).to_vector(), std::vector<float>(6, h[5]));
}

TEST_F(TensorValues, Transpose) {
  Shape shape{2, 3, 4};
  TensorXi t = iota(shape);
  TensorXi p = t.transpose({2, 0, 1});
  ASSERT_EQ(p.shape(), (Shape{4, 2, 3}));
  std::vector<int32_t> want;
  for_each_index(p.shape(),
                 [&](const std::vector<size_t>& i) { want.push_back(int32_t(flat(shape, {i[1], i[2], i[0]}))); });
  EXPECT_EQ(p.to_vector(), want);
  // Default: axes reversed (the matrix transpose).
  TensorXi m = iota({3, 5}), mt = m.transpose();
  ASSERT_EQ(mt.shape(), (Shape{5, 3}));
  std::vector<int32_t> want_t;
  for (size_t r = 0; r < 5; ++r)
    for (size_t c = 0; c < 3; ++c) want_t.push_back(int32_t(c * 5 + r));
  EXPECT_EQ(mt.to_vector(), want_t);
  EXPECT_EQ(mt.transpose().to_vector(), m.to_vector());
}

TEST_F(TensorValues, ConcatenateAlongAxisZeroAndOne) {
  TensorXi a = iota({2, 3}), b = iota({1, 3}) + 100, c = iota({2, 2}) + 200, d = iota({2, 1}) + 300;
  TensorXi rows = concatenate<int32_t>({a, b}, 0);
  ASSERT_EQ(rows.shape(), (Shape{3, 3}));
  EXPECT_EQ(rows.to_vector(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 100, 101, 102}));
  TensorXi cols = concatenate<int32_t>({a, c, d}, 1);
  ASSERT_EQ(cols.shape(), (Shape{2, 6}));
  EXPECT_EQ(cols.to_vector(), (std::vector<int32_t>{0, 1, 2, 200, 201, 300, 3, 4, 5, 202, 203, 301}));
  EXPECT_EQ(concatenate<int32_t>({a, c}, -1).shape(), (Shape{2, 5}));
  TensorXf fa = tensor<float>({2, 2, 2}, 0.3), fb = tensor<float>({2, 1, 2}, 0.6);
  TensorXf mid = concatenate<float>({fa, fb}, 1);
  ASSERT_EQ(mid.shape(), (Shape{2, 3, 2}));
  std::vector<float> ha = fa.to_vector(), hb = fb.to_vector(), got = mid.to_vector();
  for_each_index(mid.shape(), [&](const std::vector<size_t>& i) {
    float want = i[1] < 2 ? ha[flat({2, 2, 2}, i)] : hb[flat({2, 1, 2}, {i[0], 0, i[2]})];
    EXPECT_EQ(got[flat(mid.shape(), i)], want);
  });
}

// ---- reductions ------------------------------------------------------------------------------

/// sum() and mean() along each axis of a (3, 4, 5) tensor against host sums.
template <typename T> void check_axis_sums(double tol) {
  Shape shape{3, 4, 5};
  Tensor<T> t = tensor<T>(shape, 0.25);
  std::vector<T> h = t.to_vector();
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    size_t a = size_t(axis < 0 ? axis + 3 : axis);
    Shape out = shape;
    out.erase(out.begin() + a);
    std::vector<double> want(count_of(out), 0.0);
    for_each_index(shape, [&](const std::vector<size_t>& i) {
      std::vector<size_t> o = i;
      o.erase(o.begin() + a);
      want[flat(out, o)] += double(h[flat(shape, i)]);
    });
    Tensor<T> s = sum(t, axis), m = mean(t, axis);
    ASSERT_EQ(s.shape(), out);
    ASSERT_EQ(m.shape(), out);
    expect_near_all(s.to_vector(), want, tol);
    for (double& w : want) w /= double(shape[a]);
    expect_near_all(m.to_vector(), want, tol);
  }
  double total = 0;
  for (T x : h) total += double(x);
  EXPECT_EQ(sum(t).shape(), Shape{});
  EXPECT_NEAR(double(sum(t).to_vector()[0]), total, tol * 10);
  EXPECT_NEAR(double(mean(t).to_vector()[0]), total / 60, tol);
}

TEST_F(TensorValues, SumAndMeanAlongEachAxisFloat) { check_axis_sums<float>(1e-5); }
TEST_F(TensorValues, SumAndMeanAlongEachAxisDouble) { check_axis_sums<double>(1e-12); }

TEST_F(TensorValues, SumPathsLeadingAxisIsOneGemm) {
  TensorXf t = tensor<float>({6, 7, 2});
  kernel_history(/*clear=*/true);
  sum(t, 0).to_vector();  // outer extent 1: the (6 × 14) matrix, transposed, times a column of ones
  EXPECT_EQ(library_calls(kernel_history(), "matmul 14×6ᵀ · 6×1"), 1u);
  kernel_history(true);
  sum(t, 1).to_vector();  // a middle axis: permuted to the end, then block sums
  sum(t, 2).to_vector();  // the last axis: block sums
  EXPECT_EQ(library_calls(kernel_history()), 0u);
  // Integer tensors never take the GEMM path.
  TensorXi i = iota({6, 7, 2});
  kernel_history(true);
  std::vector<int32_t> s = sum(i, 0).to_vector();
  EXPECT_EQ(library_calls(kernel_history()), 0u);
  ASSERT_EQ(s.size(), 14u);
  for (size_t k = 0; k < 14; ++k) {
    int32_t want = 0;
    for (size_t r = 0; r < 6; ++r) want += int32_t(r * 14 + k);
    EXPECT_EQ(s[k], want);
  }
  // Axes of extent 1 disappear without any work.
  EXPECT_EQ(sum(tensor<float>({1, 3}), 0).to_vector(), values<float>(3));
}

TEST_F(TensorValues, CumsumLongRowsInDoublePrecision) {
  size_t rows = 3, length = 1000;
  std::vector<float> h(rows * length);
  for (size_t i = 0; i < h.size(); ++i) h[i] = 0.1f + float(std::fmod(0.6180339887498949 * double(i), 1.0));
  TensorXf t = TensorXf::from(h.data(), {rows, length});
  for (bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
    TensorXf c = cumsum(t, exclusive);
    ASSERT_EQ(c.shape(), t.shape());
    std::vector<float> got = c.to_vector();
    for (size_t r = 0; r < rows; ++r) {
      double running = 0;
      for (size_t j = 0; j < length; ++j) {
        double before = running;
        running += double(h[r * length + j]);
        double want = exclusive ? before : running;
        // Accumulated in double: the only error is the final rounding to float.
        ASSERT_NEAR(double(got[r * length + j]), want, 1.5e-7 * std::fabs(want) + 1e-30)
            << "row " << r << " entry " << j;
      }
    }
  }
  // 1-D and double tensors; the first exclusive entry of each row is 0.
  TensorXd d = tensor<double>({2, 4}, 0.5);
  std::vector<double> hd = d.to_vector(), inc = cumsum(d).to_vector(), exc = cumsum(d, true).to_vector();
  for (size_t r = 0; r < 2; ++r) {
    double s = 0;
    EXPECT_EQ(exc[r * 4], 0.0);
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(exc[r * 4 + j], s, 1e-14);
      s += hd[r * 4 + j];
      EXPECT_NEAR(inc[r * 4 + j], s, 1e-14);
    }
  }
  TensorXf one = TensorXf::from(h.data(), {5});
  std::vector<float> c1 = cumsum(one).to_vector();
  float s = 0;
  for (size_t j = 0; j < 5; ++j) EXPECT_NEAR(c1[j], s += h[j], 1e-6);
}

// ---- matmul ----------------------------------------------------------------------------------

template <typename T>
std::vector<double> naive_product(const std::vector<T>& a, const std::vector<T>& b, size_t m, size_t k, size_t n) {
  std::vector<double> c(m * n, 0.0);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t l = 0; l < k; ++l) c[i * n + j] += double(a[i * k + l]) * double(b[l * n + j]);
  return c;
}

TEST_F(TensorValues, MatmulFloatMatchesNaiveLoops) {
  TensorXf a = tensor<float>({5, 7}, 0.1), b = tensor<float>({7, 3}, 0.5);
  TensorXf c = matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{5, 3}));
  expect_near_all(c.to_vector(), naive_product(a.to_vector(), b.to_vector(), 5, 7, 3), 1e-5);
}

TEST_F(TensorValues, MatmulDoubleMatchesNaiveLoops) {
  TensorXd a = tensor<double>({4, 6}, 0.2), b = tensor<double>({6, 9}, 0.9);
  TensorXd c = matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{4, 9}));
  expect_near_all(c.to_vector(), naive_product(a.to_vector(), b.to_vector(), 4, 6, 9), 1e-13);
  // Leading axes of the first operand are rows: (2, 3, 4) · (4, 5) -> (2, 3, 5).
  TensorXd a3 = tensor<double>({2, 3, 4}, 0.3), b2 = tensor<double>({4, 5}, 0.8);
  TensorXd c3 = matmul(a3, b2);
  ASSERT_EQ(c3.shape(), (Shape{2, 3, 5}));
  expect_near_all(c3.to_vector(), naive_product(a3.to_vector(), b2.to_vector(), 6, 4, 5), 1e-13);
  // Traced (unevaluated) operands are evaluated first.
  TensorXd lazy = matmul(a * 2.0 + 1.0, b);
  std::vector<double> ha = a.to_vector();
  for (double& x : ha) x = x * 2 + 1;
  expect_near_all(lazy.to_vector(), naive_product(ha, b.to_vector(), 4, 6, 9), 1e-13);
}

/// Products tall enough to be split over threads (blocks of 4096 rows, src/tensor/matmul.cpp):
/// rows of the result in parallel, and the sum over rows of a weight gradient (Aᵀ·G) as
/// partial products added up. Both directions of a product's derivative take these paths.
TEST_F(TensorValues, TallProductsAndTheirGradientsMatchNaiveLoops) {
  const size_t m = 10003, k = 5, n = 3;
  TensorXd a = tensor<double>({m, k}, 0.4), b = tensor<double>({k, n}, 0.7), g = tensor<double>({m, n}, 0.2);
  std::vector<double> ha = a.to_vector(), hb = b.to_vector(), hg = g.to_vector();
  expect_near_all(matmul(a, b).to_vector(), naive_product(ha, hb, m, k, n), 1e-12);
  enable_grad(a, b);
  backward(sum(matmul(a, b) * g).array());
  std::vector<double> da(m * k, 0.0), db(k * n, 0.0);  // G·Bᵀ and Aᵀ·G
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t l = 0; l < k; ++l) {
        da[i * k + l] += hg[i * n + j] * hb[l * n + j];
        db[l * n + j] += ha[i * k + l] * hg[i * n + j];
      }
  expect_near_all(grad(a).to_vector(), da, 1e-12);
  expect_near_all(grad(b).to_vector(), db, 1e-12);
}

TEST_F(TensorValues, MatmulIsALibraryCallInKernelHistory) {
  TensorXf a = tensor<float>({5, 7}), b = tensor<float>({7, 3});
  eval(a, b);
  kernel_history(/*clear=*/true);
  TensorXf c = matmul(a, b);
  std::vector<KernelLaunch> history = kernel_history();
  ASSERT_EQ(library_calls(history), 1u);
  const KernelLaunch* call = nullptr;
  for (const KernelLaunch& k : history)
    if (k.source == KernelSource::Library) call = &k;
  ASSERT_NE(call, nullptr);
  EXPECT_NE(call->reason.find("matmul 5×7 · 7×3"), std::string::npos) << call->reason;
  EXPECT_NE(call->reason.find("sgemm"), std::string::npos) << call->reason;
  EXPECT_EQ(call->size, 15u);
  EXPECT_STREQ(source_name(call->source), "library");
  TensorXd d = matmul(tensor<double>({2, 2}), tensor<double>({2, 2}));
  history = kernel_history();
  EXPECT_NE(history.back().reason.find("dgemm"), std::string::npos) << history.back().reason;
}

// ---- gradients -------------------------------------------------------------------------------

TEST_F(TensorGrads, Matmul) {
  auto f = [](const TensorXd& a, const TensorXd& b) { return matmul(a, b); };
  KILN_EXPECT_GRADS(check_grads(f, std::tuple(tensor<double>({3, 4}, 0.1), tensor<double>({4, 2}, 0.6))));
  // Through nonlinear code on both sides, and a 3-D first operand.
  auto g = [](const TensorXd& a, const TensorXd& b) { return sin(matmul(a * a, exp(b))); };
  KILN_EXPECT_GRADS(check_grads(g, std::tuple(tensor<double>({2, 3, 4}, 0.2), tensor<double>({4, 5}, 0.7))));
  // Only one operand differentiated.
  TensorXd fixed = tensor<double>({4, 2}, 0.4);
  auto left = [&](const TensorXd& a) { return matmul(a, fixed); };
  KILN_EXPECT_GRADS(check_grads(left, tensor<double>({3, 4}, 0.3)));
  auto right = [&](const TensorXd& b) { return matmul(fixed.transpose(), b); };
  KILN_EXPECT_GRADS(check_grads(right, tensor<double>({4, 3}, 0.8)));
}

TEST_F(TensorGrads, BroadcastToAndBiasAdd) {
  auto bias_add = [](const TensorXd& x, const TensorXd& b) { return x * (x + b); };
  KILN_EXPECT_GRADS(check_grads(bias_add, std::tuple(tensor<double>({5, 3}, 0.1), tensor<double>({3}, 0.5))));
  auto outer = [](const TensorXd& a, const TensorXd& b) { return a * b + a; };  // (4,1,3) with (2,1)
  KILN_EXPECT_GRADS(check_grads(outer, std::tuple(tensor<double>({4, 1, 3}, 0.2), tensor<double>({2, 1}, 0.7))));
  auto explicit_to = [](const TensorXd& c) { return sin(c.broadcast_to({2, 3, 4})); };
  KILN_EXPECT_GRADS(check_grads(explicit_to, tensor<double>({3, 1}, 0.3)));
}

TEST_F(TensorGrads, SumAndMeanAlongAxes) {
  auto f = [](const TensorXd& t) {
    TensorXd sq = t * t;
    return std::tuple(sum(sq, 0), sum(sq, 1), sum(sq, 2), mean(sin(t), 1), sum(t));
  };
  KILN_EXPECT_GRADS(check_grads(f, tensor<double>({3, 4, 2}, 0.15)));
}

TEST_F(TensorGrads, Cumsum) {
  auto f = [](const TensorXd& t) { return std::tuple(cumsum(t * t), cumsum(sin(t), /*exclusive=*/true)); };
  KILN_EXPECT_GRADS(check_grads(f, tensor<double>({3, 5}, 0.35)));
  auto one_d = [](const TensorXd& t) { return exp(-cumsum(t, true)); };
  KILN_EXPECT_GRADS(check_grads(one_d, tensor<double>({7}, 0.45)));
}

TEST_F(TensorGrads, Concatenate) {
  auto f = [](const TensorXd& a, const TensorXd& b) {
    return std::tuple(concatenate<double>({a, b * b}, 1), concatenate<double>({sin(a), a * 2.0}, 0));
  };
  KILN_EXPECT_GRADS(check_grads(f, std::tuple(tensor<double>({2, 3}, 0.1), tensor<double>({2, 2}, 0.6))));
}

TEST_F(TensorGrads, SliceIndexAndTranspose) {
  auto f = [](const TensorXd& t) {
    return std::tuple(t.slice(1, 3, 0, -1) * t.slice(1, 0, 3), t[1] * t[-1], t.slice(0, 0, 5, 2).transpose() * 3.0,
                      t.reshape({-1}).slice(0, -1, -100, -1));
  };
  KILN_EXPECT_GRADS(check_grads(f, tensor<double>({4, 4}, 0.25)));
}

// ---- errors ----------------------------------------------------------------------------------

TEST_F(TensorErrors, MismatchedBroadcast) {
  TensorXf a = tensor<float>({4, 3}), b = tensor<float>({2});
  expect_error<SizeError>([&] { (void)(a + b); }, "do not broadcast");
  expect_error<SizeError>([&] { (void)a.broadcast_to({4, 2}); }, "do not broadcast");
  expect_error<SizeError>([&] { (void)a.broadcast_to({3}); }, "cannot be broadcast to");
  expect_error<SizeError>([&] { (void)select(a > 0.f, a, b); }, "select");
}

TEST_F(TensorErrors, BadReshape) {
  TensorXf t = tensor<float>({3, 4});
  expect_error<SizeError>([&] { (void)t.reshape({5, -1}); }, "cannot become");
  expect_error<SizeError>([&] { (void)t.reshape({5, 3}); }, "cannot become");
  expect_error<SizeError>([&] { (void)t.reshape({-2, 6}); }, "extents must be >= 0");
}

TEST_F(TensorErrors, AxisOutOfRange) {
  TensorXf t = tensor<float>({2, 3, 4});
  expect_error<IndexError>([&] { (void)sum(t, 3); }, "axis 3 is out of range");
  expect_error<IndexError>([&] { (void)mean(t, -4); }, "axis -4 is out of range");
  expect_error<IndexError>([&] { (void)t.slice(5, 0, 1); }, "out of range");
  expect_error<IndexError>([&] { (void)t.shape(3); }, "out of range");
  expect_error<IndexError>([&] { (void)concatenate<float>({t, t}, 3); }, "out of range");
  expect_error<IndexError>([&] { (void)t.transpose({0, 1}); }, "2 axes given");
  expect_error<IndexError>([&] { (void)t.transpose({0, 0, 1}); }, "permutation");
  expect_error<IndexError>([&] { (void)t[2]; }, "index 2 is out of range");
  expect_error<IndexError>([&] { (void)t[-3]; }, "out of range");
  expect_error<IndexError>([&] { (void)TensorXf(Float(1.f), Shape{})[0]; }, "0-d");
  expect_error<IndexError>([&] { (void)cumsum(TensorXf(Float(1.f), Shape{})); }, "0-d");
  expect_error<ValueError>([&] { (void)t.slice(0, 0, 2, 0); }, "step must not be 0");
}

TEST_F(TensorErrors, Concatenate) {
  TensorXf a = tensor<float>({2, 3}), b = tensor<float>({3, 2});
  expect_error<SizeError>([&] { (void)concatenate<float>({a, b}, 0); }, "differ outside axis 0");
  expect_error<ValueError>([&] { (void)concatenate<float>({}, 0); }, "no tensors");
}

TEST_F(TensorErrors, MatmulShapes) {
  TensorXf a = tensor<float>({3, 4}), b = tensor<float>({5, 2});
  expect_error<SizeError>([&] { (void)matmul(a, b); }, "do not chain");
  expect_error<SizeError>([&] { (void)matmul(a, tensor<float>({4})); }, "must be a matrix");
  expect_error<SizeError>([&] { (void)matmul(TensorXf(Float(1.f), Shape{}), a); }, "at least one axis");
  expect_error<SizeError>([&] { (void)matmul(a, tensor<float>({4, 2, 1})); }, "must be a matrix");
}

template <typename A, typename B>
concept Multipliable = requires(const A& a, const B& b) { matmul(a, b); };

TEST_F(TensorErrors, MatmulTypes) {
  // Integer tensors and mixed precisions do not compile...
  static_assert(Multipliable<TensorXf, TensorXf>);
  static_assert(Multipliable<TensorXd, TensorXd>);
  static_assert(!Multipliable<TensorXi, TensorXi>);
  static_assert(!Multipliable<TensorXf, TensorXd>);
  // ...and the runtime-typed entry point (what the Python binding calls) raises TypeError.
  Float a = full<Float>(1.f, 4);
  Float64 b = full<Float64>(1.0, 4);
  Int32 i = full<Int32>(1, 4);
  expect_error<TypeError>([&] { Float::steal(detail::matmul(a.operand(), b.operand(), 2, 2, 2)); }, "Float64");
  expect_error<TypeError>([&] { Int32::steal(detail::matmul(i.operand(), i.operand(), 2, 2, 2)); }, "Float or Float64");
  expect_error<SizeError>([&] { Float::steal(detail::matmul(a.operand(), a.operand(), 2, 3, 2)); }, "check the shapes");
}

TEST_F(TensorErrors, ArrayWithWrongShape) {
  expect_error<SizeError>([] { TensorXf(arange<Float>(5), Shape{2, 3}); }, "cannot have shape (2, 3)");
  expect_error<SizeError>([] { TensorXi(arange<Int32>(6), Shape{7}); }, "cannot have shape (7,)");
  expect_error<SizeError>([] { TensorXf::zeros({size_t(1) << 20, size_t(1) << 20}); }, "more than 2^32");
}

}  // namespace
