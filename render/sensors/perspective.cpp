// The pinhole camera (Mitsuba 3's `perspective`): `fov` along `fov_axis` (x) or a
// `focal_length` (50mm on a 36 x 24 mm frame, the default), `near_clip` 0.01, `far_clip`
// 10000, `to_world` (rotation and translation only), `principal_point_offset_x/y` in
// units of the film; `focus_distance`, which every Mitsuba sensor reads, is accepted and
// unused, as by Mitsuba's pinhole. As in Mitsuba, the field of view is stored as the horizontal one
// (`x_fov`), fixed when the film size later changes. Light paths reach it through
// sample_direction() (the pinhole's importance over the crop window). Rays and connections
// carry the derivatives of `x_fov` and `to_world`.
#include "core/parameter_checks.h"

#include <kiln/math.h>
#include <kiln/render/camera.h>
#include <kiln/render/plugin.h>
#include <kiln/render/sensor.h>
#include <kiln/render/traverse.h>

#include <cmath>
#include <string>

namespace kiln::render {
namespace {

FovAxis parse_fov_axis(const Properties& props) {
  std::string axis = one_of(props, "fov_axis", "x", {"x", "y", "diagonal", "smaller", "larger"});
  if (axis == "y") return FovAxis::Y;
  if (axis == "diagonal") return FovAxis::Diagonal;
  if (axis == "smaller") return FovAxis::Smaller;
  if (axis == "larger") return FovAxis::Larger;
  return FovAxis::X;
}

/// The field of view in degrees and its axis: `fov`, or a focal length in millimetres
/// measured on the diagonal of a 36 x 24 mm frame.
std::pair<double, FovAxis> parse_fov(const Properties& props) {
  if (props.has("fov") && props.has("focal_length"))
    throw_parameter_error(props, "fov", "and 'focal_length' exclude each other: give one");
  if (props.has("fov")) return {props.get_float("fov"), parse_fov_axis(props)};
  std::string text = props.get_string("focal_length", "50mm");
  std::string number = text.ends_with("mm") ? text.substr(0, text.size() - 2) : text;
  double focal_length = 0.0;
  try {
    size_t used = 0;
    focal_length = std::stod(number, &used);
    if (used != number.size()) focal_length = 0.0;
  } catch (const std::exception&) {}
  if (!(focal_length > 0.0) || !std::isfinite(focal_length))
    throw_parameter_error(props, "focal_length", "must look like \"50mm\" (a positive length), got \"" + text + "\"");
  double fov = 2.0 * std::atan(std::sqrt(36.0 * 36.0 + 24.0 * 24.0) / (2.0 * focal_length)) * 180.0 / M_PI;
  return {fov, FovAxis::Diagonal};
}

/// True when the linear part of `m` (row-major) scales: a column's length differs from 1.
bool has_scale(const Matrix4d& m) {
  for (int c = 0; c < 3; ++c) {
    double length = std::sqrt(m[c] * m[c] + m[4 + c] * m[4 + c] + m[8 + c] * m[8 + c]);
    if (std::abs(length - 1.0) > 1e-3) return true;
  }
  return false;
}

class PerspectiveCamera : public Sensor {
 public:
  explicit PerspectiveCamera(const Properties& props) : Sensor(props) {
    auto [fov, axis] = parse_fov(props);
    auto [width, height] = film()->size();
    // Along x the field of view is kept as given (a conversion would round it).
    float x_fov = axis == FovAxis::X ? float(fov) : x_fov_from(Float(float(fov)), axis, width, height).read(0);
    x_fov_ = opaque<Float>(x_fov);
    if (!(x_fov > 0.0f && x_fov < 180.0f))
      throw_parameter_error(
          props, "fov",
          "gives a horizontal field of view of " + std::to_string(x_fov) + " degrees; it must lie in (0, 180)");
    float near_clip = float(props.get_float("near_clip", 1e-2));
    float far_clip = float(props.get_float("far_clip", 1e4));
    if (!(near_clip > 0.0f)) throw_parameter_error(props, "near_clip", "must be positive");
    if (!(near_clip < far_clip)) throw_parameter_error(props, "near_clip", "must be smaller than 'far_clip'");
    near_clip_ = opaque<Float>(near_clip);
    far_clip_ = opaque<Float>(far_clip);
    (void)props.get_float("focus_distance", far_clip);  // read: the loader refuses unread parameters
    Matrix4d to_world = props.get_transform("to_world", kIdentityRows);
    if (has_scale(to_world))
      throw_parameter_error(props, "to_world", "must not scale (a camera transform is a rotation and a translation)");
    to_world_ = Transform4f::from_rows(to_world);
    to_local_ = to_world_.inverse();
    to_local_.make_opaque();
    principal_point_ = {float(props.get_float("principal_point_offset_x", 0.0)),
                        float(props.get_float("principal_point_offset_y", 0.0))};
  }

