// Analytic shapes placed by `to_world` alone (sphere, disk): the transform as their one
// geometric parameter, and what a change of it sets off.
#pragma once

#include <kiln/autodiff.h>
#include <kiln/render/shape.h>
#include <kiln/render/traverse.h>

namespace kiln::render {

class PlacedShape : public Shape {
 public:
  using Shape::Shape;

  /// Lists `to_world` beside the BSDF and emitter.
  void traverse(TraversalCallback& callback) override {
    Shape::traverse(callback);
    callback.put("to_world", &to_world_, param_flags::kDiscontinuous);
  }
  bool geometry_has_derivatives() const override { return grad_enabled(to_world_.matrix()); }
  /// A new `to_world`: its inverse recomputed, update() run, the ray tracer told.
  void parameters_changed(const std::vector<std::string>& keys) override {
    if (only_children_changed(keys)) return;
    // Made opaque through host values, unless it carries derivatives, which update() passes
    // on to what it derives and the hits carry (interior terms).
    if (!grad_enabled(to_world_.matrix())) to_world_ = Transform4f::from_rows(to_world_.to_rows());
    update();
    set_geometry_change(GeometryChange::kReshaped);
  }

 protected:
  /// Sets `to_world` and derives the rest from it.
  void place(const Matrix4d& to_world) {
    to_world_ = Transform4f::from_rows(to_world);
    update();
  }
  /// Recomputes what the shape derives from to_world_ (with its derivatives, if it has them).
  virtual void update() = 0;
  /// Whether the hit must be recomputed differentiably (the shape or the ray moves).
  bool moving(const Ray3f& ray) const {
    return grad_enabled(to_world_.matrix()) || grad_enabled(ray.o) || grad_enabled(ray.d);
  }
  /// The material point at `p` (a point of the surface): `p`'s value, carried by the
  /// transform's derivatives from where it is in the shape's own space.
  Array3f carried(const Array3f& p) const { return to_world_.apply_point(detach(to_world_.inverse().apply_point(p))); }

  Transform4f to_world_;
};

}  // namespace kiln::render
