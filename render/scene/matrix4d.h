// Row-major 4 x 4 double matrices for the scene loaders: the elementary transforms of
// Mitsuba's `<transform>` children, composed in plain double math (the renderer converts
// the result to a Transform4f when it builds the scene).
#pragma once

#include <kiln/render/properties.h>

namespace kiln::render::matrix4d {

Matrix4d identity();
/// a · b.
Matrix4d multiply(const Matrix4d& a, const Matrix4d& b);
Matrix4d translate(const Vector3d& offset);
Matrix4d scale(const Vector3d& factors);
/// Counterclockwise rotation by `angle_degrees` about `axis`, used as given (not
/// normalized: Mitsuba does not normalize it either).
Matrix4d rotate(const Vector3d& axis, double angle_degrees);
/// The camera frame at `origin` looking at `target` (transform.h's look_at()). A zero `up`
/// (a `<lookat>` without one) becomes the vector Mitsuba picks: the first of its
/// coordinate_system() of the viewing direction. Entries are NaN when origin and target
/// coincide or `up` is parallel to the viewing direction.
Matrix4d look_at(const Vector3d& origin, const Vector3d& target, const Vector3d& up);

}  // namespace kiln::render::matrix4d
