// The scene (Mitsuba 3's Scene): shapes, emitters, sensors and the integrator, the ray
// tracer built over the shapes, and the queries integrators make.
//
// What an implementation guarantees:
// - Shapes, BSDFs and emitters live in Kiln Registries (ids from 1, the order the scene
//   description declares them) and are called with dispatch(), so one kernel serves
//   every material (symbolic) or one kernel per instance runs (evaluated).
// - ray_intersect() returns a full SurfaceInteraction (a miss as interaction.h describes);
//   ray_test() only says whether anything lies within the ray's [0, maxt].
// - sample_emitter_direction() picks an emitter uniformly and samples it; the pdf includes
//   the choice. With `test_visibility`, occluded lanes get weight 0.
// - pdf_emitter_direction() is its density for a direction sample found by a BSDF sample.
#pragma once

#include <kiln/control.h>
#include <kiln/render/accel.h>
#include <kiln/render/bsdf.h>
#include <kiln/render/emitter.h>
#include <kiln/render/integrator.h>
#include <kiln/render/sensor.h>
#include <kiln/render/shape.h>

#include <memory>
#include <vector>

namespace kiln::render {

class Texture;

class Scene : public Object {
 public:
  /// Takes the nested shapes, emitters, sensors and integrator (a `path` integrator when
  /// none), and builds the ray tracer: the string property `accel` ("embree" or "kiln")
  /// chooses it, default_accel_kind() without one.
  explicit Scene(const Properties& props);
  ~Scene() override;
  PluginKind kind() const override { return PluginKind::Scene; }

  /// The ray tracer this scene built.
  AccelKind accel_kind() const { return accel_kind_; }

  SurfaceInteraction ray_intersect(const Ray3f& ray, const Bool& active) const;
  /// What the ray tracer found, before a shape turns it into an interaction (Mitsuba's
  /// ray_intersect_preliminary): shape_index is the shape's position (kNoShape on misses).
  PreliminaryIntersection ray_intersect_preliminary(const Ray3f& ray, const Bool& active) const {
    return accel_->intersect(ray, active);
  }
  /// The interaction of `ray` with what `hit` found on it (ray_intersect() is this after
  /// ray_intersect_preliminary()): its derivatives are the shapes' and the ray's, where
  /// they have any, for a hit found once without them; in lanes where `follow_shape`, those
  /// of the same material point (Shape::compute_surface_interaction).
  SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                 const Bool& active, const Bool& follow_shape = Bool(false)) const;
  Bool ray_test(const Ray3f& ray, const Bool& active) const;

  /// An emitter sample seen from the surface point `ref` (shadow rays leave its surface).
  std::pair<DirectionSample3f, Color3f> sample_emitter_direction(const SurfaceInteraction& ref, const Array2f& sample,
                                                                 bool test_visibility, const Bool& active) const;
  Float pdf_emitter_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const;
  /// A light path's first ray: an emitter picked uniformly by `pick` and its sample_ray();
  /// the weight includes the choice. Needs at least one emitter.
  std::pair<Ray3f, Color3f> sample_emitter_ray(const Float& pick, const Array2f& position_sample,
                                               const Array2f& direction_sample, const Bool& active) const;
  /// A point of an emitter picked uniformly by `pick`, seen from `ref_p` (sample_position());
  /// the weight includes the choice, and is zero where the pick is a delta emitter (those
  /// cannot be seen). Needs at least one emitter.
  std::pair<PositionSample3f, Color3f> sample_emitter_position(const Array3f& ref_p, const Float& pick,
                                                               const Array2f& sample, const Bool& active) const;
  /// The direction sample that reached `si` from `ref_p` (a surface point, or the
  /// environment on a miss), with its emitter (0: none) and pdf 0: what multiple
  /// importance sampling asks pdf_emitter_direction() about after a BSDF sample.
  DirectionSample3f hit_direction_sample(const SurfaceInteraction& si, const Array3f& ref_p) const;
  /// Radiance emitted at `si` towards -si.wi: area lights on hits, the environment on misses.
  Color3f eval_emitter(const SurfaceInteraction& si, const Bool& active) const;

