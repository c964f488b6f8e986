// The sphere (Mitsuba 3's `sphere`): `center` (0), `radius` (1) and `to_world` (which must
// scale uniformly), `flip_normals`. Traced exactly (accel.h); uv is (φ / 2π, θ / π) in the
// sphere's local frame; emitters on it sample the cone of directions it subtends.
#include "core/parameter_checks.h"

#include "shapes/placed_shape.h"

#include <kiln/math.h>
#include <kiln/render/frame.h>
#include <kiln/render/plugin.h>
#include <kiln/render/warp.h>

#include <cmath>

namespace kiln::render {
namespace {

/// The circle where the sphere's visible cap ends, seen from a point outside: at distance
/// D from the centre, the points whose direction from the centre makes cos = r / D with the
/// viewpoint's. Computed per lane, so each lane may have its own viewpoint.
class SphereSilhouette : public Silhouette {
 public:
  /// `center` and `radius` with their derivatives; `weight` as Silhouette::weight() says.
  SphereSilhouette(const Array3f& center, const Float& radius, float weight) : center_(center), radius_(radius) {
    weight_ = weight;
  }

  SilhouetteSample sample(const Array2f& sample, const Array3f& viewpoint) const override {
    Array3f center = detach(center_), towards = viewpoint - center;
    Float radius = detach(radius_), distance = norm(towards);
    Array3f w = towards / distance;
    auto [e1, e2] = coordinate_system(w);
    Float cos_cap = radius / distance, sin_cap = safe_sqrt(1.0f - cos_cap * cos_cap);
    Float phi = sample.x * (2.0f * kPi), cos_phi = cos(phi), sin_phi = sin(phi);
    SilhouetteSample ss;
    ss.normal = w * cos_cap + (e1 * cos_phi + e2 * sin_phi) * sin_cap;  // unit: the direction from the centre
    ss.p = center_ + ss.normal * radius_;
    ss.tangent = e2 * cos_phi - e1 * sin_phi;
    Float circle_radius = radius * sin_cap;
    // Points on the sphere itself (shading points on it) see no silhouette of it.
    ss.valid = (distance > radius * (1.0f + 1e-4f)) & (circle_radius > 0.0f);
    ss.pdf = select(ss.valid, rcp(circle_radius * (2.0f * kPi)), Float(0.0f));
    return ss;
  }

 private:
  Array3f center_;
  Float radius_;
};

class Sphere : public PlacedShape {
 public:
  explicit Sphere(const Properties& props)
      : PlacedShape(props), flip_requested_(props.get_bool("flip_normals", false)) {
    // to_world · Translate(center) · Scale(radius), composed on the host.
    Matrix4d m = props.get_transform("to_world", kIdentityRows);
    Vector3d center = props.get_vector("center", {0, 0, 0});
    double radius = props.get_float("radius", 1.0);
    if (!(radius >= 0.0) || !std::isfinite(radius))
      throw_parameter_error(props, "radius", "must be a finite number >= 0, got " + std::to_string(radius));
    for (int r = 0; r < 3; ++r) {
      m[r * 4 + 3] += m[r * 4] * center[0] + m[r * 4 + 1] * center[1] + m[r * 4 + 2] * center[2];
      for (int c = 0; c < 3; ++c) m[r * 4 + c] *= radius;
    }
    place(m);
  }

  AccelGeometry accel_geometry() const override {
    return AccelSphere{{host_center_[0], host_center_[1], host_center_[2]}, host_radius_};
  }

  SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit, const Bool&,
                                                 const Bool& follow_shape) const override {
    SurfaceInteraction si;
    si.t = hit.t;
    if (moving(ray)) {
      // The hit slides along the ray as the sphere or the ray moves: the root the tracer
      // found, solved again differentiably (values the tracer's, derivatives the solve's).
      Array3f oc = ray.o - center_;
      Float a = dot(ray.d, ray.d), b = dot(oc, ray.d), c = dot(oc, oc) - radius_ * radius_;
      Float root = safe_sqrt(b * b - a * c);
      Float near = (-b - root) / a, far = (-b + root) / a;
      Float t = select(abs(near - hit.t) <= abs(far - hit.t), near, far);
      si.t = hit.t + derivatives_without_values(t);
    }
    // Projected back onto the sphere, which is more accurate than o + t·d.
    Array3f outward = normalize(ray(si.t) - center_);
    si.p = center_ + outward * radius_;
    if (moving(ray)) {
      si.p = select(follow_shape, carried(si.p), si.p);
      outward = normalize(si.p - center_);
    }
    Array3f local = to_world_.inverse().apply_point(si.p);
    Float theta = acos(min(max(local.z, Float(-1.0f)), Float(1.0f)));
    Float phi = atan2(local.y, local.x);
    phi = select(phi < 0.0f, phi + 2.0f * kPi, phi);
    si.uv = Array2f(phi * kInvTwoPi, theta * kInvPi);
    Float rd = sqrt(local.x * local.x + local.y * local.y);
    Float inv_rd = rcp(rd);
    Array3f dp_dv_local(local.z * local.x * inv_rd, local.z * local.y * inv_rd, -rd);
    dp_dv_local = select(rd == 0.0f, Array3f(1.0f, 0.0f, 0.0f) + dp_dv_local * 0.0f, dp_dv_local);
    si.dp_du = to_world_.apply_vector(Array3f(-local.y, local.x, Float(0.0f))) * (2.0f * kPi);
    si.dp_dv = to_world_.apply_vector(dp_dv_local) * kPi;
    si.n = flip_normals_ ? -outward : outward;
    si.sh_frame.n = si.n;
    si.prim_index = hit.prim_index;
    return si;
  }

  PositionSample3f sample_position(const Array2f& sample, const Bool&) const override {
    Array3f local = warp::square_to_uniform_sphere(sample);
    PositionSample3f ps;
    ps.p = to_world_.apply_point(local);
    Array3f outward = normalize(ps.p - center_);
    ps.n = flip_normals_ ? -outward : outward;
    ps.pdf = rcp(surface_area()) + zeros<Float>(sample.x.size());
    ps.delta = full<Bool>(host_radius_ == 0.0, sample.x.size());
    Float phi = atan2(local.y, local.x);
    phi = select(phi < 0.0f, phi + 2.0f * kPi, phi);
    ps.uv = Array2f(phi * kInvTwoPi, acos(min(max(local.z, Float(-1.0f)), Float(1.0f))) * kInvPi);
    return ps;
  }

  DirectionSample3f sample_direction(const Array3f& ref_p, const Array2f& sample, const Bool& active) const override {
    // From outside: uniform in the cone the sphere subtends (Akalin's visible-sphere
    // sampling); from inside: uniform on the surface.
    Array3f to_center = center_ - ref_p;
    Float dist2_center = squared_norm(to_center);
    Bool outside = dist2_center > radius_ * radius_ * (1.0f - kRayEpsilon);
    Float inv_dc = rsqrt(dist2_center);
    Float sin_max = radius_ * inv_dc, sin_max2 = sin_max * sin_max, inv_sin_max = rcp(sin_max);
    Float cos_max = safe_sqrt(1.0f - sin_max2);
    // A Taylor expansion for small cones avoids the cancellation in 1 - cos².
    Float one_minus = (cos_max - 1.0f) * sample.x + 1.0f;
    Float sin2 = select(sin_max2 > 0.00068523f, 1.0f - one_minus * one_minus, sin_max2 * sample.x);
    Float cos_theta = safe_sqrt(1.0f - sin2);
    Float cos_alpha = sin2 * inv_sin_max + cos_theta * safe_sqrt(1.0f - sin2 * inv_sin_max * inv_sin_max);
    Float sin_alpha = safe_sqrt(1.0f - cos_alpha * cos_alpha);
    Float angle = sample.y * (2.0f * kPi);
    Array3f cone_d =
        Frame3f(to_center * -inv_dc).to_world(Array3f(cos(angle) * sin_alpha, sin(angle) * sin_alpha, cos_alpha));
    Array3f sphere_d = warp::square_to_uniform_sphere(sample);
    Array3f d = select(outside, cone_d, sphere_d);

    DirectionSample3f ds;
    ds.p = center_ + d * radius_;
    ds.n = flip_normals_ ? -d : d;
    ds.uv = Array2f(zeros<Float>(sample.x.size()), zeros<Float>(sample.x.size()));
    Array3f to_point = ds.p - ref_p;
    Float dist2 = squared_norm(to_point);
    ds.dist = sqrt(dist2);
    ds.d = to_point / ds.dist;
    Float cone_pdf =
        select(ds.dist == 0.0f, Float(0.0f), warp::square_to_uniform_cone_pdf(Array3f(0.0f, 0.0f, 1.0f), cos_max));
    Float surface_pdf = rcp(surface_area()) * dist2 / abs(dot(ds.d, ds.n));
    ds.pdf = select(active, select(outside, cone_pdf, surface_pdf), Float(0.0f));
    ds.delta = full<Bool>(host_radius_ == 0.0, sample.x.size());
    ds.emitter = zeros<UInt32>(sample.x.size());
    return ds;
  }

