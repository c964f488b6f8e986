// The complex index of refraction of the conductor BSDFs: explicit `eta` and `k`, or a
// `material` preset (Mitsuba 3's measured metals, as the RGB values Mitsuba derives from
// its spectral data).
#pragma once

#include <kiln/render/texture.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace kiln::render {

/// A named conductor's eta and k in linear RGB.
struct ConductorPreset {
  std::string name;
  Color3d eta, k;
};

/// Mitsuba's presets ("Au", "Cu", "Ag", ...), names as Mitsuba spells them (case matters).
const std::vector<ConductorPreset>& conductor_presets();

/// The real and imaginary parts of a conductor's index as textures.
struct ComplexIor {
  std::shared_ptr<Texture> eta, k;
};

/// Reads `material` (default "none") and, for "none", `eta` (default 0) and `k` (default
/// 1): the perfect mirror Mitsuba defaults to. Giving a preset together with eta or k, or
/// an unknown preset, is a ValueError naming the plugin and the parameters.
ComplexIor complex_ior_parameters(const Properties& props);

}  // namespace kiln::render
