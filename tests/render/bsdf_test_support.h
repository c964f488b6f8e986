// Shared by the BSDF tests: building a BSDF plugin from parameters, a surface interaction
// in the local frame, and the checks every BSDF goes through — sample() against pdf() by
// the chi-square test, sample()'s weight against eval() / pdf(), reciprocity, the white
// furnace, values printed by Mitsuba 3.9 (scripts/mitsuba_bsdf_values.py), and the names
// traverse() lists.
#pragma once

#include <kiln/kiln.h>
#include <kiln/render/bsdf.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "chi2.h"
#include "loader_test_support.h"

namespace kiln::render::test {

using Parameters = std::vector<std::pair<std::string, Properties::Value>>;
using Vec3 = std::array<float, 3>;

/// The parameters of plugin `plugin`, each declared at "test: <name>".
inline Properties bsdf_properties(const std::string& plugin, const Parameters& params = {}) {
  Properties props(PluginKind::Bsdf, plugin, "", "test");
  for (const auto& [name, value] : params) props.set(name, value, "test: " + name);
  return props;
}

/// BSDF plugin `plugin` made from `params` through the plugin registry.
inline std::shared_ptr<BSDF> make_bsdf(const std::string& plugin, const Parameters& params = {}) {
  return std::dynamic_pointer_cast<BSDF>(create_object(bsdf_properties(plugin, params)));
}

/// The directions `v` as one Array3f (a lane each).
inline Array3f directions(const std::vector<Vec3>& v) {
  std::vector<float> x, y, z;
  for (const Vec3& d : v) x.push_back(d[0]), y.push_back(d[1]), z.push_back(d[2]);
  return Array3f(Float::from(x), Float::from(y), Float::from(z));
}

/// The unit vector along (x, y, z), as a one-lane Array3f.
inline Array3f unit(double x, double y, double z) {
  double n = std::sqrt(x * x + y * y + z * z);
  return Array3f(Float(float(x / n)), Float(float(y / n)), Float(float(z / n)));
}

/// An interaction at the origin whose shading frame is the local frame (normal +z), seen
/// from `wi`, with uv (0.5, 0.5).
inline SurfaceInteraction local_interaction(const Array3f& wi) {
  SurfaceInteraction si;
  Array3f zero(0.0f, 0.0f, 0.0f);
  si.t = Float(1.0f);
  si.p = zero;
  si.n = Array3f(0.0f, 0.0f, 1.0f);
  si.uv = Array2f(0.5f, 0.5f);
  si.sh_frame = Frame3f(Array3f(1.0f, 0.0f, 0.0f), Array3f(0.0f, 1.0f, 0.0f), Array3f(0.0f, 0.0f, 1.0f));
  si.dp_du = zero;
  si.dp_dv = zero;
  si.wi = wi;
  si.shape = UInt32(1u);
  si.prim_index = UInt32(0u);
  return si;
}

/// `n` directions uniform on the sphere (a fixed sequence per seed).
inline Array3f random_directions(size_t n, uint64_t seed) {
  PCG32 rng(n, UInt64(seed));
  Float u1 = rng.next_float32();
  return warp::square_to_uniform_sphere(Array2f(u1, rng.next_float32()));
}

/// The chi-square test of sample()'s directions against pdf() for incident direction `wi`.
/// Samples that fail (zero weight, as Mitsuba's test weighs them) and samples of delta
/// lobes (which pdf() does not describe) are not counted: pdf() then integrates to the
/// probability of the samples that are.
///
/// The sphere's chart is turned so that its poles lie off the plane of incidence (along
/// normal × wi): lobes around the normal (transmission compressed by refraction, reflection
/// at normal incidence) fall where the chart's bins are fine in both directions, not into
/// the thin rings at a pole, where the expected counts would be integrated too coarsely.
///
/// `test_count` is how many such tests the caller runs: the significance level 0.01 is
/// shared among them (Šidák's correction, as Mitsuba's ChiSquareTest does), so that a
/// table of tests is not expected to reject a correct sampler by chance.
inline chi2::Chi2Result sampling_chi2(const BSDF& bsdf, const Array3f& wi, const BSDFContext& ctx = {},
                                      size_t test_count = 1, size_t samples = 1000000, size_t res = 32) {
  double w[3] = {wi.x.item(), wi.y.item(), wi.z.item()};
  double pole[3] = {-w[1], w[0], 0}, length = std::hypot(pole[0], pole[1]);
  if (length < 1e-6) pole[0] = 0, pole[1] = 1, length = 1;
  pole[0] /= length, pole[1] /= length;
  double across[3] = {pole[1], -pole[0], 0};  // pole × normal: completes (normal, across, pole)
  auto to_chart = [=](const Array3f& v) {
    return Array3f(v.z, v.x * float(across[0]) + v.y * float(across[1]), v.x * float(pole[0]) + v.y * float(pole[1]));
  };
  auto from_chart = [=](const Array3f& c) {
    return Array3f(c.y * float(across[0]) + c.z * float(pole[0]), c.y * float(across[1]) + c.z * float(pole[1]), c.x);
  };
  std::function<std::pair<Array3f, Bool>(const Array2f&)> sample = [&](const Array2f& u) {
    // The lobe choice's random number comes from other streams than chi2_test's 2D sample:
    // a generator on the same streams with another seed gives numbers correlated with it.
    size_t n = u.size();
    PCG32 rng(n, UInt64(12345), arange<UInt64>(n) + UInt64(uint64_t(n) + 1000003u));
    auto [bs, weight] = bsdf.sample(ctx, local_interaction(wi), rng.next_float32(), u, Bool(true));
    Bool succeeded = (bs.pdf > 0.0f) & ((weight.x != 0.0f) | (weight.y != 0.0f) | (weight.z != 0.0f)) &
                     ((bs.sampled_type & UInt32(bsdf_flags::kDelta)) == 0u);
    return std::pair(to_chart(bs.wo), succeeded);
  };
  std::function<Float(const Array3f&)> pdf = [&](const Array3f& c) {
    return bsdf.pdf(ctx, local_interaction(wi), from_chart(c), Bool(true));
  };
  double significance = 1 - std::pow(1 - 0.01, 1.0 / double(test_count));
  return chi2::chi2_test<Array3f>(sample, pdf, chi2::sphere_chart(), samples, res, significance);
}

/// Expects sample()'s weight to equal eval() / pdf() and its pdf to equal pdf() on every
/// lane that sampled a non-delta lobe (`n` samples per incident direction in `wis`);
/// returns how many lanes were compared.
inline size_t expect_weight_is_eval_over_pdf(const BSDF& bsdf, const std::vector<Vec3>& wis,
                                             const BSDFContext& ctx = {}, size_t n = 4096, double tolerance = 2e-4) {
  size_t compared = 0;
  for (const Vec3& w : wis) {
    PCG32 rng(n, UInt64(99));
    SurfaceInteraction si = local_interaction(directions({w}));
    Float sample1 = rng.next_float32();
    Float u1 = rng.next_float32();
    auto [bs, weight] = bsdf.sample(ctx, si, sample1, Array2f(u1, rng.next_float32()), Bool(true));
    auto [value, pdf] = bsdf.eval_pdf(ctx, si, bs.wo, Bool(true));
    Float eval_only = bsdf.pdf(ctx, si, bs.wo, Bool(true));
    Bool smooth = (bs.sampled_type & UInt32(bsdf_flags::kDelta)) == 0u;
    std::vector<float> p = (bs.pdf + zeros<Float>(n)).to_vector(), q = (pdf + zeros<Float>(n)).to_vector();
    std::vector<float> q_alone = (eval_only + zeros<Float>(n)).to_vector();
    std::vector<float> is_smooth = (select(smooth, Float(1.0f), Float(0.0f)) + zeros<Float>(n)).to_vector();
    for (size_t c = 0; c < 3; ++c) {
      std::vector<float> w_c = (weight[c] + zeros<Float>(n)).to_vector(),
                         v_c = (value[c] + zeros<Float>(n)).to_vector();
      for (size_t i = 0; i < n; ++i) {
        if (!(p[i] > 0) || is_smooth[i] == 0) continue;
        double expected = v_c[i] / q[i];
        EXPECT_NEAR(w_c[i], expected, tolerance * std::max(1.0, std::abs(expected)))
            << "lane " << i << " channel " << c << " wi (" << w[0] << ", " << w[1] << ", " << w[2] << ")";
        if (c == 0) {
          EXPECT_NEAR(p[i], q[i], tolerance * std::max(1.0, double(q[i]))) << "sample pdf vs eval_pdf, lane " << i;
          EXPECT_NEAR(q_alone[i], q[i], tolerance * std::max(1.0, double(q[i]))) << "pdf vs eval_pdf, lane " << i;
          ++compared;
        }
        if (::testing::Test::HasFailure()) return compared;  // one report is enough
      }
    }
  }
  return compared;
}

/// Expects eval(wi, wo) / |cos θo| == eval(wo, wi) / |cos θi| for `n` random pairs of
/// directions on the same side (above when `above`, else below).
inline void expect_reciprocal(const BSDF& bsdf, bool above = true, size_t n = 4096, double tolerance = 1e-4) {
  Array3f a = random_directions(n, 1), b = random_directions(n, 2);
  float side = above ? 1.0f : -1.0f;
  a.z = abs(a.z) * side;
  b.z = abs(b.z) * side;
  BSDFContext ctx;
  Color3f forward = bsdf.eval(ctx, local_interaction(a), b, Bool(true)) / abs(b.z);
  Color3f backward = bsdf.eval(ctx, local_interaction(b), a, Bool(true)) / abs(a.z);
  size_t nonzero = 0;
  for (size_t c = 0; c < 3; ++c) {
    std::vector<float> f = (forward[c] + zeros<Float>(n)).to_vector(), g = (backward[c] + zeros<Float>(n)).to_vector();
    for (size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(f[i], g[i], tolerance * std::max(1.0, double(std::abs(f[i])))) << "pair " << i << " channel " << c;
      nonzero += f[i] != 0;
    }
  }
  EXPECT_GT(nonzero, n) << "the BSDF is zero almost everywhere: the test compares nothing";
}

/// The albedo for incident direction `wi` two ways: the mean of sample()'s weights, and
/// the integral of eval() over the sphere by uniform sampling (0 for delta-only BSDFs).
struct Albedo {
  std::array<double, 3> by_sampling, by_integration;
};
inline Albedo albedo(const BSDF& bsdf, const Array3f& wi, const BSDFContext& ctx = {}, size_t n = 1 << 20) {
  PCG32 rng(n, UInt64(7));
  Float sample1 = rng.next_float32(), u1 = rng.next_float32(), u2 = rng.next_float32();
  Color3f weight = bsdf.sample(ctx, local_interaction(wi), sample1, Array2f(u1, u2), Bool(true)).second;
  Float v1 = rng.next_float32();
  Array3f wo = warp::square_to_uniform_sphere(Array2f(v1, rng.next_float32()));
  Color3f integrand = bsdf.eval(ctx, local_interaction(wi), wo, Bool(true)) * (4.0f * kPi);
  auto mean = [n](const Float& x) {
    double total = 0;
    for (float value : (x + zeros<Float>(n)).to_vector()) total += value;
    return total / double(n);
  };
  Albedo result;
  for (size_t c = 0; c < 3; ++c) {
    result.by_sampling[c] = mean(weight[c]);
    result.by_integration[c] = mean(integrand[c]);
  }
  return result;
}

/// One eval()/pdf() value Mitsuba computed.
struct EvalReference {
  Vec3 wi, wo, value;
  float pdf;
};
/// One sample() Mitsuba drew (when !valid, Mitsuba's weight was zero: Kiln's must be too).
struct SampleReference {
  Vec3 wi;
  float sample1;
  std::array<float, 2> sample2;
  bool valid;
  Vec3 wo;
  float pdf, eta;
  uint32_t component;
  Vec3 weight;
};
/// A configuration and what Mitsuba 3.9 computed for it.
struct BsdfReference {
  std::string plugin;
  Parameters params;
  TransportMode mode;
  uint32_t component;  ///< BSDFContext::component
  std::vector<EvalReference> evals;
  std::vector<SampleReference> samples;
};

/// |a - b| within `rtol` · |b| + `atol`.
inline bool close(double a, double b, double rtol, double atol) { return std::abs(a - b) <= rtol * std::abs(b) + atol; }

/// Evaluates `ref`'s cases with Kiln (all cases of a kind in one kernel) and expects
/// Mitsuba's numbers.
inline void expect_matches_mitsuba(const BsdfReference& ref, double rtol = 2e-4, double atol = 2e-6) {
  SCOPED_TRACE(ref.plugin);
  std::shared_ptr<BSDF> bsdf = make_bsdf(ref.plugin, ref.params);
  BSDFContext ctx;
  ctx.mode = ref.mode;
  ctx.component = ref.component;
  auto read = [](const Float& x, size_t n) { return (x + zeros<Float>(n)).to_vector(); };
  if (!ref.evals.empty()) {
    std::vector<Vec3> wis, wos;
    for (const EvalReference& e : ref.evals) wis.push_back(e.wi), wos.push_back(e.wo);
    size_t n = wis.size();
    SurfaceInteraction si = local_interaction(directions(wis));
    Array3f wo = directions(wos);
    Color3f value = bsdf->eval(ctx, si, wo, Bool(true));
    std::vector<float> pdf = read(bsdf->pdf(ctx, si, wo, Bool(true)), n);
    for (size_t c = 0; c < 3; ++c) {
      std::vector<float> v = read(value[c], n);
      for (size_t i = 0; i < n; ++i)
        EXPECT_TRUE(close(v[i], ref.evals[i].value[c], rtol, atol))
            << "eval case " << i << " channel " << c << ": " << v[i] << " vs Mitsuba's " << ref.evals[i].value[c];
    }
    for (size_t i = 0; i < n; ++i)
      EXPECT_TRUE(close(pdf[i], ref.evals[i].pdf, rtol, atol))
          << "pdf case " << i << ": " << pdf[i] << " vs Mitsuba's " << ref.evals[i].pdf;
  }
  if (!ref.samples.empty()) {
    std::vector<Vec3> wis;
    std::vector<float> s1, s2x, s2y;
    for (const SampleReference& s : ref.samples)
      wis.push_back(s.wi), s1.push_back(s.sample1), s2x.push_back(s.sample2[0]), s2y.push_back(s.sample2[1]);
    size_t n = wis.size();
    auto [bs, weight] = bsdf->sample(ctx, local_interaction(directions(wis)), Float::from(s1),
                                     Array2f(Float::from(s2x), Float::from(s2y)), Bool(true));
    std::vector<float> pdf = read(bs.pdf, n), eta = read(bs.eta, n);
    std::vector<uint32_t> component = (bs.sampled_component + zeros<UInt32>(n)).to_vector();
    std::array<std::vector<float>, 3> wo, w;
    for (size_t c = 0; c < 3; ++c) wo[c] = read(bs.wo[c], n), w[c] = read(weight[c], n);
    for (size_t i = 0; i < n; ++i) {
      const SampleReference& s = ref.samples[i];
      SCOPED_TRACE("sample case " + std::to_string(i));
      for (size_t c = 0; c < 3; ++c)
        EXPECT_TRUE(close(w[c][i], s.weight[c], rtol, atol))
            << "weight channel " << c << ": " << w[c][i] << " vs Mitsuba's " << s.weight[c];
      if (!s.valid) {
        EXPECT_EQ(pdf[i], 0.0f) << "a failed sample has pdf 0";
        continue;
      }
      for (size_t c = 0; c < 3; ++c)
        EXPECT_TRUE(close(wo[c][i], s.wo[c], rtol, atol)) << "wo[" << c << "]: " << wo[c][i] << " vs " << s.wo[c];
      EXPECT_TRUE(close(pdf[i], s.pdf, rtol, atol)) << "pdf " << pdf[i] << " vs " << s.pdf;
      EXPECT_TRUE(close(eta[i], s.eta, rtol, atol)) << "eta " << eta[i] << " vs " << s.eta;
      EXPECT_EQ(component[i], s.component);
    }
  }
}

/// The parameter keys traverse() lists for `object`, children prefixed ("eta.value").
inline std::vector<std::string> parameter_keys(Object& object) {
  struct Recorder : TraversalCallback {
    std::string prefix;
    std::vector<std::string>* keys;
    void put(const std::string& name, ParameterRef, uint32_t) override { keys->push_back(prefix + name); }
    void put_object(const std::string& name, Object* child) override {
      Recorder nested;
      nested.prefix = prefix + name + ".";
      nested.keys = keys;
      child->traverse(nested);
    }
  };
  std::vector<std::string> keys;
  Recorder recorder;
  recorder.keys = &keys;
  object.traverse(recorder);
  return keys;
}

/// The Kiln array traverse() lists under `key` for `object` (nullptr when there is none).
inline Float* float_parameter(Object& object, const std::string& key) {
  struct Finder : TraversalCallback {
    std::string prefix, key;
    Float* found = nullptr;
    void put(const std::string& name, ParameterRef ref, uint32_t) override {
      if (prefix + name == key)
        if (auto* pointer = std::get_if<Float*>(&ref)) found = *pointer;
    }
    void put_object(const std::string& name, Object* child) override {
      Finder nested;
      nested.prefix = prefix + name + ".";
      nested.key = key;
      child->traverse(nested);
      if (nested.found) found = nested.found;
    }
  };
  Finder finder;
  finder.key = key;
  object.traverse(finder);
  return finder.found;
}

/// Runs `body` with kernels on the reference interpreter.
template <typename F> void on_interpreter(F&& body) {
  set_flag(Flag::Interpreter, true);
  try {
    body();
  } catch (...) {
    set_flag(Flag::Interpreter, false);
    throw;
  }
  set_flag(Flag::Interpreter, false);
}

}  // namespace kiln::render::test
