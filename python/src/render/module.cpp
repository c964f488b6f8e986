// The extension kiln._kiln_render: kiln.render's classes and functions. It needs kiln._kiln
// (imported first by the kiln package) for the array and tensor types it exchanges.
#include "render/render_binding.h"

NB_MODULE(_kiln_render, m) {
  m.doc() = "kiln.render: a physically based renderer that reads Mitsuba 3 scenes (C++ core).";
  nanobind::module_::import_("kiln._kiln");
  using namespace kiln::python::render;
  bind_transform(m);
  bind_objects(m);
  bind_interfaces(m);
  bind_load(m);
  bind_parameters(m);
  bind_optimizers(m);
  bind_warp(m);
}
