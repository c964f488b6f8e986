// A continuous 2D distribution on the unit square: the bilinear interpolant of a grid of
// nonnegative values, with the density Mitsuba 3's Hierarchical2D gives it (environment maps
// sample directions with it), sampled by inverting its marginal and conditional CDFs.
//
// What an implementation guarantees:
// - The grid has width x height vertices (both at least 2); vertex (x, y) sits at
//   (x / (width - 1), y / (height - 1)), values row by row. eval() is the interpolant scaled
//   to integrate to 1 over [0, 1]² (0 everywhere when every value is 0).
// - sample() maps [0, 1]² onto the square with density eval() and returns that density; it is
//   continuous and monotonic in each coordinate (the marginal in y, then the conditional in
//   x, each a piecewise quadratic inverted exactly). Lanes where the density is 0 get pdf 0.
// - Both are traced (gathers from Kiln arrays, binary_search()), so they run in kernels.
#pragma once

#include <kiln/vector.h>

#include <utility>
#include <vector>

namespace kiln::render {

class ContinuousDistribution2D {
 public:
  /// An empty distribution (assign one before use).
  ContinuousDistribution2D() = default;
  /// The distribution of `values` (width * height finite values >= 0, row by row);
  /// ValueError otherwise.
  ContinuousDistribution2D(const std::vector<float>& values, size_t width, size_t height);

  /// A point distributed as eval(), and its density.
  std::pair<Array2f, Float> sample(const Array2f& sample, const Bool& active) const;
  /// The density at `pos` (clamped to the unit square).
  Float eval(const Array2f& pos, const Bool& active) const;

 private:
  /// The interpolated value at row `row` + `t` (t in [0, 1]) of array `grid`, column `column`.
  Float between_rows(const Float& grid, const UInt32& row, const Float& t, const UInt32& column,
                     const Bool& active) const;

  uint32_t width_ = 0, height_ = 0;
  Float density_;          ///< the values scaled to integrate to 1
  Float conditional_cdf_;  ///< per row: the integral of the row from u = 0 to each vertex
  Float marginal_cdf_;     ///< the integral over rows from v = 0 to each row
  float total_ = 0;        ///< marginal_cdf_'s last entry
};

}  // namespace kiln::render
