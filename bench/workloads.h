// The computations the benchmarks run, written once as templates over the value type, so
// that Kiln (V = kiln::Float, which records a trace) and the hand-written baselines
// (V = float, compiled to native code) provably compute the same thing. This header does
// not include Kiln: the baseline translation unit stays plain C++.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace bench {

/// Scalar counterpart of kiln::select(), so the templates below read the same for both.
inline float select(bool mask, float if_true, float if_false) { return mask ? if_true : if_false; }

/// Ten elementwise operations on three inputs (mul, add, mul, abs, sqrt, sub, min, mul, max, add).
template <typename V> V fused10(const V& x, const V& y, const V& z) {
  using std::abs, std::max, std::min, std::sqrt;
  V t = x * y + z;
  t = t * 0.5f - sqrt(abs(x));
  t = min(t, y);
  t = t * t;
  return max(t, z) + 1.0f;
}

/// STREAM's triad.
template <typename V> V triad(const V& a, float s, const V& b) { return a * s + b; }

/// The region and resolution of a Mandelbrot image; pixel i is (i % width, i / width).
struct MandelbrotView {
  uint32_t width = 1024, height = 1024;
  float x0 = -2.0f, y0 = -1.5f;  ///< the complex coordinate of pixel (0, 0)
  float dx = 3.0f / 1024, dy = 3.0f / 1024;
  int iterations = 256;
  float bailout = 4.0f;  ///< escape when |z|^2 exceeds this
  size_t pixels() const { return size_t(width) * height; }
};

/// One iteration of z <- z^2 + c on the lanes still `active`; escaped lanes keep their z,
/// and `count` counts the iterations a lane stayed inside. This is how a per-lane loop is
/// written without branches: the escape test becomes a mask and the update a select.
template <typename V, typename Mask>
void mandelbrot_step(V& zx, V& zy, V& count, Mask& active, const V& cx, const V& cy, float bailout) {
  V zx2 = zx * zx, zy2 = zy * zy;
  active = active & (zx2 + zy2 <= bailout);
  V next_zy = (zx + zx) * zy + cy;
  V next_zx = zx2 - zy2 + cx;
  zx = select(active, next_zx, zx);
  zy = select(active, next_zy, zy);
  count = select(active, count + 1.0f, count);
}

}  // namespace bench
