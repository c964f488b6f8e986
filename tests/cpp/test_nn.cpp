// kiln::nn (nn.h): layer values against host arithmetic, parameter collection, optimizer
// steps (SGD exactly p - lr·g; Adam lowers a loss; zero_grad, lr) and that optimizer steps
// leave no AD graph behind them.
#include "autodiff_test_support.h"

#include <kiln/nn.h>

#include <cmath>

using namespace kiln;
using kiln::test::AutodiffTest;

namespace {

TensorXf matrix(std::vector<float> values, size_t rows, size_t cols) {
  return TensorXf::from(values.data(), {rows, cols});
}

using NnTest = AutodiffTest;

TEST_F(NnTest, LinearIsMatmulPlusBias) {
  nn::Linear layer(3, 2, /*seed=*/7);
  TensorXf x = matrix({1, 2, 3, -1, 0.5f, 2}, 2, 3);
  std::vector<float> w = layer.weight.to_vector(), b = layer.bias->to_vector(), y = layer(x).to_vector();
  std::vector<float> xs = x.to_vector();
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < 2; ++c) {
      float expected = b[c];
      for (size_t k = 0; k < 3; ++k) expected += xs[r * 3 + k] * w[k * 2 + c];
      EXPECT_NEAR(y[r * 2 + c], expected, 1e-5f);
    }
  for (float v : w) EXPECT_LE(std::abs(v), 1.0f / std::sqrt(3.0f));
}

TEST_F(NnTest, LayersWithoutSeedStartDifferentAndExplicitSeedsRepeat) {
  nn::Linear first(4, 3), second(4, 3);
  EXPECT_NE(first.weight.to_vector(), second.weight.to_vector());
  EXPECT_NE(first.bias->to_vector(), second.bias->to_vector());
  EXPECT_EQ(nn::Linear(4, 3, 11).weight.to_vector(), nn::Linear(4, 3, 11).weight.to_vector());
  uint64_t next = nn::next_layer_seed();  // the sequence continues: the next default layer takes next + 1
  EXPECT_EQ(nn::Linear(4, 3).weight.to_vector(), nn::Linear(4, 3, next + 1).weight.to_vector());
}

TEST_F(NnTest, ActivationsAndEncoding) {
  TensorXf x = matrix({-2, -0.5f, 0, 1.5f}, 2, 2);
  std::vector<float> relu = nn::ReLU{}(x).to_vector(), leaky = nn::LeakyReLU{0.1f}(x).to_vector(),
                     sig = nn::Sigmoid{}(x).to_vector(), ex = nn::Exp{}(x).to_vector();
  std::vector<float> xs = x.to_vector();
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_FLOAT_EQ(relu[i], std::max(xs[i], 0.0f));
    EXPECT_FLOAT_EQ(leaky[i], xs[i] > 0 ? xs[i] : 0.1f * xs[i]);
    EXPECT_NEAR(sig[i], 1 / (1 + std::exp(-xs[i])), 1e-6);
    EXPECT_NEAR(ex[i], std::exp(xs[i]), 1e-5);
  }
  nn::PositionalEncoding encoding{2, true};
  TensorXf e = encoding(x);
  ASSERT_EQ(e.shape(), (Shape{2, encoding.out_features(2)}));
  std::vector<float> es = e.to_vector();
  // Row 1: x, sin(πx), cos(πx), sin(2πx), cos(2πx), each over the 2 features.
  EXPECT_FLOAT_EQ(es[10 + 1], 1.5f);
  EXPECT_NEAR(es[10 + 2], std::sin(M_PI * 0.0), 1e-6);
  EXPECT_NEAR(es[10 + 5], std::cos(M_PI * 1.5), 1e-5);
  EXPECT_NEAR(es[10 + 9], std::cos(2 * M_PI * 1.5), 1e-5);
}

TEST_F(NnTest, SgdStepIsExact) {
  auto net = nn::Sequential(nn::Linear(2, 4, 1), nn::ReLU{}, nn::Linear(4, 1, 2));
  std::vector<TensorXf*> params = net.parameters();
  ASSERT_EQ(params.size(), 4u);
  TensorXf x = matrix({0.5f, -1, 2, 0.25f, -0.75f, 1}, 3, 2);
  backward(sum(net(x) * net(x)).array());
  std::vector<std::vector<float>> before, grads;
  for (TensorXf* p : params) {
    before.push_back(p->to_vector());
    grads.push_back(grad(*p).to_vector());
  }
  nn::SGD(params, 0.1f).step();
  for (size_t k = 0; k < params.size(); ++k) {
    std::vector<float> after = params[k]->to_vector();
    for (size_t i = 0; i < after.size(); ++i) EXPECT_NEAR(after[i], before[k][i] - 0.1f * grads[k][i], 1e-6f);
    EXPECT_TRUE(grad_enabled(*params[k]));
  }
}

TEST_F(NnTest, OptimizersMakeLeavesAndClearGradients) {
  TensorXf p = matrix({2, 2, 2, 2}, 2, 2);
  nn::SGD sgd({&p}, 0.25);
  EXPECT_TRUE(grad_enabled(p));  // parameters become AD leaves
  backward(sum(p * p).array());
  sgd.step();
  for (float v : p.to_vector()) EXPECT_EQ(v, 1.0f);  // 2 - 0.25 * 4
  backward(sum(p * p).array());
  sgd.zero_grad();
  for (float v : grad(p).to_vector()) EXPECT_EQ(v, 0.0f);
  sgd.set_lr(0.5);
  EXPECT_EQ(sgd.lr(), 0.5);
}

TEST_F(NnTest, AdamLowersTheLossAndTheGraphDoesNotGrow) {
  auto net = nn::Sequential(nn::Linear(1, 16, 3), nn::LeakyReLU{}, nn::Linear(16, 1, 4));
  nn::Adam adam(net.parameters(), 0.01f);
  std::vector<float> xs, ys;
  for (int i = 0; i < 64; ++i) {
    xs.push_back(float(i) / 32 - 1);
    ys.push_back(std::sin(3 * xs.back()));
  }
  TensorXf x = TensorXf::from(xs.data(), {64, 1}), y = TensorXf::from(ys.data(), {64, 1});
  float first = 0, last = 0;
  size_t nodes_after_first = 0;
  for (int step = 0; step < 200; ++step) {
    TensorXf error = net(x) - y;
    Float loss = mean(error * error).array();
    backward(loss);
    adam.step();
    if (step == 0) {
      first = loss.item();
      nodes_after_first = detail::ad_node_count();
    }
    last = loss.item();
    EXPECT_EQ(detail::ad_node_count(), nodes_after_first) << "step " << step;
  }
  EXPECT_LT(last, 0.5f * first);
}

}  // namespace