  Float pdf_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const override {
    Float sin_alpha = radius_ * rcp(norm(center_ - ref_p));
    Float cos_alpha = safe_sqrt(1.0f - sin_alpha * sin_alpha);
    Float cone_pdf = warp::square_to_uniform_cone_pdf(Array3f(0.0f, 0.0f, 1.0f), cos_alpha);
    Float surface_pdf = rcp(surface_area()) * ds.dist * ds.dist / abs(dot(ds.d, ds.n));
    return select(active, select(sin_alpha < 0x1.fffffep-1f, cone_pdf, surface_pdf), Float(0.0f));
  }

  Float surface_area() const override { return 4.0f * kPi * radius_ * radius_; }

  std::unique_ptr<Silhouette> silhouette(const std::array<float, 3>& eye) const override {
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) d2 += (eye[k] - host_center_[k]) * (eye[k] - host_center_[k]);
    double r2 = host_radius_ * host_radius_;
    if (!(d2 > r2) || host_radius_ == 0.0) return nullptr;
    // The circle's length over its distance from the eye.
    float weight = float(2.0 * M_PI * host_radius_ * std::sqrt(1.0 - r2 / d2) / std::sqrt(d2 - r2));
    return std::make_unique<SphereSilhouette>(center_, radius_, weight);
  }

  std::unique_ptr<Silhouette> silhouettes() const override {
    if (host_radius_ == 0.0) return nullptr;
    return std::make_unique<SphereSilhouette>(center_, radius_, float(2.0 * M_PI * host_radius_));
  }
  std::pair<std::array<float, 3>, std::array<float, 3>> bounding_box() const override {
    std::array<float, 3> lower, upper;
    for (int k = 0; k < 3; ++k) {
      lower[k] = float(host_center_[k] - host_radius_);
      upper[k] = float(host_center_[k] + host_radius_);
    }
    return {lower, upper};
  }

 private:
  /// Center and radius from to_world (the image of the origin and of a unit x step; with
  /// its derivatives when it has them); a mirroring to_world turns the normals inwards, as
  /// in Mitsuba.
  void update() override {
    Matrix4d m = to_world_.to_rows();
    host_center_ = {m[3], m[7], m[11]};
    host_radius_ = std::sqrt(m[0] * m[0] + m[4] * m[4] + m[8] * m[8]);
    double det =
        m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) + m[2] * (m[4] * m[9] - m[5] * m[8]);
    flip_normals_ = flip_requested_ != (det < 0);
    if (grad_enabled(to_world_.matrix())) {
      center_ = to_world_.apply_point(Array3f(0.0f, 0.0f, 0.0f));
      radius_ = norm(to_world_.apply_vector(Array3f(1.0f, 0.0f, 0.0f)));
      return;
    }
    center_ = Array3f(opaque<Float>(float(host_center_[0])), opaque<Float>(float(host_center_[1])),
                      opaque<Float>(float(host_center_[2])));
    radius_ = opaque<Float>(float(host_radius_));
  }

  bool flip_requested_, flip_normals_ = false;
  Array3f center_;
  Float radius_;
  Vector3d host_center_{};
  double host_radius_ = 1.0;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Shape, "sphere", [](const Properties& p) { return std::make_shared<Sphere>(p); });

}  // namespace kiln::render
