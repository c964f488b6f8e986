// The projective integrators' visibility terms (visibility_terms.h), as line integrals over
// moving silhouettes,
//   d/dθ I(pixel) = ∫ f · (L_inside - L_outside) · v_n · w(pixel) dl,
// with v_n the silhouette's speed across itself (outwards) and w the film's filter. Points
// are sampled on the shapes' silhouettes (silhouette.h), samples shared among shapes by
// Silhouette::weight(). The radiance on either side comes from rays aimed just inside and
// just outside the point, with the same random numbers on both sides. v_n is the derivative
// of where the point, moving with its shape, is seen: so everything that moves it (the
// shape, and for primary visibility the camera) gets the term through one traversal.
//
// - Primary: seen from the camera, dl and v_n on the film in pixels; the value splats where
//   the point is seen, as particles do (ImageBlock::splat).
// - Indirect: seen from a point x the camera sees (a pixel position over the crop window),
//   dl and v_n in directions at x (radians): f is x's BSDF, and the value splats at x's
//   pixel position. The pixel position and the silhouette point are drawn from a guiding
//   distribution trained on the term itself (indirect_guiding.h).
#include "integrators/visibility_terms.h"

#include "integrators/path_tools.h"

#include <kiln/construct.h>
#include <kiln/control.h>
#include <kiln/math.h>
#include <kiln/render/film.h>
#include <kiln/render/sampler.h>
#include <kiln/render/scene.h>
#include <kiln/render/sensor.h>
#include <kiln/render/shape.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace kiln::render {
namespace {

/// How far, relative to its distance, a point is moved off the silhouette to see either side
/// of it (less makes rays grazing curved surfaces miss them in single precision), and the
/// step of the central differences that measure the silhouette on the film.
constexpr float kSideOffset = 3e-4f, kImageStep = 1e-3f;
/// How far (relative to the distance) the ray aimed inside may meet the shape from the
/// silhouette point and still count as seeing it: a ray grazing a curved surface at offset
/// ε·d meets it about sqrt(2 ε d r) early (r its radius of curvature), 7.7% of d where r = 10 d.
constexpr float kHitTolerance = 1e-1f;
/// How far (relative to the distance) what the rays either side of a crease meet may lie
/// from the planes of its two triangles: a crease hidden just behind a silhouette is seen
/// past by rays that meet the surface in front, within kHitTolerance of it.
constexpr float kPlaneTolerance = 1e-4f;

/// How many training samples the indirect term's guiding draws per round, per sample of the
/// term: rare regions need nonzero training points to be found (indirect_guiding.cpp).
constexpr size_t kTrainingLanes = 4;

/// Silhouettes and the samples each gets, out of `total` shared by weight (at least one each).
struct SharedSilhouettes {
  std::vector<std::unique_ptr<Silhouette>> silhouettes;
  std::vector<size_t> lanes;
};

template <typename Prepare>
SharedSilhouettes share_samples(const Scene& scene, bool every_shape, double total, Prepare&& prepare) {
  SharedSilhouettes shared;
  double weights = 0.0;
  if (total > 0.0)
    for (const auto& shape : scene.shapes()) {
      if (!every_shape && !shape->geometry_has_derivatives()) continue;
      if (auto silhouette = prepare(*shape); silhouette && silhouette->weight() > 0.0f) {
        weights += silhouette->weight();
        shared.silhouettes.push_back(std::move(silhouette));
      }
    }
  for (const auto& silhouette : shared.silhouettes) {
    double share = std::round(total * silhouette->weight() / weights);
    shared.lanes.push_back(size_t(std::clamp(share, 1.0, double(uint32_t(~0u)))));
  }
  return shared;
}

/// Whether the camera's rays carry derivatives: then every silhouette moves relative to what
/// it sees, static shapes' too.
bool camera_moves(const Sensor& sensor) {
  auto [probe, weight] = sensor.sample_ray(Array2f(Float(0.5f), Float(0.5f)), Bool(true));
  return grad_enabled(probe.o) || grad_enabled(probe.d);
}

/// What is seen on either side of a silhouette point.
struct Across {
  Color3f difference;  ///< radiance inside minus outside
  Bool seen;           ///< the inside ray meets a surface at the point and the outside one nothing before
  Float beyond;        ///< how far the outside ray goes (infinity where it leaves the scene)
};

/// The two sides of the silhouette point `ss` at `distance` from the viewpoint, seen along
/// `inside` and `outside` (rays aimed just inside and just outside it, expected to travel
/// `reach_in` and `reach_out`).
Across radiance_across(const Scene& scene, const SamplingIntegrator& radiance, PCG32& rng, const SilhouetteSample& ss,
                       const Float& distance, const Ray3f& inside, const Ray3f& outside, const Float& reach_in,
                       const Float& reach_out, Bool valid) {
  SurfaceInteraction hit_in = scene.ray_intersect(inside, valid), hit_out = scene.ray_intersect(outside, valid);
  Float tolerance = distance * kHitTolerance, in_plane = distance * kPlaneTolerance;
  Array3f p = detach(ss.p);
  Bool on_crease = (abs(dot(hit_in.p - p, ss.inside_plane)) < in_plane) &
                   (abs(dot(hit_out.p - p, ss.outside_plane)) < in_plane) & hit_out.is_valid();
  valid = valid & hit_in.is_valid() & (abs(hit_in.t - reach_in) < tolerance) &
          ((!hit_out.is_valid()) | (hit_out.t > reach_out - tolerance)) & ((!ss.crease) | on_crease);
  ControlModeScope mode(radiance.mode());
  PCG32 rng_outside = rng;
  Color3f in = radiance.sample(scene, rng, inside, valid).radiance;
  Color3f out = radiance.sample(scene, rng_outside, outside, valid).radiance;
  return {in - out, valid, select(hit_out.is_valid(), hit_out.t, Float(kInfinity))};
}

/// Splats the derivatives of `value` where `valid` (RGB; the alpha channel, when the film has
/// one, gets nothing), at `position`, defined where `placed`. The value itself, a speed's
/// times zero, is zero: computing it and `valid` (the radiance either side, rays traced)
/// would only make the backward pass run them twice, once for the image it reads.
void splat_color(const Film& film, ImageBlock& block, const Array2f& position, const Bool& placed, const Color3f& value,
                 const Bool& valid) {
  Color3f derivatives = derivatives_without_values(select(valid, value, Color3f(0.0f, 0.0f, 0.0f)));
  std::vector<Float> values{derivatives.x, derivatives.y, derivatives.z};
  if (film.has_alpha()) values.push_back(zeros<Float>(value.x.size()));
  block.splat(position, values, placed);
}

/// The primary term of one silhouette seen from the camera at `eye`, with `lanes` samples.
void splat_primary(const Scene& scene, const Sensor& sensor, const SamplingIntegrator& radiance,
                   const Silhouette& silhouette, const std::array<float, 3>& eye, size_t lanes, uint32_t seed,
                   ImageBlock& block) {
  auto [width, height] = sensor.film()->size();
  Array2f film_size(opaque<Float>(float(width)), opaque<Float>(float(height)));
  PCG32 rng = sensor.sampler()->rng(seed, lanes);
  SilhouetteSample ss = silhouette.sample(next_2d(rng), opaque_point(eye));
  Bool valid = ss.valid, placed;
  Color3f difference;
  Array2f normal_px;
  Float length_px;  // pixels of film per unit length of silhouette
  {
    GradScope detached = suspend_grad();
    Array3f p = detach(ss.p);
    Float distance = norm(p - opaque_point(eye));
    auto pixel = [&](const Array3f& q) {
      auto [ds, weight] = sensor.sample_direction(q, valid);
      valid = valid & (ds.pdf > 0.0f);
      return Array2f(ds.uv.x * film_size.x, ds.uv.y * film_size.y);
    };
    Array3f inner = p - ss.normal * (distance * kSideOffset), outer = p + ss.normal * (distance * kSideOffset);
    Array2f inner_px = pixel(inner), outer_px = pixel(outer);
    Float step = distance * kImageStep;
    Array2f along = (pixel(p + ss.tangent * step) - pixel(p - ss.tangent * step)) / (2.0f * step);
    length_px = norm(along);
    Array2f crosswise(-along.y, along.x);
    Float orientation = copysign(rcp(length_px), dot(crosswise, outer_px - inner_px));
    normal_px = Array2f(crosswise.x * orientation, crosswise.y * orientation);

    auto film_ray = [&](const Array2f& px) {
      return sensor.sample_ray(Array2f(px.x / film_size.x, px.y / film_size.y), valid);
    };
    placed = valid;
    auto [ray_in, weight_in] = film_ray(inner_px);
    auto [ray_out, weight_out] = film_ray(outer_px);
    Across across = radiance_across(scene, radiance, rng, ss, distance, ray_in, ray_out, norm(inner - ray_in.o),
                                    norm(outer - ray_out.o), valid);
    std::tie(difference, valid) = std::tie(across.difference, across.seen);
    difference = difference * weight_in;  // a perspective camera's weight: 1 on both sides
  }
  auto [ds, weight] = sensor.sample_direction(ss.p, placed);
  Array2f position(ds.uv.x * film_size.x, ds.uv.y * film_size.y);
  Float motion = dot(position - detach(position), normal_px);
  Color3f value = difference * (motion * (length_px / (ss.pdf * opaque<Float>(float(lanes)))));
  splat_color(*sensor.film(), block, detach(position), placed, value, valid);
}

/// The indirect term's integrand at one point of its sample space per lane: `point` (the
/// pixel position over the window sampled and the number that picks where on the
/// silhouette) and `along` (where along it).
struct IndirectIntegrand {
  Array2f position;      ///< the pixel position, where the value splats
  Color3f contribution;  ///< the integrand over the silhouette's speed (detached)
  Float motion;          ///< the silhouette's speed across itself (its derivatives)
  Bool valid;
};

/// The crop window with its border, the pixel positions the indirect term samples.
struct SampledWindow {
  std::array<float, 2> offset, size;
  double pixels() const { return double(size[0]) * size[1]; }
};

SampledWindow sampled_window(const Film& film) {
  auto [crop_width, crop_height] = film.crop_size();
  auto [offset_x, offset_y] = film.crop_offset();
  float border = float(film.border());
  return {{float(offset_x) - border, float(offset_y) - border},
          {float(crop_width) + 2.0f * border, float(crop_height) + 2.0f * border}};
}

/// What every sample of the indirect term shares: the scene seen through `sensor`, the
/// radiance `arriving` at the points seen, the form of their derivatives, the window.
struct IndirectSetting {
  const Scene& scene;
  const Sensor& sensor;
  const SamplingIntegrator& arriving;
  bool area_form;
  SampledWindow window;
};

IndirectIntegrand indirect_integrand(const IndirectSetting& setting, const Silhouette& silhouette, const Array3f& point,
                                     const Float& along, PCG32& rng) {
  const auto& [scene, sensor, arriving, area_form, window] = setting;
  auto [width, height] = sensor.film()->size();
  Array2f position(opaque<Float>(window.offset[0]) + point.x * opaque<Float>(window.size[0]),
                   opaque<Float>(window.offset[1]) + point.y * opaque<Float>(window.size[1]));
  auto [ray, ray_weight] = sensor.sample_ray(
      Array2f(position.x / opaque<Float>(float(width)), position.y / opaque<Float>(float(height))), Bool(true));
  // The point seen, moving along its camera ray with the shapes and the camera.
  SurfaceInteraction si = scene.ray_intersect(ray, Bool(true));
  Array3f x = detach(si.p);
  SilhouetteSample ss = silhouette.sample(Array2f(point.z, along), x);
  Bool valid = ss.valid & si.is_valid();
  Color3f contribution;
  Float beyond;  // over the distance to the silhouette
  {
    GradScope detached = suspend_grad();
    Array3f p = detach(ss.p), to_p = p - x;
    Float distance = norm(to_p);
    Array3f direction = to_p / distance;
    auto [bsdf_value, bsdf_pdf] = scene.bsdf_eval_pdf(BSDFContext(), si, si.to_local(direction), valid);
    valid = valid & (distance > 0.0f) & ((bsdf_value.x != 0.0f) | (bsdf_value.y != 0.0f) | (bsdf_value.z != 0.0f));
    Array3f inner = p - ss.normal * (distance * kSideOffset), outer = p + ss.normal * (distance * kSideOffset);
    Ray3f ray_in = si.spawn_ray(normalize(inner - x)), ray_out = si.spawn_ray(normalize(outer - x));
    Across across = radiance_across(scene, arriving, rng, ss, distance, ray_in, ray_out, norm(inner - ray_in.o),
                                    norm(outer - ray_out.o), valid);
    valid = across.seen;
    // Directions at x per unit length of silhouette, and the speed in directions: both over
    // the distance.
    Float measure = norm(cross(ss.tangent, direction)) / (distance * distance * ss.pdf);
    contribution =
        bsdf_value * across.difference * detach(ray_weight) * (measure * opaque<Float>(float(window.pixels())));
    beyond = distance / across.beyond;
  }
  // The silhouette's speed across the segment from x: its own less x's. In the area form
  // (the integrand's far points held where they are, as `direct`'s are) x's motion also
  // moves the boundary among those far points: + x's speed over their distance.
  Array3f x_motion = si.p - x;
  Float motion = dot(ss.p - detach(ss.p) - x_motion, ss.normal);
  if (area_form) motion = motion + dot(x_motion, ss.normal) * beyond;
  return {position, contribution, motion, valid};
}

/// One shape's guiding distribution, trained on `rounds` × `lanes` uniform samples of the
/// integrand's magnitude (its largest channel).
IndirectGuiding train_guiding(const IndirectSetting& setting, const Silhouette& silhouette,
                              const GuidingSettings& guiding, size_t lanes, uint32_t seed) {
  if (guiding.kind == GuidingKind::None) return {};
  GradScope detached = suspend_grad();
  std::vector<std::array<float, 3>> points;
  std::vector<float> masses;
  for (uint32_t round = 0; round < guiding.rounds; ++round) {
    PCG32 rng = setting.sensor.sampler()->rng(seed + round, lanes);
    Array3f point(rng.next_float32(), rng.next_float32(), rng.next_float32());
    IndirectIntegrand f = indirect_integrand(setting, silhouette, point, rng.next_float32(), rng);
    Color3f c = f.contribution;
    Float mass = select(f.valid, max(max(abs(c.x), abs(c.y)), abs(c.z)), Float(0.0f));
    mass = select(isfinite(mass), mass, Float(0.0f));
    eval(point.x, point.y, point.z, mass);
    std::vector<float> xs = point.x.to_vector(), ys = point.y.to_vector(), zs = point.z.to_vector(),
                       ms = mass.to_vector();
    for (size_t i = 0; i < lanes; ++i) points.push_back({xs[i], ys[i], zs[i]});
    masses.insert(masses.end(), ms.begin(), ms.end());
  }
  return IndirectGuiding(guiding.kind, points, masses);
}

/// The indirect term of one shape's silhouettes seen from the points the camera sees, with
/// `lanes` samples drawn from `guiding`.
void splat_indirect(const IndirectSetting& setting, const Silhouette& silhouette, const IndirectGuiding& guiding,
                    size_t lanes, uint32_t seed, ImageBlock& block) {
  PCG32 rng = setting.sensor.sampler()->rng(seed, lanes);
  auto [point, weight] = guiding.sample(rng);
  IndirectIntegrand f = indirect_integrand(setting, silhouette, point, rng.next_float32(), rng);
  Float scale = weight * opaque<Float>(float(1.0 / double(lanes)));
  splat_color(*setting.sensor.film(), block, f.position, Bool(true), f.contribution * (f.motion * scale), f.valid);
}

}  // namespace

