// The scene: its objects in Kiln Registries, the ray tracer over its shapes, and the
// queries integrators make, each a dispatch() on the shape, BSDF or emitter a lane needs.
#include "shapes/mesh.h"

#include <kiln/construct.h>
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace kiln::render {
namespace {

/// The id table `values` (index 0 for "none") as a Kiln array.
UInt32 id_table(const std::vector<uint32_t>& values) { return UInt32::from(values.data(), values.size()); }

/// dispatch() on `registry`, with the arrays an instance leaves unset in its result zeroed.
template <typename Base, typename Fn, typename... Ts>
auto dispatch_filled(const Registry<Base>& registry, const UInt32& ids, Fn fn, const std::tuple<Ts...>& args,
                     const char* name) {
  auto filled = [fn](const Base& instance, const Ts&... values) {
    auto result = fn(instance, values...);
    zero_unset(result);
    return result;
  };
  return dispatch(registry, ids, filled, args, std::nullopt, name);
}

/// `value` of type T, or an error naming what was expected.
template <typename T> std::shared_ptr<T> as(const std::shared_ptr<Object>& object, const char* what) {
  auto result = std::dynamic_pointer_cast<T>(object);
  if (!result)
    throw TypeError("kiln.render: scene: '" + object->plugin() + "' (" + object->source() + ") is not " + what);
  return result;
}

/// The textures that read the hit shape among the objects it is given (and theirs).
class HitShapeTextures : public TraversalCallback {
 public:
  void put(const std::string&, ParameterRef, uint32_t) override {}
  void put_object(const std::string&, Object* child) override {
    if (!child || !seen_.insert(child).second) return;
    if (auto* texture = dynamic_cast<Texture*>(child); texture && texture->reads_hit_shape()) found.push_back(texture);
    child->traverse(*this);
  }
  std::vector<Texture*> found;

 private:
  std::set<Object*> seen_;
};

}  // namespace

Scene::Scene(const Properties& props)
    : accel_kind_(parse_accel_kind(props.get_string("accel", accel_kind_name(default_accel_kind())),
                                   "scene (" + props.source() + ")")) {
  for (const auto& [name, object] : props.objects()) {
    children_.push_back(object);
    switch (object->kind()) {
      case PluginKind::Shape: shapes_.push_back(as<Shape>(object, "a shape")); break;
      case PluginKind::Emitter:
        emitters_.push_back(as<Emitter>(object, "an emitter"));
        if (emitters_.back()->flags() & emitter_flags::kSurface)
          throw ValueError("kiln.render: scene (" + props.source() + "): the emitter '" + object->plugin() + "' (" +
                           object->source() +
                           ") emits from a shape's surface: nest it in a shape (its 'emitter'), as Mitsuba does");
        break;
      case PluginKind::Sensor: sensors_.push_back(as<Sensor>(object, "a sensor")); break;
      case PluginKind::Integrator:
        if (integrator_)
          throw ValueError("kiln.render: scene (" + props.source() + "): a second integrator at " + object->source() +
                           "; a scene has at most one");
        integrator_ = as<Integrator>(object, "an integrator");
        break;
      // Declared at the top level to be referenced by id: used through their users.
      case PluginKind::Bsdf:
      case PluginKind::Texture:
      case PluginKind::Volume:
      case PluginKind::Film:
      case PluginKind::Filter:
      case PluginKind::Sampler: break;
      case PluginKind::Scene:
        throw ValueError("kiln.render: scene (" + props.source() + "): a scene cannot contain a scene (" +
                         object->source() + ")");
    }
  }
  if (!integrator_) {
    integrator_ =
        as<Integrator>(create_object(Properties(PluginKind::Integrator, "path", "", props.source())), "an integrator");
    children_.push_back(integrator_);
  }
  if (sensors_.empty()) {
    sensors_.push_back(
        as<Sensor>(create_object(Properties(PluginKind::Sensor, "perspective", "", props.source())), "a sensor"));
    children_.push_back(sensors_.back());
  }

  std::vector<uint32_t> shape_bsdf{0}, shape_emitter{0}, bsdf_flags{0};
  for (const auto& shape : shapes_) {
    shape_registry_->add(shape.get());
    auto known = std::find(bsdfs_.begin(), bsdfs_.end(), shape->bsdf());
    if (known == bsdfs_.end()) {
      bsdfs_.push_back(shape->bsdf());
      bsdf_flags.push_back(shape->bsdf()->flags());
      bsdf_registry_.add(shape->bsdf().get());
      known = bsdfs_.end() - 1;
    }
    shape_bsdf.push_back(uint32_t(known - bsdfs_.begin()) + 1);
    if (shape->emitter()) {
      shape->emitter()->set_shape(shape.get());
      emitters_.push_back(shape->emitter());
    }
  }
  for (const auto& emitter : emitters_) {
    uint32_t id = emitter_registry_.add(emitter.get());
    if (emitter->is_environment()) {
      if (environment_ != 0)
        throw ValueError("kiln.render: scene (" + props.source() + "): two environment emitters (" +
                         emitters_[environment_ - 1]->source() + " and " + emitter->source() +
                         "); a scene has at most one");
      environment_ = id;
    }
  }
  for (const auto& shape : shapes_) {
    uint32_t id = 0;
    if (shape->emitter())
      id = uint32_t(std::find(emitters_.begin(), emitters_.end(), shape->emitter()) - emitters_.begin()) + 1;
    shape_emitter.push_back(id);
  }
  pool_meshes(shapes_);
  HitShapeTextures textures;
  for (const auto& shape : shapes_) textures.put_object("", shape.get());
  hit_shape_textures_ = std::move(textures.found);
  shape_bsdf_ = id_table(shape_bsdf);
  shape_emitter_ = id_table(shape_emitter);
  bsdf_flag_table_ = id_table(bsdf_flags);
  std::vector<uint32_t> delta{1};
  for (const auto& emitter : emitters_) delta.push_back((emitter->flags() & emitter_flags::kDelta) != 0);
  emitter_delta_ = id_table(delta) != 0u;
  update_geometry();
}

Scene::~Scene() = default;

void Scene::update_geometry() {
  std::vector<AccelGeometry> geometry;
  for (const auto& shape : shapes_) geometry.push_back(shape->accel_geometry());
  // Kernels read the ray tracer when they run: one that arrays still pending may trace
  // stays alive with the scene.
  if (accel_) retired_accels_.push_back(std::move(accel_));
  accel_ = make_accel(std::move(geometry), accel_kind_);
  update_bounds();
}

void Scene::update_bounds() {
  std::array<float, 3> lower{kInfinity, kInfinity, kInfinity}, upper{-kInfinity, -kInfinity, -kInfinity};
  for (const auto& shape : shapes_) {
    auto [shape_lower, shape_upper] = shape->bounding_box();
    for (int k = 0; k < 3; ++k) {
      lower[k] = std::min(lower[k], shape_lower[k]);
      upper[k] = std::max(upper[k], shape_upper[k]);
    }
  }
  // Mitsuba's bounding sphere: the box's center, radius half its diagonal (a unit
  // sphere at the origin for an empty scene).
  std::array<float, 3> center{0, 0, 0};
  float radius = 0.0f;
  if (!shapes_.empty()) {
    for (int k = 0; k < 3; ++k) {
      center[k] = 0.5f * (lower[k] + upper[k]);
      radius += 0.25f * (upper[k] - lower[k]) * (upper[k] - lower[k]);
    }
    radius = std::sqrt(radius);
  }
  if (!(radius > 0.0f)) radius = 1.0f;
  for (const auto& emitter : emitters_) emitter->set_scene_bounds(center, radius);
}

void Scene::tell_textures_shapes() const {
  for (Texture* texture : hit_shape_textures_) texture->set_scene_shapes(shape_registry_);
}

bool Scene::geometry_has_derivatives() const {
  return std::any_of(shapes_.begin(), shapes_.end(), [](const auto& s) { return s->geometry_has_derivatives(); });
}

SurfaceInteraction Scene::ray_intersect(const Ray3f& ray, const Bool& active) const {
  return compute_surface_interaction(ray, ray_intersect_preliminary(ray, active), active);
}

SurfaceInteraction Scene::compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                      const Bool& active, const Bool& follow_shape) const {
  tell_textures_shapes();
  Bool valid = active & hit.is_valid();
  UInt32 shape = select(valid, hit.shape_index + 1u, UInt32(0u));
  // Where nothing moves, which point the derivatives follow does not matter: no argument.
  bool moving = grad_enabled(ray.o) || grad_enabled(ray.d) || geometry_has_derivatives();
  auto [si] = moving ? dispatch_filled(
                           *shape_registry_, shape,
                           [](const Shape& s, const Ray3f& r, const PreliminaryIntersection& h, const Bool& follow) {
                             return std::tuple(s.compute_surface_interaction(r, h, Bool(true), follow));
                           },
                           std::tuple(ray, hit, follow_shape), "compute_surface_interaction")
                     : dispatch_filled(
                           *shape_registry_, shape,
                           [](const Shape& s, const Ray3f& r, const PreliminaryIntersection& h) {
                             return std::tuple(s.compute_surface_interaction(r, h, Bool(true), Bool(false)));
                           },
                           std::tuple(ray, hit), "compute_surface_interaction");
  si.finalize(ray.d);
  // Misses: t = +inf, wi = -d in world space with an identity shading frame.
  si.t = select(valid, si.t, Float(kInfinity));
  si.shape = shape;
  si.prim_index = select(valid, hit.prim_index, UInt32(0u));
  Array3f zero(0.0f, 0.0f, 0.0f);
  si.wi = select(valid, si.wi, -ray.d);
  si.sh_frame.s = select(valid, si.sh_frame.s, Array3f(1.0f, 0.0f, 0.0f) + zero);
  si.sh_frame.t = select(valid, si.sh_frame.t, Array3f(0.0f, 1.0f, 0.0f) + zero);
  si.sh_frame.n = select(valid, si.sh_frame.n, Array3f(0.0f, 0.0f, 1.0f) + zero);
  return si;
}

