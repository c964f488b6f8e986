// The Gaussian filter (Mitsuba 3's `gaussian`, the default): `stddev` 0.5, cut off at four
// standard deviations and shifted down so that it reaches zero there.
#include "core/parameter_checks.h"

#include <kiln/math.h>
#include <kiln/render/plugin.h>
#include <kiln/render/rfilter.h>

#include <cmath>

namespace kiln::render {
namespace {

class GaussianFilter : public ReconstructionFilter {
 public:
  explicit GaussianFilter(const Properties& props) : stddev_(positive_float(props, "stddev", 0.5)) {
    radius_ = 4.0f * stddev_;
  }
  Float eval(const Float& x) const override {
    float alpha = -1.0f / (2.0f * stddev_ * stddev_);
    float bias = std::exp(alpha * radius_ * radius_);
    return max(Float(0.0f), exp(alpha * (x * x)) - bias);
  }

 private:
  float stddev_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Filter, "gaussian",
                     [](const Properties& p) { return std::make_shared<GaussianFilter>(p); });

}  // namespace kiln::render
