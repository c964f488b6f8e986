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
    // Discontinuous as in Mitsuba, and not differentiable yet: the analytic shapes do not
    // recompute their hits from a transform with derivatives (render() refuses it).
    callback.put("to_world", &to_world_, param_flags::kDiscontinuous | param_flags::kNonDifferentiable);
  }
  /// A new `to_world`: its inverse recomputed, update() run, the ray tracer told.
  void parameters_changed(const std::vector<std::string>& keys) override {
    if (only_children_changed(keys)) return;
    // Made opaque through host values, unless it carries derivatives: render() must see
    // them to refuse them.
    if (!grad_enabled(to_world_.matrix())) to_world_ = Transform4f::from_rows(to_world_.to_rows());
    update();
    set_geometry_changed(true);
  }

 protected:
  /// Sets `to_world` and derives the rest from it.
  void place(const Matrix4d& to_world) {
    to_world_ = Transform4f::from_rows(to_world);
    update();
  }
  /// Recomputes what the shape derives from to_world_.
  virtual void update() = 0;

  Transform4f to_world_;
};

}  // namespace kiln::render