Bool Scene::ray_test(const Ray3f& ray, const Bool& active) const { return accel_->occluded(ray, active); }

std::pair<DirectionSample3f, Color3f> Scene::sample_emitter_direction(const SurfaceInteraction& ref,
                                                                      const Array2f& sample, bool test_visibility,
                                                                      const Bool& active) const {
  uint32_t count = uint32_t(emitters_.size());
  if (count == 0) {
    size_t lanes = ref.p.x.size();
    DirectionSample3f ds;
    Float zero = zeros<Float>(lanes);
    ds.p = ds.n = ds.d = Array3f(zero, zero, zero);
    ds.uv = Array2f(zero, zero);
    ds.pdf = ds.dist = zero;
    ds.delta = full<Bool>(false, lanes);
    ds.emitter = zeros<UInt32>(lanes);
    return {ds, Color3f(zero, zero, zero)};
  }
  // Pick an emitter uniformly and reuse the sample's first dimension within it.
  Float scaled = sample.x * float(count);
  UInt32 index = min(cast<uint32_t>(scaled), UInt32(count - 1));
  Array2f reused(scaled - cast<float>(index), sample.y);
  UInt32 emitter = select(active, index + 1u, UInt32(0u));
  auto [ds, weight] = dispatch_filled(
      emitter_registry_, emitter,
      [](const Emitter& e, const Array3f& p, const Array2f& s) { return e.sample_direction(p, s, Bool(true)); },
      std::tuple(ref.p, reused), "sample_emitter_direction");
  ds.pdf = ds.pdf * (1.0f / float(count));
  ds.emitter = emitter;
  weight = weight * float(count);
  if (test_visibility) {
    Bool occluded = ray_test(ref.spawn_ray_to(ds.p), active & (ds.pdf != 0.0f));
    weight = select(occluded, Color3f(0.0f, 0.0f, 0.0f), weight);
  }
  return {ds, weight};
}

