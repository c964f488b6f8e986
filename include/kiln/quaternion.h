// Quaternions of Kiln arrays (one quaternion per lane, a struct of four arrays): the
// Hamilton product, conjugate, reciprocal, exp/log, rotations about an axis, rotating
// vectors, slerp, and conversion to and from rotation matrices. Names and layout follow
// Dr.Jit: Quaternion(x, y, z, w) holds the imaginary parts x, y, z (i, j, k) and the real
// part w last. Everything is componentwise tracing on the public Array API, branch-free
// (select), so it fuses into the surrounding kernel and is differentiable.
#pragma once

#include <kiln/math.h>
#include <kiln/matrix.h>

#include <limits>

namespace kiln {

/// x i + y j + z k + w per lane.
template <typename T> struct Quaternion {
  static_assert(is_array_v<T> && std::is_floating_point_v<typename T::Value>,
                "Quaternion<T>: T must be Float or Float64");
  using Component = T;
  static constexpr size_t Size = 4;

  T x, y, z, w;

  /// Components without nodes (assign them before use).
  Quaternion() = default;
  /// Imaginary parts x, y, z, then the real part w; plain scalars are accepted.
  template <typename X, typename Y, typename Z, typename W>
    requires(std::is_convertible_v<const X&, T> && std::is_convertible_v<const Y&, T> &&
             std::is_convertible_v<const Z&, T> && std::is_convertible_v<const W&, T>)
  Quaternion(const X& x, const Y& y, const Z& z, const W& w) : x(x), y(y), z(z), w(w) {}
  /// The imaginary part `imag` and the real part `real`.
  Quaternion(const Vector<T, 3>& imag, const T& real) : x(imag.x), y(imag.y), z(imag.z), w(real) {}

  /// 0 i + 0 j + 0 k + 1 (size-1 components): the rotation by zero.
  static Quaternion identity() {
    using S = typename T::Value;
    return Quaternion(S(0), S(0), S(0), S(1));
  }

  /// Component `i` (x, y, z, w).
  T& operator[](size_t i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
  const T& operator[](size_t i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
  /// Number of lanes: the largest component size.
  size_t size() const { return std::max({x.size(), y.size(), z.size(), w.size()}); }
};

using Quaternion4f = Quaternion<Float>;
using Quaternion4f64 = Quaternion<Float64>;

template <typename Q> struct is_quaternion : std::false_type {};
template <typename T> struct is_quaternion<Quaternion<T>> : std::true_type {};
template <typename Q> inline constexpr bool is_quaternion_v = is_quaternion<std::decay_t<Q>>::value;

/// Lets eval(), enable_grad(), grad() and check_grads() take quaternions.
template <typename Q, typename F>
  requires is_quaternion_v<Q>
void for_each_array(Q&& q, F&& f) {
  f(q.x), f(q.y), f(q.z), f(q.w);
}

namespace detail {
/// The quaternion whose component i is f(i).
template <typename T, typename F> Quaternion<T> make_quaternion(F&& f) { return Quaternion<T>(f(0), f(1), f(2), f(3)); }
/// The smallest normal value: squared lengths below it count as zero.
template <typename T> inline constexpr typename T::Value kTiny = std::numeric_limits<typename T::Value>::min();
}  // namespace detail

template <typename T> T real(const Quaternion<T>& q) { return q.w; }
template <typename T> Vector<T, 3> imag(const Quaternion<T>& q) { return {q.x, q.y, q.z}; }

// ---- arithmetic ---------------------------------------------------------------------------

template <typename T> Quaternion<T> operator+(const Quaternion<T>& a, const Quaternion<T>& b) {
  return detail::make_quaternion<T>([&](size_t i) { return a[i] + b[i]; });
}
template <typename T> Quaternion<T> operator-(const Quaternion<T>& a, const Quaternion<T>& b) {
  return detail::make_quaternion<T>([&](size_t i) { return a[i] - b[i]; });
}
template <typename T> Quaternion<T> operator-(const Quaternion<T>& a) {
  return detail::make_quaternion<T>([&](size_t i) { return -a[i]; });
}
/// Every component times `s` (an array or a plain scalar).
template <typename T> Quaternion<T> operator*(const Quaternion<T>& a, const std::type_identity_t<T>& s) {
  return detail::make_quaternion<T>([&](size_t i) { return a[i] * s; });
}
template <typename T> Quaternion<T> operator*(const std::type_identity_t<T>& s, const Quaternion<T>& a) {
  return a * s;
}
template <typename T> Quaternion<T> operator/(const Quaternion<T>& a, const std::type_identity_t<T>& s) {
  return a * rcp(s);
}
/// The Hamilton product (i² = j² = k² = ijk = -1); a * b rotates by b, then by a.
template <typename T> Quaternion<T> operator*(const Quaternion<T>& a, const Quaternion<T>& b) {
  return Quaternion<T>(
      fma(a.w, b.x, fma(a.x, b.w, a.y * b.z - a.z * b.y)), fma(a.w, b.y, fma(a.y, b.w, a.z * b.x - a.x * b.z)),
      fma(a.w, b.z, fma(a.z, b.w, a.x * b.y - a.y * b.x)), a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z));
}

/// Per-lane four-component dot product.
template <typename T> T dot(const Quaternion<T>& a, const Quaternion<T>& b) {
  return fma(a.x, b.x, fma(a.y, b.y, fma(a.z, b.z, a.w * b.w)));
}
template <typename T> T squared_norm(const Quaternion<T>& q) { return dot(q, q); }
/// |q| (Dr.Jit's abs(q)).
template <typename T> T norm(const Quaternion<T>& q) { return sqrt(dot(q, q)); }
/// q / |q|; a zero quaternion gives NaN components.
template <typename T> Quaternion<T> normalize(const Quaternion<T>& q) { return q * rsqrt(dot(q, q)); }
/// The conjugate -x i - y j - z k + w: the inverse rotation of a unit quaternion.
template <typename T> Quaternion<T> conj(const Quaternion<T>& q) { return {-q.x, -q.y, -q.z, q.w}; }
/// The multiplicative inverse conj(q) / |q|²; zero gives non-finite components.
template <typename T> Quaternion<T> rcp(const Quaternion<T>& q) { return conj(q) * rcp(squared_norm(q)); }
/// a * rcp(b).
template <typename T> Quaternion<T> operator/(const Quaternion<T>& a, const Quaternion<T>& b) { return a * rcp(b); }

template <typename T> Quaternion<T> select(const Bool& mask, const Quaternion<T>& t, const Quaternion<T>& f) {
  return detail::make_quaternion<T>([&](size_t i) { return select(mask, t[i], f[i]); });
}

// ---- exp and log --------------------------------------------------------------------------
// With r = |imag(q)|: exp(q) = e^w (cos r + imag(q) sin(r) / r) and log(q) = log|q| +
// imag(q) atan2(r, w) / r. The quotients by r are taken in a form that stays finite (and
// keeps finite derivatives) as r reaches 0.

/// The quaternion exponential; exact for real quaternions (r = 0) too.
template <typename T> Quaternion<T> exp(const Quaternion<T>& q) {
  T r2 = squared_norm(imag(q));
  T r = sqrt(max(r2, T(detail::kTiny<T>)));
  auto [s, c] = sincos(r);
  T sinc = select(r2 > detail::kTiny<T>, s / r, T(typename T::Value(1)) - r2 * typename T::Value(1.0 / 6.0));
  T scale = exp(q.w);
  return Quaternion<T>(imag(q) * (sinc * scale), c * scale);
}
/// The principal quaternion logarithm (imaginary part of length at most π). A negative
/// real quaternion (no imaginary part, w < 0) has no rotation axis and gives NaN
/// imaginary parts; zero gives a real part of -inf.
template <typename T> Quaternion<T> log(const Quaternion<T>& q) {
  using S = typename T::Value;
  T r2 = squared_norm(imag(q));
  T r = sqrt(max(r2, T(detail::kTiny<T>)));
  T factor = select(r2 > detail::kTiny<T>, atan2(r, q.w) / r,
                    select(q.w > S(0), rcp(q.w), T(std::numeric_limits<S>::quiet_NaN())));
  return Quaternion<T>(imag(q) * factor, log(squared_norm(q)) * S(0.5));
}

// ---- rotations ------------------------------------------------------------------------------

/// The unit quaternion of a rotation by `angle` radians about `axis` (a unit vector),
/// right-handed (counterclockwise when the axis points at the viewer): (axis sin(angle / 2),
/// cos(angle / 2)).
template <typename Q>
  requires is_quaternion_v<Q>
Q rotate(const Vector<typename Q::Component, 3>& axis, const typename Q::Component& angle) {
  auto [s, c] = sincos(angle * typename Q::Component::Value(0.5));
  return Q(axis * s, c);
}

/// `v` rotated by the unit quaternion `q` (q v q*, computed as v + w t + imag(q) × t with
/// t = 2 imag(q) × v). A quaternion that is not unit also scales v by |q|².
template <typename T> Vector<T, 3> rotate_vector(const Quaternion<T>& q, const Vector<T, 3>& v) {
  Vector<T, 3> u = imag(q);
  Vector<T, 3> t = cross(u, v) * typename T::Value(2);
  return v + t * q.w + cross(u, t);
}

/// Spherical linear interpolation between unit quaternions, along the shorter arc (q1 is
/// negated when dot(q0, q1) < 0; both name the same rotation): t = 0 gives q0, t = 1 gives
/// ±q1, at constant angular speed. Where the two are nearly parallel (cos θ > 0.9995)
/// it normalizes the linear interpolation instead, which avoids 0 / 0; the branch not
/// taken is kept finite so derivatives stay finite as well.
template <typename T> Quaternion<T> slerp(const Quaternion<T>& q0, const Quaternion<T>& q1, const T& t) {
  using S = typename T::Value;
  constexpr S kNearlyParallel = S(0.9995);
  T cos_theta = dot(q0, q1);
  Quaternion<T> q1_near = select(cos_theta < S(0), -q1, q1);
  cos_theta = abs(cos_theta);
  T cos_arc = min(cos_theta, T(kNearlyParallel));
  T theta = acos(cos_arc);
  auto [s, c] = sincos(theta * t);
  Quaternion<T> perpendicular = q1_near - q0 * cos_theta;
  perpendicular = perpendicular * rsqrt(max(squared_norm(perpendicular), T(detail::kTiny<T>)));
  Quaternion<T> arc = q0 * c + perpendicular * s;
  Quaternion<T> lerp = normalize(q0 * (S(1) - t) + q1_near * t);
  return select(cos_theta > kNearlyParallel, lerp, arc);
}

/// The rotation matrix of a unit quaternion: M v = rotate_vector(q, v). M is Matrix3 or
/// Matrix4 (then with the homogeneous row and column of the identity).
template <typename M, typename T>
  requires(is_matrix_v<M> && std::is_same_v<typename M::Component, T> && (M::Size == 3 || M::Size == 4))
M quat_to_matrix(const Quaternion<T>& q) {
  using S = typename T::Value;
  T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  T xw = q.x * q.w, yw = q.y * q.w, zw = q.z * q.w;
  M m = M::identity();
  m(0, 0) = S(1) - S(2) * (yy + zz), m(0, 1) = S(2) * (xy - zw), m(0, 2) = S(2) * (xz + yw);
  m(1, 0) = S(2) * (xy + zw), m(1, 1) = S(1) - S(2) * (xx + zz), m(1, 2) = S(2) * (yz - xw);
  m(2, 0) = S(2) * (xz - yw), m(2, 1) = S(2) * (yz + xw), m(2, 2) = S(1) - S(2) * (xx + yy);
  return m;
}

/// The unit quaternion of a rotation matrix (the upper-left 3 x 3 block of a Matrix4).
/// Each lane takes the one of four formulas (Shepperd's method) whose pivot 4 q_i²,
/// read off the diagonal, is the largest, so it divides by at least 1/2: accurate for
/// every rotation, including 180° ones. All four are computed and chosen with select().
/// The sign is that formula's (q and -q are the same rotation).
template <typename T, size_t N>
  requires(N == 3 || N == 4)
Quaternion<T> matrix_to_quat(const Matrix<T, N>& m) {
  using S = typename T::Value;
  T one(S(1));
  // pivot k = 4 q_k² (x, y, z, w), and the quaternion scaled by 4 q_k
  T pivot[4] = {one + m(0, 0) - m(1, 1) - m(2, 2), one - m(0, 0) + m(1, 1) - m(2, 2), one - m(0, 0) - m(1, 1) + m(2, 2),
                one + m(0, 0) + m(1, 1) + m(2, 2)};
  Quaternion<T> scaled[4] = {{pivot[0], m(1, 0) + m(0, 1), m(0, 2) + m(2, 0), m(2, 1) - m(1, 2)},
                             {m(1, 0) + m(0, 1), pivot[1], m(2, 1) + m(1, 2), m(0, 2) - m(2, 0)},
                             {m(0, 2) + m(2, 0), m(2, 1) + m(1, 2), pivot[2], m(1, 0) - m(0, 1)},
                             {m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1), pivot[3]}};
  T best = pivot[3];
  Quaternion<T> result = scaled[3];
  for (size_t k = 0; k < 3; ++k) {
    Bool larger = pivot[k] > best;
    best = select(larger, pivot[k], best);
    result = select(larger, scaled[k], result);
  }
  return result * (rsqrt(best) * S(0.5));
}

}  // namespace kiln
