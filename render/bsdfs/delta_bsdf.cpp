// Choosing between the reflection and the transmission lobe of a smooth interface.
#include "bsdfs/delta_bsdf.h"

#include <kiln/autodiff.h>

namespace kiln::render {

LobeChoice choose_lobe(bool has_reflection, bool has_transmission, const Float& reflectance, const Float& sample1,
                       const Bool& active) {
  LobeChoice choice;
  Float transmittance = 1.0f - reflectance;
  if (has_reflection && has_transmission) {
    choice.reflected = active & (sample1 <= reflectance);
    // The choice is discrete: its probability carries no derivative (Mitsuba detaches it).
    choice.pdf = detach(select(choice.reflected, reflectance, transmittance));
    choice.weight = Float(1.0f);
  } else {
    choice.reflected = active & Bool(has_reflection);
    choice.pdf = Float(1.0f);
    choice.weight = has_reflection ? reflectance : transmittance;
  }
  choice.valid = active & Bool(has_reflection || has_transmission);
  choice.transmitted = choice.valid & !choice.reflected;
  choice.pdf = select(choice.valid, choice.pdf, Float(0.0f));
  return choice;
}

}  // namespace kiln::render
