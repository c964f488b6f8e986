// A sensor that renders chosen pixels of other sensors, Kiln's `pixel_batch` (what
// kr.ad.loaders.RayDataLoader renders, as Mitsuba's flat sensor): its film is one row, and
// its pixel k traces the ray of pixel `pixel_indices`[k] of the nested sensors, whose films
// all have one size (width w, height h). Pixels are numbered through the sensors in order:
// sensor s, row y, column x is (s · h + y) · w + x. The jitter inside the batch's pixel
// becomes the jitter inside the chosen one. traverse() lists `pixel_indices` (a UInt32
// array, so a new batch compiles nothing) and the nested sensors as `sensor_<i>`.
#include "core/parameter_checks.h"

#include <kiln/construct.h>
#include <kiln/render/plugin.h>
#include <kiln/render/sensor.h>
#include <kiln/render/traverse.h>

namespace kiln::render {
namespace {

class PixelBatchSensor : public Sensor {
 public:
  explicit PixelBatchSensor(const Properties& props) : Sensor(props) {
    for (const std::shared_ptr<Object>& object : props.objects(PluginKind::Sensor))
      sensors_.push_back(std::static_pointer_cast<Sensor>(object));
    if (sensors_.empty()) throw_plugin_error(props, "needs the sensors whose pixels it renders, nested in it");
    source_size_ = sensors_[0]->film()->size();
    for (const std::shared_ptr<Sensor>& sensor : sensors_)
      if (sensor->film()->size() != source_size_)
        throw_plugin_error(props, "the nested sensors' films must all have one size");
    if (film()->size()[1] != 1) throw_plugin_error(props, "its film must be one row (height 1)");
    pixel_indices_ = arange<UInt32>(film()->size()[0]) % UInt32(uint32_t(pixel_count()));
  }

  std::pair<Ray3f, Color3f> sample_ray(const Array2f& film_position, const Bool& active) const override {
    auto [width, height] = source_size_;
    Float x = film_position.x * float(film()->size()[0]);
    UInt32 column = min(cast<uint32_t>(floor(x)), UInt32(film()->size()[0] - 1));
    Float jitter_x = x - floor(x), jitter_y = film_position.y - floor(film_position.y);
    UInt32 index = gather(pixel_indices_, column, active);
    UInt32 per_sensor(width * height);
    UInt32 sensor = index / per_sensor, within = index - (index / per_sensor) * per_sensor;
    UInt32 row = within / UInt32(width), pixel_column = within - (within / UInt32(width)) * UInt32(width);
    Array2f position((cast<float>(pixel_column) + jitter_x) * (1.0f / float(width)),
                     (cast<float>(row) + jitter_y) * (1.0f / float(height)));
    auto [ray, weight] = sensors_[0]->sample_ray(position, active & (sensor == 0u));
    for (size_t i = 1; i < sensors_.size(); ++i) {
      Bool mine = sensor == uint32_t(i);
      auto [other, other_weight] = sensors_[i]->sample_ray(position, active & mine);
      ray = Ray3f{select(mine, other.o, ray.o), select(mine, other.d, ray.d), select(mine, other.maxt, ray.maxt)};
      weight = select(mine, other_weight, weight);
    }
    return {ray, weight};
  }

  const Transform4f& world_transform() const override { return sensors_[0]->world_transform(); }

  void traverse(TraversalCallback& callback) override {
    Sensor::traverse(callback);
    callback.put("pixel_indices", &pixel_indices_, param_flags::kNonDifferentiable);
    for (size_t i = 0; i < sensors_.size(); ++i) callback.put_object("sensor_" + std::to_string(i), sensors_[i].get());
  }

  void parameters_changed(const std::vector<std::string>& keys) override {
    if (std::find(keys.begin(), keys.end(), "pixel_indices") != keys.end() && pixel_indices_.size() != 1 &&
        pixel_indices_.size() != film()->size()[0])
      throw_parameter_error(*this, "pixel_indices",
                            "holds " + std::to_string(pixel_indices_.size()) + " indices for a film row of " +
                                std::to_string(film()->size()[0]) + " pixels");
  }

 private:
  size_t pixel_count() const { return sensors_.size() * source_size_[0] * source_size_[1]; }

  std::vector<std::shared_ptr<Sensor>> sensors_;
  std::array<uint32_t, 2> source_size_{};
  UInt32 pixel_indices_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Sensor, "pixel_batch",
                     [](const Properties& props) { return std::make_shared<PixelBatchSensor>(props); });

}  // namespace kiln::render
