// kiln.render's binding (the extension kiln._kiln_render): one bind_* function per topic,
// each converting Python values and forwarding to the C++ renderer.
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python::render {

namespace nb = nanobind;

void bind_transform(nb::module_& m);
void bind_objects(nb::module_& m);
void bind_load(nb::module_& m);
void bind_parameters(nb::module_& m);
void bind_optimizers(nb::module_& m);
void bind_warp(nb::module_& parent);
/// Needs bind_objects() first (it adds methods to kr.Scene, Sensor, BSDF and Emitter).
void bind_interfaces(nb::module_& m);

}  // namespace kiln::python::render