Float Scene::pdf_emitter_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const {
  if (emitters_.empty()) return zeros<Float>(ref_p.x.size());
  UInt32 emitter = select(active, ds.emitter, UInt32(0u));
  auto [pdf] = dispatch_filled(
      emitter_registry_, emitter,
      [](const Emitter& e, const Array3f& p, const DirectionSample3f& d) {
        return std::tuple(e.pdf_direction(p, d, Bool(true)));
      },
      std::tuple(ref_p, ds), "pdf_emitter_direction");
  return pdf * (1.0f / float(emitters_.size()));
}

UInt32 Scene::pick_emitter(const Float& pick, const Bool& active) const {
  uint32_t count = uint32_t(emitters_.size());
  UInt32 index = min(cast<uint32_t>(pick * float(count)), UInt32(count - 1));
  return select(active, index + 1u, UInt32(0u));
}

std::pair<Ray3f, Color3f> Scene::sample_emitter_ray(const Float& pick, const Array2f& position_sample,
                                                    const Array2f& direction_sample, const Bool& active) const {
  UInt32 emitter = pick_emitter(pick, active);
  auto [ray, weight] = dispatch_filled(
      emitter_registry_, emitter,
      [](const Emitter& e, const Array2f& position, const Array2f& direction) {
        return e.sample_ray(position, direction, Bool(true));
      },
      std::tuple(position_sample, direction_sample), "sample_emitter_ray");
  return {ray, weight * float(emitters_.size())};
}

