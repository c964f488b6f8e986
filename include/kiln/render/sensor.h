// Sensors (Mitsuba 3's Sensor interface; `perspective`): where rays start, with the film
// they expose and the sampler that drives them.
//
// What an implementation guarantees:
// - sample_ray() maps a position on the film, in [0, 1]² of the full film (x right, y
//   down), to a ray in world space with a unit direction, and returns its importance
//   weight (1 for a pinhole camera with a filtered film).
// - sample_direction() is the way back (the particle tracer's connections): from a point
//   `ref_p` to the sensor, with the film position the point is seen at (`uv`, [0, 1]² of
//   the full film), pdf 1 where it is seen inside the crop window (0 elsewhere), and the
//   weight importance / dist², the importance normalized to integrate to 1 over the crop
//   window's directions.
// - Its parameters (to_world, field of view) are Kiln arrays registered in traverse();
//   kernels read them as opaque values, so changing them compiles nothing.
#pragma once

#include <kiln/render/film.h>
#include <kiln/render/interaction.h>
#include <kiln/render/ray.h>
#include <kiln/render/sampler.h>
#include <kiln/render/transform.h>

#include <memory>
#include <utility>

namespace kiln::render {

class Sensor : public Object {
 public:
  /// Takes the nested `film` and `sampler` (hdrfilm and independent by default).
  explicit Sensor(const Properties& props);
  PluginKind kind() const override { return PluginKind::Sensor; }

  /// The ray through `film_position` and its weight.
  virtual std::pair<Ray3f, Color3f> sample_ray(const Array2f& film_position, const Bool& active) const = 0;
  /// The sensor seen from `ref_p` and the weight of that connection. By default a
  /// ValueError: the sensor cannot be reached by light paths.
  virtual std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Bool& active) const;
  /// Camera space to world space (Mitsuba's world_transform()).
  virtual const Transform4f& world_transform() const = 0;

  const std::shared_ptr<Film>& film() const { return film_; }
  void traverse(TraversalCallback& callback) override;
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }

 private:
  std::shared_ptr<Film> film_;
  std::shared_ptr<Sampler> sampler_;
};

}  // namespace kiln::render