  /// The BSDF calls, dispatched on the BSDF of the shape `si` hit.
  std::pair<BSDFSample3f, Color3f> bsdf_sample(const BSDFContext& ctx, const SurfaceInteraction& si,
                                               const Float& sample1, const Array2f& sample2, const Bool& active) const;
  std::pair<Color3f, Float> bsdf_eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                          const Bool& active) const;
  std::tuple<Color3f, Float, BSDFSample3f, Color3f> bsdf_eval_pdf_sample(const BSDFContext& ctx,
                                                                         const SurfaceInteraction& si,
                                                                         const Array3f& wo, const Float& sample1,
                                                                         const Array2f& sample2,
                                                                         const Bool& active) const;
  /// The diffuse reflectance of the hit BSDF (the aov integrator's albedo).
  Color3f bsdf_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const;
  /// The flags of the BSDF of the shape `si` hit, per lane (0 on misses).
  UInt32 bsdf_flags(const SurfaceInteraction& si) const;

  const std::vector<std::shared_ptr<Shape>>& shapes() const { return shapes_; }
  /// Whether any shape's geometry carries derivatives (moves under them).
  bool geometry_has_derivatives() const;
  const std::vector<std::shared_ptr<Emitter>>& emitters() const { return emitters_; }
  const std::vector<std::shared_ptr<Sensor>>& sensors() const { return sensors_; }
  const std::shared_ptr<Integrator>& integrator() const { return integrator_; }
  /// The emitter id of the environment (0: none).
  uint32_t environment() const { return environment_; }

  /// Lists every object the scene declares under its id (as Mitsuba's traverse()).
  void traverse(TraversalCallback& callback) override;
  /// Rebuilds the ray tracer when a shape's geometry changed.
  void parameters_changed(const std::vector<std::string>& keys) override;

 private:
  /// Builds the ray tracer over the shapes anew, and the bounds.
  void update_geometry();
  /// The bounding sphere from the shapes' boxes, passed on to the emitters.
  void update_bounds();
  /// The emitter id `pick` chooses uniformly (0 where inactive).
  UInt32 pick_emitter(const Float& pick, const Bool& active) const;
  /// The BSDF id of each lane's shape (0 where inactive or nothing was hit).
  UInt32 bsdf_id(const SurfaceInteraction& si, const Bool& active) const;
  /// Texture::set_scene_shapes on the textures that read the hit shape: the interactions
  /// ray_intersect() gives carry this scene's shape ids.
  void tell_textures_shapes() const;

  std::vector<std::shared_ptr<Object>> children_;  ///< in declaration order
  std::vector<std::shared_ptr<Shape>> shapes_;
  std::vector<std::shared_ptr<Emitter>> emitters_;
  std::vector<std::shared_ptr<Sensor>> sensors_;
  std::shared_ptr<Integrator> integrator_;
  std::vector<std::shared_ptr<BSDF>> bsdfs_;
  /// Shared with the textures of the shapes (Texture::set_scene_shapes), which hold it weakly.
  std::shared_ptr<Registry<Shape>> shape_registry_ = std::make_shared<Registry<Shape>>();
  /// The textures of the shapes' BSDFs that read the hit shape (Texture::reads_hit_shape()),
  /// found once when the scene is built; usually none.
  std::vector<Texture*> hit_shape_textures_;
  Registry<BSDF> bsdf_registry_;
  Registry<Emitter> emitter_registry_;
  UInt32 shape_bsdf_;       ///< per shape id: its BSDF's id
  UInt32 shape_emitter_;    ///< per shape id: its area light's id (0: none)
  UInt32 bsdf_flag_table_;  ///< per BSDF id: its flags
  Bool emitter_delta_;      ///< per emitter id: a delta emitter (id 0: none)
  uint32_t environment_ = 0;
  AccelKind accel_kind_;
  std::unique_ptr<Accel> accel_;
  std::vector<std::unique_ptr<Accel>> retired_accels_;  ///< replaced by updates, kept for pending kernels
};

}  // namespace kiln::render
