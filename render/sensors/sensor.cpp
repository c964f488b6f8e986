// What every sensor shares: its film and sampler (Mitsuba's defaults when none is nested),
// and the refusal of sensors that light paths cannot reach.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/sensor.h>
#include <kiln/render/traverse.h>

namespace kiln::render {
namespace {
/// The nested object of `kind`, or a default `plugin` made with no parameters.
template <typename T>
std::shared_ptr<T> nested_or_default(const Properties& props, PluginKind kind, const char* plugin) {
  std::vector<std::shared_ptr<Object>> nested = props.objects(kind);
  std::shared_ptr<Object> object =
      nested.empty() ? create_object(Properties(kind, plugin, "", props.source())) : nested.back();
  return std::dynamic_pointer_cast<T>(object);
}
}  // namespace

Sensor::Sensor(const Properties& props)
    : film_(nested_or_default<Film>(props, PluginKind::Film, "hdrfilm")),
      sampler_(nested_or_default<Sampler>(props, PluginKind::Sampler, "independent")) {}

std::pair<DirectionSample3f, Color3f> Sensor::sample_direction(const Array3f&, const Bool&) const {
  throw ValueError(
      "kiln.render: the '" + plugin() +
      "' sensor cannot be reached by light paths nor project points onto its film, so the ptracer, "
      "direct_projective and prb_projective integrators cannot render with it; use a 'perspective' sensor");
}

void Sensor::traverse(TraversalCallback& callback) {
  callback.put_object("film", film_.get());
  callback.put_object("sampler", sampler_.get());
}

}  // namespace kiln::render
