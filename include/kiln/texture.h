// Texture<T, Dim>: a 1-D, 2-D or 3-D grid of texels with any number of channels, read at
// continuous positions with nearest, linear or cubic B-spline filtering and a wrap mode
// (repeat, clamp, mirror), as Dr.Jit's Texture (without hardware acceleration).
//
// The texels are one flat Kiln array laid out as a tensor of shape (resolution...,
// channels), outermost axis first: a 2-D texture is (height, width, channels) and x runs
// along the width. A read is ordinary traced code, one gather per tap and channel, so it
// fuses into the surrounding kernel and is differentiable without rules of its own:
// gradients reach the texels through the gathers (their adjoint is a scatter_add) and the
// position through the filter weights (linear and cubic filtering).
#pragma once

#include <kiln/tensor.h>

#include <array>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

/// How a texture reads between texel centers.
enum class FilterMode : uint8_t {
  Nearest,  ///< the texel the position falls in
  Linear,   ///< the 2^Dim nearest texel centers, weighted by distance
};
/// Which texel a read outside the grid uses.
enum class WrapMode : uint8_t {
  Repeat,  ///< the grid tiles the space
  Clamp,   ///< the nearest texel at the border
  Mirror,  ///< the grid tiles the space, every other copy mirrored
};

/// A grid of texels read at positions in [0, 1]^Dim: texel i's center along an axis of
/// resolution n is at (i + 0.5) / n. T is Float or Float64.
template <typename T, size_t Dim> class Texture {
  static_assert(is_array_v<T> && std::is_floating_point_v<typename T::Value>,
                "Texture<T, Dim>: T must be Float or Float64");
  static_assert(Dim >= 1 && Dim <= 3, "Texture<T, Dim>: Dim must be 1, 2 or 3");

 public:
  using Value = typename T::Value;
  using ArrayType = T;
  static constexpr size_t Dimension = Dim;
  /// One coordinate per axis, x first: an array for a 1-D texture, else a vector.
  using Position = std::conditional_t<Dim == 1, T, Vector<T, Dim>>;
  /// Every resolution is at most this (mirrored wrapping works modulo twice the resolution).
  static constexpr size_t kMaxResolution = size_t(1) << 30;

  /// A texture of zeros; `resolution` is outermost axis first ({height, width} in 2-D).
  Texture(const std::array<size_t, Dim>& resolution, size_t channels, FilterMode filter = FilterMode::Linear,
          WrapMode wrap = WrapMode::Clamp)
      : filter_(filter), wrap_(wrap) {
    Shape shape(resolution.begin(), resolution.end());
    shape.push_back(channels);
    assign(Tensor<Value>::zeros(checked_shape(shape, "")), "");
  }
  /// A texture holding `tensor`, of shape (resolution..., channels).
  explicit Texture(const Tensor<Value>& tensor, FilterMode filter = FilterMode::Linear, WrapMode wrap = WrapMode::Clamp)
      : filter_(filter), wrap_(wrap) {
    assign(tensor, "");
  }

  /// The texels as one flat array (row-major over shape()).
  const T& value() const { return value_; }
  /// Replaces the texels by `value`, which must have as many elements.
  void set_value(const T& value) {
    if (value.size() != value_.size())
      throw SizeError("kiln: " + name() + ".set_value(): " + std::to_string(value.size()) +
                      " elements given for a texture of shape " + detail::shape_string(shape_) + " (" +
                      std::to_string(value_.size()) +
                      " elements); pass that many, or use set_tensor() to "
                      "change the shape");
    value_ = value;
  }
  /// The texels as a tensor of shape().
  Tensor<Value> tensor() const { return Tensor<Value>(value_, shape_); }
  /// Replaces the texels and the shape: `tensor` has Dim + 1 axes (resolution..., channels).
  void set_tensor(const Tensor<Value>& tensor) { assign(tensor, ".set_tensor"); }
  /// (resolution..., channels), outermost axis first.
  const Shape& shape() const { return shape_; }
  size_t channels() const { return shape_[Dim]; }
  FilterMode filter_mode() const { return filter_; }
  WrapMode wrap_mode() const { return wrap_; }
  /// "Texture2f" and so on: the alias (and the Python class) naming this type.
  static std::string name() { return "Texture" + std::to_string(Dim) + (std::is_same_v<Value, float> ? "f" : "f64"); }

  /// One array per channel: the texture filtered by filter_mode() at `pos`. Inactive
  /// lanes give 0; a lane with a non-finite coordinate gives NaN (and no gradients).
  std::vector<T> eval(const Position& pos, const Bool& active = Bool(true)) const {
    check_lanes(pos, active, ".eval");
    return filter_ == FilterMode::Nearest ? read(pos, active, Footprint::Nearest)
                                          : read(pos, active, Footprint::Linear);
  }
  /// One array per channel: the texels convolved with the uniform cubic B-spline at `pos`
  /// (4^Dim taps, C2-smooth, not interpolating: at a texel center it gives (1 4 1)/6
  /// weights per axis), whatever filter_mode() is. Inactive and non-finite lanes as eval().
  std::vector<T> eval_cubic(const Position& pos, const Bool& active = Bool(true)) const {
    check_lanes(pos, active, ".eval_cubic");
    return read(pos, active, Footprint::Cubic);
  }

 private:
  enum class Footprint { Nearest, Linear, Cubic };
  /// One texel read along one axis: its offset in value_ (index times stride) and its
  /// weight, which has no node for nearest filtering (a weight of 1 needs no product).
  struct Tap {
    UInt32 offset;
    T weight;
  };

  /// `method` is "" (a constructor) or ".set_tensor".
  void assign(const Tensor<Value>& tensor, const char* method) {
    shape_ = checked_shape(tensor.shape(), method);
    value_ = tensor.array();
  }
  Shape checked_shape(const Shape& shape, const char* method) const {
    std::string what = name() + method;
    std::string expected = Dim == 1   ? "(width, channels)"
                           : Dim == 2 ? "(height, width, channels)"
                                      : "(depth, height, width, channels)";
    if (shape.size() != Dim + 1)
      throw ValueError("kiln: " + what + "(): a " + std::to_string(Dim) + "-D texture needs the shape " + expected +
                       "; got " + detail::shape_string(shape));
    for (size_t axis = 0; axis <= Dim; ++axis) {
      if (shape[axis] == 0)
        throw ValueError("kiln: " + what + "(): shape " + detail::shape_string(shape) + " has " +
                         (axis == Dim ? "no channels" : "a resolution of 0") + "; every entry of " + expected +
                         " must be at least 1");
      if (axis < Dim && shape[axis] > kMaxResolution)
        throw SizeError("kiln: " + what + "(): a resolution of " + std::to_string(shape[axis]) +
                        " exceeds the largest supported, 2^30");
    }
    detail::element_count(shape, what.c_str());  // SizeError beyond 32-bit indices
    return shape;
  }

  /// SizeError unless the coordinates and the mask have one size (or one lane).
  static void check_lanes(const Position& pos, const Bool& active, const char* method) {
    std::string sizes;
    size_t lanes = active.size();
    bool mismatch = false;
    for (size_t axis = 0; axis < Dim; ++axis) {
      size_t n = coordinate(pos, axis).size();
      mismatch |= n != lanes && n > 1 && lanes > 1;
      lanes = std::max(lanes, n);
      sizes += (axis ? ", " : "") + std::to_string(n);
    }
    if (mismatch)
      throw SizeError("kiln: " + name() + method + "(): the coordinates have " + sizes + " lanes and the mask " +
                      std::to_string(active.size()) + "; they must have the same number of lanes (or one)");
  }

  static const T& coordinate(const Position& pos, size_t axis) {
    if constexpr (Dim == 1)
      return pos;
    else
      return pos[axis];
  }

  /// The texel coordinate `i` (any integer) mapped into [0, resolution) by the wrap mode.
  Int32 wrap(const Int32& i, int32_t resolution) const {
    switch (wrap_) {
      case WrapMode::Clamp: return min(max(i, Int32(0)), Int32(resolution - 1));
      case WrapMode::Repeat: {
        Int32 r = i % resolution;
        return select(r < 0, r + resolution, r);
      }
      case WrapMode::Mirror: {
        int32_t period = 2 * resolution;
        Int32 r = i % period;
        r = select(r < 0, r + period, r);
        return select(r >= resolution, period - 1 - r, r);
      }
    }
    throw InternalError("kiln: Texture: unknown wrap mode");
  }

  /// The taps along `axis` (x = 0) for a position: one (nearest), two (linear) or four
  /// (cubic B-spline) texels and their weights.
  std::vector<Tap> taps(const T& coordinate, size_t axis, Footprint footprint) const {
    int32_t resolution = int32_t(shape_[Dim - 1 - axis]);
    uint32_t stride = uint32_t(channels());
    for (size_t a = Dim - axis; a < Dim; ++a) stride *= uint32_t(shape_[a]);
    // Texel coordinates are clamped before they become integers, far enough inside the
    // Int32 range that the neighbours of the last texel do not overflow.
    constexpr Value kLimit = Value(2147483520.0);  // 2^31 - 128, exact in float
    auto tap_offset = [&](const T& t, int32_t offset) {
      Int32 i = cast<int32_t>(min(max(t, T(-kLimit)), T(kLimit))) + offset;
      return reinterpret<uint32_t>(wrap(i, resolution)) * stride;
    };
    if (footprint == Footprint::Nearest) return {{tap_offset(floor(coordinate * Value(resolution)), 0), T()}};
    T scaled = fma(coordinate, T(Value(resolution)), T(Value(-0.5)));
    T first = floor(scaled);
    T a = scaled - first;  // the derivative with respect to the position flows through here
    if (footprint == Footprint::Linear) return {{tap_offset(first, 0), Value(1) - a}, {tap_offset(first, 1), a}};
    T b = Value(1) - a, a2 = a * a, a3 = a2 * a;
    constexpr Value kSixth = Value(1.0 / 6.0);
    return {{tap_offset(first, -1), b * b * b * kSixth},
            {tap_offset(first, 0), fma(a3, Value(3), fma(a2, Value(-6), T(Value(4)))) * kSixth},
            {tap_offset(first, 1), fma(a3, Value(-3), fma(a2, Value(3), fma(a, Value(3), T(Value(1))))) * kSixth},
            {tap_offset(first, 2), a3 * kSixth}};
  }

  /// The weighted sum, over every combination of one tap per axis, of the gathered texels.
  std::vector<T> read(const Position& pos, const Bool& active, Footprint footprint) const {
    Bool valid = active;
    std::array<std::vector<Tap>, Dim> axes;
    for (size_t axis = 0; axis < Dim; ++axis) {
      valid = valid & isfinite(coordinate(pos, axis));
      axes[axis] = taps(coordinate(pos, axis), axis, footprint);
    }
    size_t count = 1;
    for (const auto& axis : axes) count *= axis.size();
    std::vector<T> sums(channels());
    for (size_t corner = 0; corner < count; ++corner) {
      UInt32 offset = axes[0][corner % axes[0].size()].offset;
      T weight = axes[0][corner % axes[0].size()].weight;
      for (size_t axis = 1, rest = corner / axes[0].size(); axis < Dim; rest /= axes[axis].size(), ++axis) {
        const Tap& tap = axes[axis][rest % axes[axis].size()];
        offset = offset + tap.offset;
        if (weight.valid()) weight = weight * tap.weight;
      }
      for (size_t channel = 0; channel < channels(); ++channel) {
        T texel = gather(value_, offset + uint32_t(channel), valid);
        if (!weight.valid())
          sums[channel] = texel;
        else
          sums[channel] = corner == 0 ? weight * texel : fma(weight, texel, sums[channel]);
      }
    }
    T outside = select(active, T(std::numeric_limits<Value>::quiet_NaN()), T(Value(0)));
    for (T& sum : sums) sum = select(valid, sum, outside);
    return sums;
  }

  T value_;
  Shape shape_;
  FilterMode filter_;
  WrapMode wrap_;
};

template <typename T> using Texture1 = Texture<T, 1>;
template <typename T> using Texture2 = Texture<T, 2>;
template <typename T> using Texture3 = Texture<T, 3>;
using Texture1f = Texture1<Float>;
using Texture2f = Texture2<Float>;
using Texture3f = Texture3<Float>;
using Texture1f64 = Texture1<Float64>;
using Texture2f64 = Texture2<Float64>;
using Texture3f64 = Texture3<Float64>;

template <typename X> struct is_texture : std::false_type {};
template <typename T, size_t Dim> struct is_texture<Texture<T, Dim>> : std::true_type {};
template <typename X> inline constexpr bool is_texture_v = is_texture<std::decay_t<X>>::value;

/// Lets eval(), enable_grad(), grad() and detach() take textures: a texture is made of
/// its texel array.
template <typename X, typename F>
  requires is_texture_v<X>
void for_each_array(X&& texture, F&& f) {
  if constexpr (std::is_const_v<std::remove_reference_t<X>>)
    f(texture.value());
  else {
    auto value = texture.value();
    f(value);
    texture.set_value(value);
  }
}

}  // namespace kiln
