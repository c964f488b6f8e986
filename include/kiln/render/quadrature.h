// Numerical quadrature rules on the host (Mitsuba 3's mitsuba/core/quad.h).
//
// What an implementation guarantees:
// - gauss_legendre(n) integrates polynomials of degree up to 2n - 1 on [-1, 1] exactly (up
//   to rounding); nodes ascend and are symmetric about 0, weights sum to 2.
#pragma once

#include <utility>
#include <vector>

namespace kiln::render {

/// Nodes and weights of the n-point Gauss-Legendre rule on [-1, 1]; n >= 1, else ValueError.
std::pair<std::vector<double>, std::vector<double>> gauss_legendre(int n);

}  // namespace kiln::render
