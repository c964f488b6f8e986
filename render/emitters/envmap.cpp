// The environment map (Mitsuba 3's `envmap`): radiance arriving from infinitely far away,
// read from a latitude-longitude image (`filename`, or load_dict's `bitmap` / `data`),
// importance sampled in proportion to luminance × sin θ, for directions seen from a point
// and for light paths entering the scene's bounding sphere (sample_ray).
//
// The mapping is Mitsuba's: in the emitter's frame (to_world⁻¹ applied) +y is up; a direction
// d has u = atan2(d.x, -d.z) / 2π (so u = 0 looks along -z and u grows towards +x) and
// v = acos(d.y) / π (the top row is the zenith). Pixel columns are centred at
// u = (x + ½) / width and repeat around the horizon; rows sit at v = y / (height - 1), so the
// first and last rows are the poles. Radiance is the bilinear interpolation of the pixels.
// The sampling density is the bilinear interpolant over a grid whose vertices are those pixel
// centres (one extra column closes the circle), as Mitsuba's Hierarchical2D gives it.
#include <kiln/elementwise.h>
#include <kiln/math.h>
#include <kiln/render/distribution_2d.h>
#include <kiln/render/image.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "core/parameter_checks.h"
#include "emitters/common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kiln::render {
namespace {

/// Dr.Jit's Epsilon<float> (2^-24): the smallest sin θ the Jacobian divides by.
constexpr float kEpsilon = 5.9604645e-8f;

class EnvironmentMap : public InfiniteEmitter {
 public:
  explicit EnvironmentMap(const Properties& props)
      : to_world_(Transform4f::from_rows(props.get_transform("to_world", kIdentityRows))) {
    flags_ = emitter_flags::kInfinite | emitter_flags::kSpatiallyVarying;
    Bitmap image = pad_image(color_channels(image_source(props, false), 3), 2, 3);
    width_ = uint32_t(image.width);
    height_ = uint32_t(image.height);
    if (auto value = non_finite(image.pixels))
      throw_parameter_error(props, "filename",
                            "names an image holding " + std::to_string(*value) + "; every value must be finite");
    double scale = props.get_float("scale", 1.0);
    if (!(scale >= 0 && std::isfinite(scale)))
      throw_parameter_error(props, "scale", "must be a finite number >= 0, got " + std::to_string(scale));
    scale_ = opaque<Float>(float(scale));
    mis_compensation_ = props.get_bool("mis_compensation", false);
    data_ = Float::from(image.pixels);
    build_distribution(image.pixels);
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f& sample,
                                                         const Bool& active) const override {
    Towards towards = sample_towards(sample, active);
    DirectionSample3f ds;
    ds.dist = sample_distance(ref_p);
    ds.p = ref_p + towards.d * ds.dist;
    ds.n = -towards.d;
    ds.uv = towards.uv;
    ds.pdf = towards.pdf;
    ds.delta = Bool(false);
    ds.d = towards.d;
    ds.emitter = UInt32(0u);
    Color3f weight = radiance(towards.uv, towards.valid) / ds.pdf;
    return {ds, select(towards.valid, weight, Color3f(0.0f, 0.0f, 0.0f))};
  }

  /// A light path entering the scene: a direction from the map's importance, the origin
  /// uniform on the disk of the bounding sphere's radius that faces it, outside the sphere
  /// (Mitsuba's scheme, with the disk perpendicular to the world-space direction).
  std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f& direction_sample,
                                       const Bool& active) const override {
    Towards towards = sample_towards(direction_sample, active);
    Array2f offset = warp::square_to_uniform_disk_concentric(position_sample);
    const Float& radius = scene_radius();
    Array3f across = Frame3f(towards.d).to_world(Array3f(offset.x, offset.y, Float(0.0f)));
    Ray3f ray{scene_center() + (across + towards.d) * radius, -towards.d, Float(kInfinity)};
    Color3f weight = radiance(towards.uv, towards.valid) * (kPi * radius * radius) / towards.pdf;
    return {ray, select(towards.valid, weight, Color3f(0.0f, 0.0f, 0.0f))};
  }

  Float pdf_direction(const Array3f&, const DirectionSample3f& ds, const Bool& active) const override {
    Array3f d = to_world_.inverse().apply_vector(ds.d);
    Array2f uv = direction_to_uv(d);
    uv.x = uv.x - 0.5f / float(width_);
    uv.x = uv.x - floor(uv.x);
    Float inv_sin_theta = rsqrt(max(d.x * d.x + d.z * d.z, Float(kEpsilon * kEpsilon)));
    Float pdf = distribution_.eval(uv, active) * inv_sin_theta * (1.0f / (2.0f * kPi * kPi));
    return select(active, pdf, Float(0.0f));
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    Array3f d = to_world_.inverse().apply_vector(-si.wi);
    return radiance(direction_to_uv(d), active);
  }

  void traverse(TraversalCallback& callback) override {
    callback.put("scale", &scale_, param_flags::kDifferentiable);
    callback.put("data", &data_, param_flags::kDifferentiable | param_flags::kDiscontinuous);
    callback.put("to_world", &to_world_, param_flags::kNonDifferentiable);
  }

