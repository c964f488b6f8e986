// The box filter (Mitsuba 3's `box`): each sample counts fully for the pixel it lies in.
#include <kiln/render/plugin.h>
#include <kiln/render/rfilter.h>

namespace kiln::render {
namespace {

class BoxFilter : public ReconstructionFilter {
 public:
  explicit BoxFilter(const Properties&) { radius_ = 0.5f; }
  Float eval(const Float& x) const override { return select((x >= -0.5f) & (x < 0.5f), Float(1.0f), Float(0.0f)); }
  bool is_box() const override { return true; }
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Filter, "box", [](const Properties& p) { return std::make_shared<BoxFilter>(p); });

}  // namespace kiln::render