std::pair<PositionSample3f, Color3f> Scene::sample_emitter_position(const Array3f& ref_p, const Float& pick,
                                                                    const Array2f& sample, const Bool& active) const {
  UInt32 emitter = pick_emitter(pick, active);
  emitter = select(gather(emitter_delta_, emitter), UInt32(0u), emitter);
  auto [ps, weight] = dispatch_filled(
      emitter_registry_, emitter,
      [](const Emitter& e, const Array3f& p, const Array2f& s) { return e.sample_position(p, s, Bool(true)); },
      std::tuple(ref_p, sample), "sample_emitter_position");
  return {ps, weight * float(emitters_.size())};
}

DirectionSample3f Scene::hit_direction_sample(const SurfaceInteraction& si, const Array3f& ref_p) const {
  Bool valid = si.is_valid();
  DirectionSample3f ds;
  ds.p = si.p;
  ds.n = si.sh_frame.n;
  ds.uv = si.uv;
  ds.pdf = zeros<Float>(si.t.size());
  ds.delta = full<Bool>(false, si.t.size());
  Array3f to_hit = si.p - ref_p;
  Float dist = norm(to_hit);
  ds.d = select(valid, to_hit / dist, -si.wi);
  ds.dist = select(valid, dist, Float(kInfinity));
  ds.emitter = select(valid, gather(shape_emitter_, si.shape), UInt32(environment_));
  return ds;
}

Color3f Scene::eval_emitter(const SurfaceInteraction& si, const Bool& active) const {
  if (emitters_.empty()) return Color3f(0.0f, 0.0f, 0.0f) * zeros<Float>(si.t.size());
  UInt32 emitter = select(si.is_valid(), gather(shape_emitter_, si.shape), UInt32(environment_));
  emitter = select(active, emitter, UInt32(0u));
  auto [value] = dispatch_filled(
      emitter_registry_, emitter,
      [](const Emitter& e, const SurfaceInteraction& s) { return std::tuple(e.eval(s, Bool(true))); }, std::tuple(si),
      "eval_emitter");
  return value;
}

UInt32 Scene::bsdf_flags(const SurfaceInteraction& si) const {
  return gather(bsdf_flag_table_, gather(shape_bsdf_, si.shape));
}

