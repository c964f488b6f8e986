// The disk (Mitsuba 3's `disk`): the unit disk at z = 0 facing +z, placed by `to_world`
// (any affine map: an ellipse under non-uniform scaling), `flip_normals`. Traced exactly
// (accel.h); uv = (radius, azimuth / 2π).
#include "shapes/placed_shape.h"

#include <kiln/math.h>
#include <kiln/render/plugin.h>
#include <kiln/render/warp.h>

#include <cmath>

namespace kiln::render {
namespace {

/// The disk's rim: every point of it is an open boundary, seen from anywhere.
class DiskSilhouette : public Silhouette {
 public:
  DiskSilhouette(const Transform4f& to_world, float weight) : to_world_(to_world) { weight_ = weight; }

  SilhouetteSample sample(const Array2f& sample, const Array3f& viewpoint) const override {
    Float phi = sample.x * (2.0f * kPi), cos_phi = cos(phi), sin_phi = sin(phi);
    Float zero = zeros<Float>(sample.x.size());
    Transform4f fixed(detach(to_world_.matrix()), detach(to_world_.inverse_matrix()));
    SilhouetteSample ss;
    ss.p = to_world_.apply_point(Array3f(cos_phi, sin_phi, zero));
    Array3f p = detach(ss.p), along = fixed.apply_vector(Array3f(-sin_phi, cos_phi, zero));
    Float speed = norm(along);  // |dp/dφ|
    ss.tangent = along / speed;
    Array3f normal = normalize(cross(ss.tangent, p - viewpoint));
    ss.normal = mulsign(normal, dot(normal, p - fixed.apply_point(Array3f(zero, zero, zero))));
    ss.pdf = rcp(speed * (2.0f * kPi));
    ss.valid = speed > 0.0f;
    return ss;
  }

 private:
  Transform4f to_world_;
};

class Disk : public PlacedShape {
 public:
  explicit Disk(const Properties& props) : PlacedShape(props) {
    Matrix4d m = props.get_transform("to_world", kIdentityRows);
    // flip_normals mirrors the local z axis, as Mitsuba does.
    if (props.get_bool("flip_normals", false))
      for (int r = 0; r < 3; ++r) m[r * 4 + 2] = -m[r * 4 + 2];
    place(m);
  }

  AccelGeometry accel_geometry() const override { return AccelDisk{host_to_world_}; }

  SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit, const Bool&,
                                                 const Bool& follow_shape) const override {
    SurfaceInteraction si;
    si.t = hit.t;
    if (moving(ray)) {
      // The hit slides along the ray as the disk or the ray moves (values the tracer's,
      // derivatives those of the plane intersection).
      Float t = dot(center_ - ray.o, normal_) / dot(ray.d, normal_);
      si.t = hit.t + derivatives_without_values(t);
    }
    si.n = normal_;
    // Projected back onto the disk's plane, which is more accurate than o + t·d.
    Array3f p = ray(si.t);
    si.p = p + normal_ * dot(center_ - p, normal_);
    if (moving(ray)) si.p = select(follow_shape, carried(si.p), si.p);
    Array3f local = to_world_.inverse().apply_point(si.p);
    Float r2 = local.x * local.x + local.y * local.y;
    Float inv_r = select(r2 != 0.0f, rsqrt(r2), Float(0.0f));
    Float r = r2 * inv_r;
    Float v = atan2(local.y, local.x) * kInvTwoPi;
    si.uv = Array2f(r, select(v < 0.0f, v + 1.0f, v));
    Float cos_phi = local.x * inv_r, sin_phi = local.y * inv_r;
    si.dp_du = to_world_.apply_vector(Array3f(cos_phi, sin_phi, Float(0.0f)));
    si.dp_dv = to_world_.apply_vector(Array3f(-sin_phi, cos_phi, Float(0.0f))) * (r * (2.0f * kPi));
    si.sh_frame.n = normal_;
    si.prim_index = hit.prim_index;
    return si;
  }

  PositionSample3f sample_position(const Array2f& sample, const Bool&) const override {
    Array2f disk = warp::square_to_uniform_disk_concentric(sample);
    PositionSample3f ps;
    ps.p = to_world_.apply_point(Array3f(disk.x, disk.y, Float(0.0f)));
    ps.n =
        normal_ + Array3f(zeros<Float>(sample.x.size()), zeros<Float>(sample.x.size()), zeros<Float>(sample.x.size()));
    ps.pdf = rcp(surface_area()) + zeros<Float>(sample.x.size());
    ps.delta = full<Bool>(false, sample.x.size());
    Float v = atan2(disk.y, disk.x) * kInvTwoPi;
    ps.uv = Array2f(norm(disk), select(v < 0.0f, v + 1.0f, v));
    return ps;
  }

  Float surface_area() const override { return Float(float(host_area_)); }

  std::unique_ptr<Silhouette> silhouette(const std::array<float, 3>& eye) const override {
    const Matrix4d& m = host_to_world_;
    double dx = eye[0] - m[3], dy = eye[1] - m[7], dz = eye[2] - m[11];
    double distance = std::sqrt(dx * dx + dy * dy + dz * dz);
    if (!(distance > 0.0) || rim_length() == 0.0) return nullptr;
    return std::make_unique<DiskSilhouette>(to_world_, float(rim_length() / distance));
  }

  std::unique_ptr<Silhouette> silhouettes() const override {
    if (rim_length() == 0.0) return nullptr;
    return std::make_unique<DiskSilhouette>(to_world_, float(rim_length()));
  }

  std::pair<std::array<float, 3>, std::array<float, 3>> bounding_box() const override {
    // The ellipse's extent along each axis: |row of the linear part restricted to x, y|.
    std::array<float, 3> lower, upper;
    const Matrix4d& m = host_to_world_;
    for (int k = 0; k < 3; ++k) {
      double extent = std::sqrt(m[k * 4] * m[k * 4] + m[k * 4 + 1] * m[k * 4 + 1]);
      lower[k] = float(m[k * 4 + 3] - extent);
      upper[k] = float(m[k * 4 + 3] + extent);
    }
    return {lower, upper};
  }

 private:
  void update() override {
    host_to_world_ = to_world_.to_rows();
    const Matrix4d& m = host_to_world_;
    // Area π |dp/dx × dp/dy| for the images of the local x and y axes.
    double ax = m[0], ay = m[4], az = m[8], bx = m[1], by = m[5], bz = m[9];
    double cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx;
    host_area_ = M_PI * std::sqrt(cx * cx + cy * cy + cz * cz);
    normal_ = normalize(to_world_.apply_normal(Array3f(0.0f, 0.0f, 1.0f)));
    center_ = to_world_.apply_point(Array3f(0.0f, 0.0f, 0.0f));
    kiln::eval(normal_.x, normal_.y, normal_.z, center_.x, center_.y, center_.z);
  }

  /// About the rim's length (the mean of the axes' lengths, as a circle's): it only shares
  /// samples out among shapes.
  double rim_length() const {
    const Matrix4d& m = host_to_world_;
    double ax2 = m[0] * m[0] + m[4] * m[4] + m[8] * m[8], ay2 = m[1] * m[1] + m[5] * m[5] + m[9] * m[9];
    return 2.0 * M_PI * std::sqrt(0.5 * (ax2 + ay2));
  }

  Matrix4d host_to_world_{};
  double host_area_ = M_PI;
  Array3f normal_, center_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Shape, "disk", [](const Properties& p) { return std::make_shared<Disk>(p); });

}  // namespace kiln::render
