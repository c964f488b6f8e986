// The tent filter (Mitsuba 3's `tent`): 1 - |x| / radius, `radius` 1 by default.
#include "core/parameter_checks.h"

#include <kiln/math.h>
#include <kiln/render/plugin.h>
#include <kiln/render/rfilter.h>

namespace kiln::render {
namespace {

class TentFilter : public ReconstructionFilter {
 public:
  explicit TentFilter(const Properties& props) { radius_ = positive_float(props, "radius", 1.0); }
  Float eval(const Float& x) const override { return max(Float(0.0f), 1.0f - abs(x) * (1.0f / radius_)); }
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Filter, "tent", [](const Properties& p) { return std::make_shared<TentFilter>(p); });

}  // namespace kiln::render
