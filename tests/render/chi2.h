// Chi-square goodness-of-fit tests of sampling routines against their densities (Mitsuba's
// method): sample many times, histogram the results over bins of equal measure, integrate
// the density over each bin for the expected counts, pool bins expecting fewer than 5
// samples, and reject when the p-value falls below the significance level.
#pragma once

#include <kiln/kiln.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::render::chi2 {

/// Maps a sampling domain to [0, 1)² so that equal areas there are equal measures here:
/// `measure` is the domain's measure per unit area of the chart.
template <typename Point> struct Chart {
  std::function<std::pair<double, double>(const std::vector<double>& point)> to_unit;
  std::function<Point(const Float& u, const Float& v)> from_unit;
  double measure;
};

/// Directions: u = (cos θ + 1) / 2, v = φ / 2π; solid angle 4π.
inline Chart<Array3f> sphere_chart() {
  return {[](const std::vector<double>& d) {
            double phi = std::atan2(d[1], d[0]);
            if (phi < 0) phi += 2 * M_PI;
            return std::pair((d[2] + 1) / 2, phi / (2 * M_PI));
          },
          [](const Float& u, const Float& v) {
            Float z = 2.0f * u - 1.0f, r = sqrt(max(1.0f - z * z, Float(0.0f)));
            Float phi = v * float(2 * M_PI);
            return Array3f(r * cos(phi), r * sin(phi), z);
          },
          4 * M_PI};
}

/// The unit square itself (for warps onto parts of it, like the triangle); area 1.
inline Chart<Array2f> square_chart() {
  return {[](const std::vector<double>& p) { return std::pair(p[0], p[1]); },
          [](const Float& u, const Float& v) { return Array2f(u, v); }, 1.0};
}

/// The unit disk: u = r², v = φ / 2π; area π.
inline Chart<Array2f> disk_chart() {
  return {[](const std::vector<double>& p) {
            double phi = std::atan2(p[1], p[0]);
            if (phi < 0) phi += 2 * M_PI;
            return std::pair(p[0] * p[0] + p[1] * p[1], phi / (2 * M_PI));
          },
          [](const Float& u, const Float& v) {
            Float r = sqrt(u), phi = v * float(2 * M_PI);
            return Array2f(r * cos(phi), r * sin(phi));
          },
          M_PI};
}

/// Q(a, x), the regularized upper incomplete gamma function: the chi-square p-value is
/// Q(dof / 2, statistic / 2). Series below a + 1, Lentz's continued fraction above.
inline double gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > std::abs(sum) * 1e-15; ++n) sum += term *= x / (a + n);
    return 1.0 - sum * std::exp(log_prefix);
  }
  double tiny = 1e-300, b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int n = 1; n < 1000; ++n) {
    double an = -n * (n - a);
    b += 2;
    d = an * d + b;
    d = std::abs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::abs(c) < tiny ? tiny : c;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-15) break;
  }
  return std::exp(log_prefix) * h;
}

struct Chi2Result {
  bool passed = false;
  double statistic = 0, p_value = 0;
  int dof = 0;
  std::string message;
};

/// Tests `sample` (uniform [0, 1)² → a point and whether sampling succeeded) against `pdf`
/// (domain → density) with `samples` samples over res × res bins of the chart. Failed
/// samples are not counted: the density then integrates to the probability of success
/// (a BSDF that absorbs or sends some samples below the horizon, as Mitsuba's test weighs
/// them zero).
template <typename Point> Chi2Result chi2_test(const std::function<std::pair<Point, Bool>(const Array2f&)>& sample,
                                               const std::function<Float(const Point&)>& pdf, const Chart<Point>& chart,
                                               size_t samples = 1000000, size_t res = 32, double significance = 0.01) {
  constexpr size_t K = Point::Size;
  // Observed: histogram of the samples.
  PCG32 rng(samples);
  Array2f u(rng.next_float32(), rng.next_float32());
  auto [points, succeeded] = sample(u);
  std::vector<float> counted = (select(succeeded, Float(1.0f), Float(0.0f)) + zeros<Float>(samples)).to_vector();
  std::vector<std::vector<double>> coords(K);
  for (size_t k = 0; k < K; ++k) {
    std::vector<float> values = points[k].to_vector();
    coords[k].assign(values.begin(), values.end());
  }
  std::vector<double> observed(res * res, 0.0);
  Chi2Result result;
  std::vector<double> point(K);
  for (size_t i = 0; i < samples; ++i) {
    if (counted[i] == 0) continue;
    for (size_t k = 0; k < K; ++k) point[k] = coords[k][i];
    auto [cu, cv] = chart.to_unit(point);
    if (!std::isfinite(cu) || !std::isfinite(cv)) {
      result.message = "sample " + std::to_string(i) + " is not finite";
      return result;
    }
    size_t bu = std::min(res - 1, size_t(std::max(0.0, cu) * res)), bv = std::min(res - 1, size_t(cv * res));
    observed[bu * res + bv] += 1;
  }
  // Expected: the density integrated over each bin by a sub x sub midpoint grid.
  constexpr size_t sub = 32;  // fine enough for densities with a step inside a bin (a cone)
  size_t n = res * sub;
  UInt32 index = arange<UInt32>(n * n);
  Float cu = (Float(cast<float>(index / uint32_t(n))) + 0.5f) * (1.0f / float(n));
  Float cv = (Float(cast<float>(index % uint32_t(n))) + 0.5f) * (1.0f / float(n));
  std::vector<float> density = pdf(chart.from_unit(cu, cv)).to_vector();
  std::vector<double> expected(res * res, 0.0);
  double cell = chart.measure / double(n * n) * double(samples);
  for (size_t i = 0; i < n * n; ++i) expected[(i / n / sub) * res + (i % n) / sub] += density[i] * cell;
  // Pool the bins expecting fewer than 5 samples; a sample where the density is zero fails.
  double pooled_observed = 0, pooled_expected = 0;
  int bins = 0;
  for (size_t b = 0; b < res * res; ++b) {
    if (expected[b] == 0 && observed[b] > 0) {
      result.message = std::to_string(int(observed[b])) + " samples fell in bin " + std::to_string(b) +
                       ", where the density is zero";
      return result;
    }
    if (expected[b] < 5) {
      pooled_observed += observed[b];
      pooled_expected += expected[b];
      continue;
    }
    result.statistic += (observed[b] - expected[b]) * (observed[b] - expected[b]) / expected[b];
    ++bins;
  }
  if (pooled_expected >= 5) {
    result.statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++bins;
  }
  result.dof = bins - 1;
  result.p_value = gamma_q(result.dof / 2.0, result.statistic / 2.0);
  result.passed = result.p_value >= significance;
  std::ostringstream text;
  text << "chi-square " << result.statistic << " with " << result.dof << " degrees of freedom: p = " << result.p_value
       << (result.passed ? " >= " : " < ") << significance;
  result.message = text.str();
  return result;
}

/// The same for a sampler that always succeeds.
template <typename Point> Chi2Result chi2_test(const std::function<Point(const Array2f&)>& sample,
                                               const std::function<Float(const Point&)>& pdf, const Chart<Point>& chart,
                                               size_t samples = 1000000, size_t res = 32, double significance = 0.01) {
  std::function<std::pair<Point, Bool>(const Array2f&)> always = [&](const Array2f& u) {
    return std::pair(sample(u), Bool(true));
  };
  return chi2_test<Point>(always, pdf, chart, samples, res, significance);
}

}  // namespace kiln::render::chi2
