// kr.warp: Mitsuba's warping functions (mi.warp.square_to_cosine_hemisphere ...) over Kiln
// arrays, so scripts and Python integrators sample as the renderer does. Samples and points
// are kl.Array2f / kl.Array3f or sequences of their components (Dr.Jit's spelling).
#include "render/render_binding.h"

#include <kiln/render/warp.h>

namespace kiln::python::render {
namespace {

/// Binds warp::name(V) and its pdf(W), each taking vectors or sequences.
template <typename V, typename Out, typename W> void bind_pair(nb::module_& m, const char* name, const char* pdf_name,
                                                               Out (*warp_fn)(const V&), Float (*pdf_fn)(const W&),
                                                               const char* doc) {
  m.def(
      name,
      [=](nb::handle sample) { return warp_fn(as_vector<V>(sample, std::string("warp.") + name + "(): sample")); },
      nb::arg("sample"), doc);
  m.def(
      pdf_name,
      [=](nb::handle point) { return pdf_fn(as_vector<W>(point, std::string("warp.") + pdf_name + "(): v")); },
      nb::arg("v"), "The density of the warp's output (zero outside its support).");
}

}  // namespace

void bind_warp(nb::module_& parent) {
  namespace w = kiln::render::warp;
  nb::module_ m = parent.def_submodule("warp", "Warps from [0, 1)² to points and directions (Mitsuba's mi.warp).");
  bind_pair(m, "square_to_uniform_disk_concentric", "square_to_uniform_disk_concentric_pdf",
            &w::square_to_uniform_disk_concentric, &w::square_to_uniform_disk_concentric_pdf,
            "Uniform on the unit disk (Shirley and Chiu's concentric map).");
  bind_pair(m, "square_to_uniform_sphere", "square_to_uniform_sphere_pdf", &w::square_to_uniform_sphere,
            &w::square_to_uniform_sphere_pdf, "Uniform directions on the unit sphere.");
  bind_pair(m, "square_to_uniform_hemisphere", "square_to_uniform_hemisphere_pdf", &w::square_to_uniform_hemisphere,
            &w::square_to_uniform_hemisphere_pdf, "Uniform directions on the hemisphere around +z.");
  bind_pair(m, "square_to_cosine_hemisphere", "square_to_cosine_hemisphere_pdf", &w::square_to_cosine_hemisphere,
            &w::square_to_cosine_hemisphere_pdf, "Cosine-weighted directions on the hemisphere around +z.");
  bind_pair(m, "square_to_uniform_triangle", "square_to_uniform_triangle_pdf", &w::square_to_uniform_triangle,
            &w::square_to_uniform_triangle_pdf, "Uniform barycentric coordinates on a triangle.");
  m.def(
      "square_to_uniform_cone",
      [](nb::handle sample, const Float& cos_cutoff) {
        return w::square_to_uniform_cone(as_vector<Array2f>(sample, "warp.square_to_uniform_cone(): sample"),
                                         cos_cutoff);
      },
      nb::arg("sample"), nb::arg("cos_cutoff"), "Uniform directions in the cone of cos θ ≥ cos_cutoff around +z.");
  m.def(
      "square_to_uniform_cone_pdf",
      [](nb::handle v, const Float& cos_cutoff) {
        return w::square_to_uniform_cone_pdf(as_vector<Array3f>(v, "warp.square_to_uniform_cone_pdf(): v"), cos_cutoff);
      },
      nb::arg("v"), nb::arg("cos_cutoff"), "The cone's density.");
}

}  // namespace kiln::python::render
