// The continuous 2D distribution: normalization and CDFs on the host, sampling and density
// as traced gathers and binary searches.
#include <kiln/elementwise.h>
#include <kiln/errors.h>
#include <kiln/render/common.h>
#include <kiln/render/distribution_2d.h>
#include <kiln/search.h>

#include <cmath>
#include <string>

namespace kiln::render {
namespace {

/// The t in [0, 1] where the integral of a density rising linearly from `a` (t = 0) to `b`
/// (t = 1), a t + (b - a) t² / 2, reaches `mass`; written without the division by b - a that
/// loses precision when the two are close. 0 where the segment holds no mass.
Float invert_linear_segment(const Float& a, const Float& b, const Float& mass) {
  Float denominator = a + safe_sqrt(a * a + 2.0f * (b - a) * mass);
  Float t = select(denominator > 0.0f, 2.0f * mass / denominator, Float(0.0f));
  return clamp(t, 0.0f, 1.0f);
}

}  // namespace

ContinuousDistribution2D::ContinuousDistribution2D(const std::vector<float>& values, size_t width, size_t height)
    : width_(uint32_t(width)), height_(uint32_t(height)) {
  if (width < 2 || height < 2 || values.size() != width * height)
    throw ValueError("kiln.render: ContinuousDistribution2D: a grid of " + std::to_string(width) + " x " +
                     std::to_string(height) + " vertices with " + std::to_string(values.size()) +
                     " values; it needs at least 2 x 2 vertices and one value for each");
  for (float value : values)
    if (!(value >= 0.0f && std::isfinite(value)))
      throw ValueError("kiln.render: ContinuousDistribution2D: the value " + std::to_string(value) +
                       " is not a finite number >= 0");
  // Sums in double, the integral of each bilinear patch being the mean of its corners.
  double integral = 0;
  for (size_t y = 0; y + 1 < height; ++y)
    for (size_t x = 0; x + 1 < width; ++x) {
      size_t i = y * width + x;
      integral += 0.25 * (double(values[i]) + values[i + 1] + values[i + width] + values[i + width + 1]);
    }
  double scale = integral > 0 ? double((width - 1) * (height - 1)) / integral : 0.0;
  std::vector<float> density(values.size()), conditional(values.size()), marginal(height);
  std::vector<double> row_integral(height);
  for (size_t y = 0; y < height; ++y) {
    double sum = 0;
    for (size_t x = 0; x < width; ++x) {
      size_t i = y * width + x;
      density[i] = float(values[i] * scale);
      if (x > 0) sum += 0.5 * (double(values[i - 1]) + values[i]) * scale;
      conditional[i] = float(sum);
    }
    row_integral[y] = sum;
  }
  double sum = 0;
  for (size_t y = 0; y < height; ++y) {
    if (y > 0) sum += 0.5 * (row_integral[y - 1] + row_integral[y]);
    marginal[y] = float(sum);
  }
  total_ = marginal.back();
  density_ = Float::from(density);
  conditional_cdf_ = Float::from(conditional);
  marginal_cdf_ = Float::from(marginal);
}

Float ContinuousDistribution2D::between_rows(const Float& grid, const UInt32& row, const Float& t, const UInt32& column,
                                             const Bool& active) const {
  UInt32 index = row * width_ + column;
  return lerp(gather(grid, index, active), gather(grid, index + width_, active), t);
}

std::pair<Array2f, Float> ContinuousDistribution2D::sample(const Array2f& sample, const Bool& active) const {
  Float u = clamp(sample.x, 0.0f, 1.0f), v = clamp(sample.y, 0.0f, 1.0f);
  // The row: the marginal density rises linearly between the integrals of two rows.
  Float target = v * total_;
  // binary_search() finds the first entry past the target; the interval starts before it.
  auto row_reached = [&](const UInt32& i) { return gather(marginal_cdf_, i, active) <= target; };
  UInt32 row = binary_search(1, height_ - 1, row_reached) - 1u;
  UInt32 last = UInt32(width_ - 1);
  Float below = gather(conditional_cdf_, row * width_ + last, active);
  Float above = gather(conditional_cdf_, (row + 1u) * width_ + last, active);
  Float t = invert_linear_segment(below, above, target - gather(marginal_cdf_, row, active));
  // The column: the conditional CDF at row + t is the interpolation of the two rows' CDFs.
  Float row_target = u * lerp(below, above, t);
  auto column_reached = [&](const UInt32& i) {
    return between_rows(conditional_cdf_, row, t, i, active) <= row_target;
  };
  UInt32 column = binary_search(1, width_ - 1, column_reached) - 1u;
  Float left = between_rows(density_, row, t, column, active);
  Float right = between_rows(density_, row, t, column + 1u, active);
  Float s = invert_linear_segment(left, right, row_target - between_rows(conditional_cdf_, row, t, column, active));
  Array2f pos((Float(cast<float>(column)) + s) * (1.0f / float(width_ - 1)),
              (Float(cast<float>(row)) + t) * (1.0f / float(height_ - 1)));
  return {pos, eval(pos, active)};
}

Float ContinuousDistribution2D::eval(const Array2f& pos, const Bool& active) const {
  Float px = clamp(pos.x, 0.0f, 1.0f) * float(width_ - 1), py = clamp(pos.y, 0.0f, 1.0f) * float(height_ - 1);
  UInt32 column = min(cast<uint32_t>(floor(px)), UInt32(width_ - 2));
  UInt32 row = min(cast<uint32_t>(floor(py)), UInt32(height_ - 2));
  Float t = py - Float(cast<float>(row));
  Float s = px - Float(cast<float>(column));
  Float value =
      lerp(between_rows(density_, row, t, column, active), between_rows(density_, row, t, column + 1u, active), s);
  return select(active, value, Float(0.0f));
}

}  // namespace kiln::render