  std::pair<Ray3f, Color3f> sample_ray(const Array2f& film_position, const Bool&) const override {
    auto [width, height] = film()->size();
    Float aspect = opaque<Float>(float(width) / float(height));
    Array2f position(film_position.x + opaque<Float>(principal_point_[0]),
                     film_position.y + opaque<Float>(principal_point_[1]));
    CameraRays rays = pinhole_rays(to_world_, x_fov_, aspect, near_clip_, far_clip_, position);
    return {Ray3f{rays.origin, rays.direction, rays.max_distance}, Color3f(1.0f, 1.0f, 1.0f)};
  }

  std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Bool& active) const override {
    auto [width, height] = film()->size();
    auto [crop_width, crop_height] = film()->crop_size();
    auto [offset_x, offset_y] = film()->crop_offset();
    Array3f local = to_local_.apply_point(ref_p);
    // pinhole_rays() inverted: the film position whose ray passes through `local`.
    Float tan_half = tan(x_fov_ * (0.5f * kDegreesToRadians));
    Float aspect = opaque<Float>(float(width) / float(height));
    Float plane_x = local.x / local.z, plane_y = local.y / local.z;  // on the plane at depth 1
    Array2f uv(0.5f * (1.0f - plane_x / tan_half) - opaque<Float>(principal_point_[0]),
               0.5f * (1.0f - plane_y * aspect / tan_half) - opaque<Float>(principal_point_[1]));
    Float pixel_x = uv.x * opaque<Float>(float(width)), pixel_y = uv.y * opaque<Float>(float(height));
    // The window sampled: the crop window and, with sample_border, the filter's reach.
    float border = float(film()->border());
    Bool seen = active & (local.z >= near_clip_) & (local.z <= far_clip_) &
                (pixel_x >= opaque<Float>(float(offset_x) - border)) &
                (pixel_x <= opaque<Float>(float(offset_x + crop_width) + border)) &
                (pixel_y >= opaque<Float>(float(offset_y) - border)) &
                (pixel_y <= opaque<Float>(float(offset_y + crop_height) + border));
    // The crop window's area on the plane at depth 1; importance is its inverse over cos³.
    Float crop_area = 4.0f * tan_half * tan_half / aspect *
                      opaque<Float>(float(crop_width) * float(crop_height) / (float(width) * float(height)));
    Float dist = norm(local);
    Float cos_theta = local.z / dist;
    Float importance = rcp(crop_area * cos_theta * cos_theta * cos_theta);

    DirectionSample3f ds;
    ds.p = to_world_.apply_point(Array3f(0.0f, 0.0f, 0.0f));
    ds.n = to_world_.apply_vector(Array3f(0.0f, 0.0f, 1.0f));
    ds.uv = uv;
    ds.d = (ds.p - ref_p) / dist;
    ds.dist = dist;
    ds.pdf = select(seen, Float(1.0f), Float(0.0f));
    ds.delta = Bool(true);
    ds.emitter = UInt32(0u);
    Float weight = select(seen, importance / (dist * dist), Float(0.0f));
    return {ds, Color3f(weight, weight, weight)};
  }

  const Transform4f& world_transform() const override { return to_world_; }

  void traverse(TraversalCallback& callback) override {
    Sensor::traverse(callback);
    callback.put("near_clip", &near_clip_, param_flags::kNonDifferentiable);
    callback.put("far_clip", &far_clip_, param_flags::kNonDifferentiable);
    // Beyond Mitsuba (which flags them non-differentiable): camera rays and the connections
    // of light paths are differentiable in the field of view and the pose; what moving the
    // camera shows or hides is a visibility term.
    callback.put("x_fov", &x_fov_, param_flags::kDiscontinuous);
    callback.put("to_world", &to_world_, param_flags::kDiscontinuous);
  }

  void parameters_changed(const std::vector<std::string>&) override {
    make_opaque(x_fov_, near_clip_, far_clip_);
    to_world_.make_opaque();
    to_local_ = to_world_.inverse();  // once per change, not per connection in the kernels
    to_local_.make_opaque();
  }

 private:
  Float x_fov_;
  Transform4f to_world_;
  Transform4f to_local_;  ///< to_world_'s inverse, for sample_direction()
  Float near_clip_, far_clip_;
  std::array<float, 2> principal_point_{};
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Sensor, "perspective",
                     [](const Properties& p) { return std::make_shared<PerspectiveCamera>(p); });

}  // namespace kiln::render
