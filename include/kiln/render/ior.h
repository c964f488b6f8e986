// Indices of refraction of named dielectrics (Mitsuba 3's mitsuba/render/ior.h table: Hecht,
// "Optics", 4th ed., at about 589 nm) and the `int_ior` / `ext_ior` parameters of the
// dielectric BSDFs, which take a number or one of these names.
//
// What an implementation guarantees:
// - Names are matched case-insensitively ("BK7" is "bk7"), as Mitsuba does.
// - An unknown name, a value of the wrong type or an index <= 0 is a ValueError or
//   TypeError naming the plugin, the parameter, where it came from and what is accepted.
#pragma once

#include <kiln/render/properties.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln::render {

/// The table of named indices, in Mitsuba's order ("vacuum" 1.0, ..., "diamond" 2.419).
const std::vector<std::pair<std::string, float>>& ior_table();

/// The index of refraction of material `name`; throws ValueError listing the known names.
float lookup_ior(const std::string& name);

/// The indices on both sides of a dielectric interface.
struct InterfaceIor {
  float int_ior;  ///< inside (the side the normal points away from)
  float ext_ior;  ///< outside
  /// The relative index int_ior / ext_ior, the `eta` of Mitsuba's dielectric BSDFs.
  float eta() const { return int_ior / ext_ior; }
};

/// Reads `int_ior` (default: the material `default_int_ior`) and `ext_ior` (default "air"),
/// each a positive number or a material name.
InterfaceIor interface_ior(const Properties& props, const std::string& default_int_ior);

/// Throws ValueError when the two indices are equal: rough dielectrics and plastics cannot
/// represent an interface that does not refract.
void require_refracting(const Properties& props, const InterfaceIor& ior);

}  // namespace kiln::render