TensorXf primary_visibility(const Scene& scene, const Sensor& sensor, const SamplingIntegrator& radiance, uint32_t seed,
                            uint32_t spp) {
  const Film& film = *sensor.film();
  // A sensor that cannot project points onto its film raises here, before anything is traced.
  if (spp != 0) sensor.sample_direction(Array3f(Float(0.0f), Float(0.0f), Float(1.0f)), Bool(false));
  ImageBlock block = film.create_block(3 + film.has_alpha());
  Matrix4d camera = sensor.world_transform().to_rows();
  std::array<float, 3> eye{float(camera[3]), float(camera[7]), float(camera[11])};
  auto [crop_width, crop_height] = film.crop_size();
  SharedSilhouettes shared = share_samples(scene, camera_moves(sensor), double(crop_width) * crop_height * spp,
                                           [&](const Shape& shape) { return shape.silhouette(eye); });
  for (size_t k = 0; k < shared.silhouettes.size(); ++k)
    splat_primary(scene, sensor, radiance, *shared.silhouettes[k], eye, shared.lanes[k],
                  seed * 0x9e3779b9u + uint32_t(k) + 1u, block);
  return film.develop(block, true);
}

TensorXf indirect_visibility(const Scene& scene, const Sensor& sensor, const SamplingIntegrator& arriving,
                             bool area_form, const GuidingSettings& guiding, uint32_t seed, uint32_t spp) {
  const Film& film = *sensor.film();
  ImageBlock block = film.create_block(3 + film.has_alpha());
  IndirectSetting setting{scene, sensor, arriving, area_form, sampled_window(film)};
  SharedSilhouettes shared = share_samples(scene, camera_moves(sensor), setting.window.pixels() * spp,
                                           [](const Shape& shape) { return shape.silhouettes(); });
  for (size_t k = 0; k < shared.silhouettes.size(); ++k) {
    uint32_t shape_seed = (seed ^ 0x5bd1e995u) * 0x9e3779b9u + uint32_t(k) + 1u;
    IndirectGuiding guided = train_guiding(setting, *shared.silhouettes[k], guiding, kTrainingLanes * shared.lanes[k],
                                           ~shape_seed * 0x85ebca6bu);
    splat_indirect(setting, *shared.silhouettes[k], guided, shared.lanes[k], shape_seed, block);
  }
  return film.develop(block, true);
}

}  // namespace kiln::render
