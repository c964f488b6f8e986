// kiln.render's binding (the extension kiln._kiln_render): one bind_* function per topic,
// each converting Python values and forwarding to the C++ renderer.
#pragma once

#include <kiln/errors.h>
#include <kiln/render/interaction.h>
#include <kiln/vector.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>

#include <memory>
#include <string>

namespace kiln::render {
class Scene;
}

namespace kiln::python::render {

namespace nb = nanobind;

/// A surface interaction together with the scene it was found in, so that si.bsdf() can
/// dispatch on the hit shape's BSDF (Mitsuba keeps that pointer in the interaction).
/// Python's kr.SurfaceInteraction3f() (or kl.zeros of it), and the interactions a BSDF
/// written in Python receives, have no scene: a BSDF can evaluate them, si.bsdf() cannot.
struct SceneInteraction : kiln::render::SurfaceInteraction {
  std::shared_ptr<const kiln::render::Scene> scene;
};

/// `value` as a Kiln vector of type V: a V, or a sequence of its components (numbers or
/// arrays), as Dr.Jit and Mitsuba take them; TypeError naming `where` (the function and
/// argument) otherwise.
template <typename V> V as_vector(nb::handle value, const std::string& where) {
  if (nb::isinstance<V>(value)) return nb::cast<V>(value);
  std::array<typename V::Component, V::Size> components;
  if (!nb::try_cast(value, components))
    throw TypeError("kiln.render: " + where + " must be a vector of " + std::to_string(V::Size) +
                    " components (a Kiln vector or a sequence), got " + nb::type_name(value.type()).c_str());
  V v;
  for (size_t i = 0; i < V::Size; ++i) v[i] = components[i];
  return v;
}

/// A count or seed argument of `function`: within [low, high] (`range` in words), or a
/// ValueError naming the function and the argument.
uint32_t checked_argument(const char* function, const char* name, int64_t value, int64_t low, int64_t high,
                          const char* range);

void bind_transform(nb::module_& m);
void bind_objects(nb::module_& m);
/// kr.BSDF and kr.Integrator, subclassable in Python, kr.Properties and register_bsdf /
/// register_integrator (bind_objects() calls it after binding kr.Object).
void bind_python_plugins(nb::module_& m);
/// kr.Integrator and kr.SamplingIntegrator, subclassable in Python, the camera samples of
/// a render and register_integrator (bind_objects() calls it after bind_python_plugins()).
void bind_python_integrators(nb::module_& m);
void bind_load(nb::module_& m);
void bind_parameters(nb::module_& m);
void bind_optimizers(nb::module_& m);
void bind_warp(nb::module_& parent);
/// Needs bind_objects() first (it adds methods to kr.Scene, Sensor, BSDF and Emitter).
void bind_interfaces(nb::module_& m);

}  // namespace kiln::python::render