  void parameters_changed(const std::vector<std::string>& keys) override {
    if (!keys.empty() && std::find(keys.begin(), keys.end(), "data") == keys.end()) return;
    std::vector<float> pixels = data_.to_vector();
    if (auto value = non_finite(pixels))
      throw_parameter_error(*this, "data", "holds " + std::to_string(*value) + "; every value must be finite");
    build_distribution(pixels);
  }

 private:
  /// A direction towards the map (world space) sampled by importance: its uv, its density
  /// per unit solid angle, and the lanes where it is valid.
  struct Towards {
    Array2f uv;
    Array3f d;
    Float pdf;
    Bool valid;
  };
  Towards sample_towards(const Array2f& sample, const Bool& active) const {
    auto [uv, pdf] = distribution_.sample(sample, active);
    uv.x = uv.x + 0.5f / float(width_);  // the grid's vertices are the pixel centres
    Bool valid = active & (pdf > 0.0f);
    Float theta = uv.y * kPi, phi = uv.x * (2.0f * kPi);
    auto [sin_theta, cos_theta] = sincos(theta);
    auto [sin_phi, cos_phi] = sincos(phi);
    Float inv_sin_theta = rcp(max(sin_theta, Float(kEpsilon)));
    Array3f d = to_world_.apply_vector(Array3f(sin_phi * sin_theta, cos_theta, -cos_phi * sin_theta));
    return {uv, d, select(valid, pdf * inv_sin_theta * (1.0f / (2.0f * kPi * kPi)), Float(0.0f)), valid};
  }

  /// The first value of `values` that is not finite, or nothing.
  static std::optional<float> non_finite(const std::vector<float>& values) {
    auto found = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
    return found == values.end() ? std::nullopt : std::optional<float>(*found);
  }

  /// The latitude-longitude coordinates of the local direction `d` (see the top of the file).
  static Array2f direction_to_uv(const Array3f& d) {
    return Array2f(atan2(d.x, -d.z) * kInvTwoPi, acos(clamp(d.y, -1.0f, 1.0f)) * kInvPi);
  }

  /// The radiance at `uv`: the pixels interpolated bilinearly, columns wrapping around the
  /// horizon and rows clamped at the poles, times `scale`.
  Color3f radiance(const Array2f& uv, const Bool& active) const {
    Float x = (uv.x - floor(uv.x)) * float(width_) - 0.5f;
    Float y = clamp(uv.y, 0.0f, 1.0f) * float(height_ - 1);
    Float x_floor = floor(x);
    Float fx = x - x_floor;
    Int32 left = cast<int32_t>(x_floor);  // -1 left of the first pixel centre
    UInt32 x0 = reinterpret<uint32_t>(select(left < 0, left + int32_t(width_), left));
    UInt32 x1 = select(x0 + 1u == width_, UInt32(0u), x0 + 1u);
    UInt32 y0 = min(cast<uint32_t>(floor(y)), UInt32(height_ - 2));
    Float fy = y - Float(cast<float>(y0));
    auto pixel = [&](const UInt32& column, const UInt32& row) {
      return gather<Color3f>(data_, row * width_ + column, active);
    };
    Color3f top = lerp3(pixel(x0, y0), pixel(x1, y0), fx);
    Color3f bottom = lerp3(pixel(x0, y0 + 1u), pixel(x1, y0 + 1u), fx);
    return select(active, lerp3(top, bottom, fy) * scale_, Color3f(0.0f, 0.0f, 0.0f));
  }

  static Color3f lerp3(const Color3f& a, const Color3f& b, const Float& t) {
    return Color3f(lerp(a.x, b.x, t), lerp(a.y, b.y, t), lerp(a.z, b.z, t));
  }

  /// The sampling grid from the pixels `rgb`: width + 1 columns (the last repeats the first)
  /// by height rows of luminance (less the mean with mis_compensation, clamped at 0) × sin θ.
  void build_distribution(const std::vector<float>& rgb) {
    std::vector<float> lum(size_t(width_) * height_);
    for (size_t i = 0; i < lum.size(); ++i) lum[i] = luminance(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
    float offset = 0;
    if (mis_compensation_) {
      // Karlík et al., "MIS Compensation" (2019): sample less where the map is near its mean,
      // unless the map is close to constant.
      double sum = 0;
      float smallest = std::numeric_limits<float>::infinity();
      for (float value : lum) {
        sum += value;
        smallest = std::min(smallest, value);
      }
      offset = float(sum / double(lum.size()));
      if (offset - smallest <= 0.01f * offset) offset = 0;
    }
    std::vector<float> grid((width_ + 1) * size_t(height_));
    for (size_t y = 0; y < height_; ++y) {
      float sin_theta = float(std::max(0.0, std::sin(double(y) * M_PI / double(height_ - 1))));
      for (size_t x = 0; x <= width_; ++x)
        grid[y * (width_ + 1) + x] = std::max(lum[y * width_ + x % width_] - offset, 0.0f) * sin_theta;
    }
    distribution_ = ContinuousDistribution2D(grid, width_ + 1, height_);
  }

  Transform4f to_world_;
  Float data_;  ///< height x width x RGB, rows from the zenith down
  Float scale_;
  uint32_t width_ = 0, height_ = 0;
  bool mis_compensation_ = false;
  ContinuousDistribution2D distribution_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Emitter, "envmap",
                     [](const Properties& props) { return std::make_shared<EnvironmentMap>(props); });

}  // namespace kiln::render
