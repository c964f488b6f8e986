// Gauss-Legendre quadrature: the roots of the Legendre polynomial P_n by Newton's method.
#include <kiln/errors.h>
#include <kiln/render/quadrature.h>

#include <cmath>
#include <string>

namespace kiln::render {
namespace {

/// P_n(x) and its derivative, by the three-term recurrence.
std::pair<double, double> legendre_and_derivative(int n, double x) {
  double previous = 1, current = x;
  for (int k = 2; k <= n; ++k) {
    double next = ((2 * k - 1) * x * current - (k - 1) * previous) / k;
    previous = current;
    current = next;
  }
  if (n == 0) return {1, 0};
  return {current, n * (x * current - previous) / (x * x - 1)};
}

}  // namespace

std::pair<std::vector<double>, std::vector<double>> gauss_legendre(int n) {
  if (n < 1) throw ValueError("kiln.render: gauss_legendre(): n must be at least 1, got " + std::to_string(n));
  std::vector<double> nodes(n), weights(n);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    // Start from the corresponding root of the Chebyshev polynomial; Newton converges
    // quadratically from there.
    double x = -std::cos(M_PI * (i + 0.75) / (n + 0.5));
    for (int iteration = 0; iteration < 100; ++iteration) {
      auto [value, derivative] = legendre_and_derivative(n, x);
      double step = value / derivative;
      x -= step;
      if (std::abs(step) <= 4 * std::abs(x) * 2.2e-16) break;
    }
    double derivative = legendre_and_derivative(n, x).second;
    double weight = 2 / ((1 - x * x) * derivative * derivative);
    nodes[i] = x;
    nodes[n - 1 - i] = -x;
    weights[i] = weights[n - 1 - i] = weight;
  }
  if (n % 2 == 1) nodes[n / 2] = 0;
  return {nodes, weights};
}

}  // namespace kiln::render