UInt32 Scene::bsdf_id(const SurfaceInteraction& si, const Bool& active) const {
  return select(active, gather(shape_bsdf_, si.shape), UInt32(0u));
}

std::pair<BSDFSample3f, Color3f> Scene::bsdf_sample(const BSDFContext& ctx, const SurfaceInteraction& si,
                                                    const Float& sample1, const Array2f& sample2,
                                                    const Bool& active) const {
  auto [bs, weight] = dispatch_filled(
      bsdf_registry_, bsdf_id(si, active),
      [ctx](const BSDF& b, const SurfaceInteraction& s, const Float& s1, const Array2f& s2) {
        return b.sample(ctx, s, s1, s2, Bool(true));
      },
      std::tuple(si, sample1, sample2), "bsdf_sample");
  return {bs, weight};
}

std::pair<Color3f, Float> Scene::bsdf_eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                               const Bool& active) const {
  auto [value, pdf] = dispatch_filled(
      bsdf_registry_, bsdf_id(si, active),
      [ctx](const BSDF& b, const SurfaceInteraction& s, const Array3f& w) { return b.eval_pdf(ctx, s, w, Bool(true)); },
      std::tuple(si, wo), "bsdf_eval_pdf");
  return {value, pdf};
}

std::tuple<Color3f, Float, BSDFSample3f, Color3f> Scene::bsdf_eval_pdf_sample(const BSDFContext& ctx,
                                                                              const SurfaceInteraction& si,
                                                                              const Array3f& wo, const Float& sample1,
                                                                              const Array2f& sample2,
                                                                              const Bool& active) const {
  return dispatch_filled(
      bsdf_registry_, bsdf_id(si, active),
      [ctx](const BSDF& b, const SurfaceInteraction& s, const Array3f& w, const Float& s1, const Array2f& s2) {
        return b.eval_pdf_sample(ctx, s, w, s1, s2, Bool(true));
      },
      std::tuple(si, wo, sample1, sample2), "bsdf_eval_pdf_sample");
}

void Scene::parameters_changed(const std::vector<std::string>&) {
  // Meshes whose vertices moved update the ray tracer in place (an optimization moving
  // vertices every iteration keeps one structure); new faces or vertex counts (a remeshed
  // shape) and moved spheres or disks rebuild it.
  bool rebuild = false, moved = false;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    Shape::GeometryChange change = shapes_[i]->geometry_change();
    if (change == Shape::GeometryChange::kNone) continue;
    shapes_[i]->set_geometry_change(Shape::GeometryChange::kNone);
    moved = true;
    if (change == Shape::GeometryChange::kVerticesMoved)
      accel_->update_mesh_positions(i, std::get<AccelTriangles>(shapes_[i]->accel_geometry()).positions);
    else
      rebuild = true;
  }
  if (moved) pool_meshes(shapes_);
  if (rebuild)
    update_geometry();
  else if (moved)
    update_bounds();
}

Color3f Scene::bsdf_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const {
  auto [value] = dispatch_filled(
      bsdf_registry_, bsdf_id(si, active),
      [](const BSDF& b, const SurfaceInteraction& s) { return std::tuple(b.eval_diffuse_reflectance(s, Bool(true))); },
      std::tuple(si), "bsdf_diffuse_reflectance");
  return value;
}

void Scene::traverse(TraversalCallback& callback) {
  // As Mitsuba: every object the scene declares, under its id; unnamed ones under a
  // generic name. Nested objects appear under their parent's path unless they were
  // already listed (a BSDF declared at the top and referenced by shapes keeps its id).
  for (size_t i = 0; i < children_.size(); ++i) {
    const std::string& id = children_[i]->id();
    callback.put_object(id.empty() ? "object_" + std::to_string(i) : id, children_[i].get());
  }
}

KILN_REGISTER_PLUGIN(PluginKind::Scene, "scene", [](const Properties& p) { return std::make_shared<Scene>(p); });

}  // namespace kiln::render
