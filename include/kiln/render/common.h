// Types, constants and small functions every part of kiln.render shares: RGB colors,
// luminance, π, the ray epsilon, safe_sqrt, mulsign.
#pragma once

#include <kiln/elementwise.h>
#include <kiln/vector.h>

#include <limits>
#include <tuple>

namespace kiln::render {

/// Linear RGB (sRGB primaries): radiance, reflectance, weights. Kiln.render is RGB only.
using Color3f = Array3f;

inline constexpr float kPi = 3.14159265358979323846f;
inline constexpr float kDegreesToRadians = kPi / 180.0f;
inline constexpr float kInvPi = 0.31830988618379067154f;
inline constexpr float kInvTwoPi = 0.15915494309189533577f;
inline constexpr float kInvFourPi = 0.07957747154594766788f;
inline constexpr float kInfinity = std::numeric_limits<float>::infinity();
/// Relative offset of spawned rays from their surface (Mitsuba's math::RayEpsilon: 1500
/// times the single-precision machine epsilon 2^-24, scaled by the position's magnitude).
inline constexpr float kRayEpsilon = 1500.0f / (1 << 24);
/// Shadow rays stop short of their target by this fraction of the distance (Mitsuba's
/// math::ShadowEpsilon, 10 kRayEpsilon).
inline constexpr float kShadowEpsilon = 10.0f * kRayEpsilon;

/// The luminance (Y) of linear sRGB primaries, the weights of Mitsuba's luminance().
inline constexpr float kLuminanceWeights[3] = {0.212671f, 0.715160f, 0.072169f};
/// The luminance of a linear RGB color.
inline Float luminance(const Color3f& c) {
  return c.x * kLuminanceWeights[0] + c.y * kLuminanceWeights[1] + c.z * kLuminanceWeights[2];
}

/// √max(x, 0): a square root that rounding below zero cannot turn into NaN, with derivative
/// 0 where x <= 0 (the inner select keeps sqrt's infinite slope at 0 out of the derivative:
/// a zero tangent or adjoint times it would be NaN).
inline Float safe_sqrt(const Float& x) {
  Bool positive = x > 0.0f;
  return select(positive, sqrt(select(positive, x, Float(1.0f))), Float(0.0f));
}

/// x with its sign flipped where y is negative, -0 included (Dr.Jit's mulsign()).
inline Float mulsign(const Float& x, const Float& y) { return x * copysign(Float(1.0f), y); }
/// The vector v with its sign flipped where y is negative, -0 included.
inline Array3f mulsign(const Array3f& v, const Float& y) { return v * copysign(Float(1.0f), y); }

/// Sets every array of `value` (an array, vector, or struct listing fields()) that was
/// never assigned to zero: plugins may leave fields they do not compute, and dispatch()
/// needs every result array.
template <typename T> void zero_unset(T& value) {
  if constexpr (requires { value.fields(); })
    std::apply([](auto&... parts) { (zero_unset(parts), ...); }, value.fields());
  else if constexpr (requires { std::tuple_size<T>::value; })
    std::apply([](auto&... parts) { (zero_unset(parts), ...); }, value);
  else
    for_each_array(value, [](auto& array) {
      if (!array.valid()) array = std::decay_t<decltype(array)>(0);
    });
}

}  // namespace kiln::render
