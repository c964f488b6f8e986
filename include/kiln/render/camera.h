// The pinhole camera's geometry, as Mitsuba 3's perspective sensor computes it: field of view
// conversions, the perspective projection, and camera rays for film positions.
//
// What an implementation guarantees:
// - Film positions are in [0, 1]²: x to the right, y downwards, (0.5, 0.5) the image center.
// - Camera space is Transform4f::look_at's frame: +z looks forward, +y is up and +x left.
// - A ray starts on the near plane, has a unit direction, and `max_distance` reaches the far
//   plane; all three match Mitsuba's PerspectiveCamera::sample_ray.
// - Angles are in degrees; the field of view and the transform may carry gradients.
#pragma once

#include <kiln/render/transform.h>

namespace kiln::render {

/// The film dimension a field of view is measured along (Mitsuba's `fov_axis`).
enum class FovAxis { X, Y, Diagonal, Smaller, Larger };

/// The horizontal field of view equivalent to `fov` along `axis` on a film of the given size.
Float x_fov_from(const Float& fov, FovAxis axis, size_t film_width, size_t film_height);

/// Mitsuba's ProjectiveTransform4f::perspective: camera space to clip space for a horizontal
/// field of view `x_fov`, depth mapped from [near, far] to [0, 1].
Matrix4f perspective_matrix(const Float& x_fov, float near_clip, float far_clip);

struct CameraRays {
  Array3f origin, direction;
  Float max_distance;
};

/// Rays of a pinhole camera at `to_world` through `film_position` (one per lane).
CameraRays pinhole_rays(const Transform4f& to_world, const Float& x_fov, const Float& aspect, const Float& near_clip,
                        const Float& far_clip, const Array2f& film_position);

}  // namespace kiln::render
