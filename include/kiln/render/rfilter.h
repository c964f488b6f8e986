// Reconstruction filters (Mitsuba 3's `rfilter` plugins: box, tent, gaussian): how much a
// sample contributes to the pixels around it.
//
// What an implementation guarantees:
// - eval(x) is the 1D filter at offset x (in pixels) from a pixel center, zero for
//   |x| >= radius(); films weight a sample by eval(dx) · eval(dy) and divide each pixel by
//   the sum of its weights, so filters need not be normalized.
#pragma once

#include <kiln/render/common.h>
#include <kiln/render/properties.h>

namespace kiln::render {

class ReconstructionFilter : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Filter; }
  /// The filter's support: eval() vanishes at and beyond this distance.
  float radius() const { return radius_; }
  /// The filter's value at offset `x` pixels.
  virtual Float eval(const Float& x) const = 0;
  /// The box filter: films then add each sample to the pixel it lies in, unweighted.
  virtual bool is_box() const { return false; }

 protected:
  float radius_ = 0.5f;
};

}  // namespace kiln::render
