// Field of view conversions, the perspective projection and pinhole camera rays.
#include <kiln/math.h>
#include <kiln/render/camera.h>
#include <kiln/render/common.h>

#include <cmath>

namespace kiln::render {
namespace {

/// tan(fov / 2) for a field of view in degrees.
Float half_tan(const Float& fov) { return tan(fov * (0.5f * kDegreesToRadians)); }
}  // namespace

Float x_fov_from(const Float& fov, FovAxis axis, size_t film_width, size_t film_height) {
  float width = float(film_width), height = float(film_height);
  // tan(x_fov / 2) = tan(fov / 2) · width / (the film's extent along the axis)
  float extent = width;
  switch (axis) {
    case FovAxis::X: extent = width; break;
    case FovAxis::Y: extent = height; break;
    case FovAxis::Diagonal: extent = std::sqrt(width * width + height * height); break;
    case FovAxis::Smaller: extent = std::min(width, height); break;
    case FovAxis::Larger: extent = std::max(width, height); break;
  }
  return atan(half_tan(fov) * (width / extent)) * (2.0f / kDegreesToRadians);
}

Matrix4f perspective_matrix(const Float& x_fov, float near_clip, float far_clip) {
  Float cot = rcp(half_tan(x_fov));
  float depth_scale = far_clip / (far_clip - near_clip);
  return Matrix4f(cot, 0.0f, 0.0f, 0.0f, 0.0f, cot, 0.0f, 0.0f, 0.0f, 0.0f, depth_scale, -near_clip * depth_scale, 0.0f,
                  0.0f, 1.0f, 0.0f);
}

CameraRays pinhole_rays(const Transform4f& to_world, const Float& x_fov, const Float& aspect, const Float& near_clip,
                        const Float& far_clip, const Array2f& film_position) {
  // The inverse of Mitsuba's camera-to-sample map, Scale(-1/2, -aspect/2, 1) ·
  // Translate(-1, -1/aspect, 0) · Perspective, at depth 1: x = (1 - 2u) tan(x_fov/2), and
  // y likewise over aspect (+x is left and +y up in camera space).
  Float t = half_tan(x_fov);
  Array3f local(t * (1.0f - 2.0f * film_position.x), (t / aspect) * (1.0f - 2.0f * film_position.y), Float(1.0f));
  Array3f direction = normalize(local);
  CameraRays rays;
  rays.origin = to_world.apply_point(local * near_clip);
  rays.direction = normalize(to_world.apply_vector(direction));
  rays.max_distance = (far_clip - near_clip) / direction.z;
  return rays;
}

}  // namespace kiln::render
