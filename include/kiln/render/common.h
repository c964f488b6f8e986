// Types, constants and small functions every part of kiln.render shares: RGB colors, π,
// the ray epsilon, safe_sqrt.
#pragma once

#include <kiln/vector.h>

#include <limits>

namespace kiln::render {

/// Linear RGB (sRGB primaries): radiance, reflectance, weights. Kiln.render is RGB only.
using Color3f = Array3f;

inline constexpr float kPi = 3.14159265358979323846f;
inline constexpr float kDegreesToRadians = kPi / 180.0f;
inline constexpr float kInvPi = 0.31830988618379067154f;
inline constexpr float kInvTwoPi = 0.15915494309189533577f;
inline constexpr float kInvFourPi = 0.07957747154594766788f;
inline constexpr float kInfinity = std::numeric_limits<float>::infinity();
/// Relative offset of spawned rays from their surface (Mitsuba's math::RayEpsilon:
/// 2^-21 for single precision, scaled by the position's magnitude).
inline constexpr float kRayEpsilon = 1.0f / (1 << 21);
/// Shadow rays stop short of their target by this fraction of the distance (Mitsuba's
/// math::ShadowEpsilon).
inline constexpr float kShadowEpsilon = 1e-3f;

/// √max(x, 0): a square root that rounding below zero cannot turn into NaN.
inline Float safe_sqrt(const Float& x) { return sqrt(max(x, Float(0.0f))); }

}  // namespace kiln::render
