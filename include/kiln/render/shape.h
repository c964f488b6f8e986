// Geometry (Mitsuba 3's Shape interface): what the accelerator traces, what a hit means,
// and how area lights sample a shape.
//
// What an implementation guarantees:
// - accel_geometry() describes the shape in world space for the ray tracer; after a
//   parameter change the scene asks again.
// - compute_surface_interaction() turns the tracer's preliminary hit into a
//   SurfaceInteraction with Kiln arrays (differentiable with respect to the shape's
//   parameters, e.g. vertex positions): t, p, n, uv, dp_du, dp_dv and the shading normal
//   sh_frame.n. The scene completes the shading frame and `wi` (finalize()).
// - sample_position() is uniform over the surface area: pdf = 1 / surface_area().
// - sample_direction()/pdf_direction() default to sample_position() converted to solid
//   angle at the reference point; a shape may sample better (a sphere samples its visible
//   cone) as long as the pair stays consistent.
// - A shape without a `bsdf` gets a default diffuse one, black when it is an area light
//   (Mitsuba's behaviour).
// - eval_attribute() gives an attribute the shape has (Mitsuba's mesh attributes: a
//   `vertex_*` one interpolated over the hit triangle at si.p, a `face_*` one constant per
//   triangle) and zero for one it does not have; has_attribute() tells which.
#pragma once

#include <kiln/render/accel.h>
#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>
#include <kiln/render/silhouette.h>

#include <array>
#include <memory>
#include <utility>

namespace kiln::render {

class BSDF;
class Emitter;

class Shape : public Object {
 public:
  /// Takes the nested `bsdf` and `emitter` from `props` (a default BSDF when none).
  explicit Shape(const Properties& props);

  PluginKind kind() const override { return PluginKind::Shape; }

  /// The shape as the ray tracer sees it, in world space.
  virtual AccelGeometry accel_geometry() const = 0;
  /// The full interaction for lanes the tracer reported a hit of this shape on. Its
  /// derivatives, where the shape or the ray moves: the hit slides along the ray, or, in
  /// lanes where `follow_shape`, stays the same material point of the shape (Mitsuba's
  /// FollowShape: the ray's motion does not matter, and dp_du × dp_dv changes with the area
  /// around the point).
  virtual SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                         const Bool& active, const Bool& follow_shape) const = 0;
  /// A point uniformly distributed over the surface.
  virtual PositionSample3f sample_position(const Array2f& sample, const Bool& active) const = 0;
  /// The density of sample_position() (1 / area).
  virtual Float pdf_position(const PositionSample3f& ps, const Bool& active) const;
  /// A point of the shape seen from `ref_p`, pdf per unit solid angle.
  virtual DirectionSample3f sample_direction(const Array3f& ref_p, const Array2f& sample, const Bool& active) const;
  /// The density of sample_direction() for `ds`.
  virtual Float pdf_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const;
  virtual Float surface_area() const = 0;
  /// The world-space bounding box (min corner, max corner).
  virtual std::pair<std::array<float, 3>, std::array<float, 3>> bounding_box() const = 0;
  /// The silhouette seen from the one point `eye` (world space; the camera), prepared on the
  /// host; null where none is seen from there.
  virtual std::unique_ptr<Silhouette> silhouette(const std::array<float, 3>& eye) const = 0;
  /// The silhouettes seen from any viewpoints, one per lane (shading points): sample() gives
  /// each lane a point of its own viewpoint's silhouette (invalid where it drew an edge that
  /// is none from there). Null when the shape has nothing to sample.
  virtual std::unique_ptr<Silhouette> silhouettes() const = 0;
  /// Whether the geometry carries derivatives (then its silhouettes move).
  virtual bool geometry_has_derivatives() const = 0;
  /// Whether the shape has the attribute `name` (none but a mesh's).
  virtual bool has_attribute(const std::string& name) const;
  /// The attribute `name` at the lanes' points (1 channel as gray, 3 as they are); zero
  /// when the shape does not have it.
  virtual Color3f eval_attribute(const std::string& name, const SurfaceInteraction& si, const Bool& active) const;
  /// Lists the BSDF and area light as children ("bsdf", "emitter").
  void traverse(TraversalCallback& callback) override;
  /// True when the changes parameters_changed() was told about (`keys`) are all in the
  /// BSDF or the area light: the geometry stayed as it was.
  static bool only_children_changed(const std::vector<std::string>& keys);

  /// What a parameter change did to the geometry, which the ray tracer must see: a mesh's
  /// vertices moved (the scene updates the tracer in place), or anything else (new faces,
  /// another vertex count, a sphere's transform: the scene builds the tracer again).
  enum class GeometryChange { kNone, kVerticesMoved, kReshaped };
  GeometryChange geometry_change() const { return geometry_change_; }
  void set_geometry_change(GeometryChange change) { geometry_change_ = change; }

  const std::shared_ptr<BSDF>& bsdf() const { return bsdf_; }
  /// The area light attached to the shape, or null.
  const std::shared_ptr<Emitter>& emitter() const { return emitter_; }

 private:
  std::shared_ptr<BSDF> bsdf_;
  std::shared_ptr<Emitter> emitter_;
  GeometryChange geometry_change_ = GeometryChange::kNone;
};

}  // namespace kiln::render
