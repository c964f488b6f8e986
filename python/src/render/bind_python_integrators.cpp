// Integrators written in Python (Mitsuba's mi.register_integrator): kr.SamplingIntegrator
// subclassed in Python, whose sample(scene, sampler, ray, medium, active) the C++ render
// loop calls for every camera ray while it traces; kr.Integrator subclassed for render()
// itself (kiln.render.ad's ADIntegrator / RBIntegrator are written on it); the per-lane
// sampler both receive; and the camera samples a render() written in Python starts from.
#include "render/python_plugin.h"

#include <kiln/errors.h>
#include <kiln/render/film.h>
#include <kiln/render/integrator.h>
#include <kiln/render/scene.h>
#include <kiln/render/sensor.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/trampoline.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// The random numbers of a render's lanes, one generator per lane, as Mitsuba's Sampler
/// hands them to an integrator: next_1d() / next_2d() advance the lanes' generators.
struct LaneSampler {
  PCG32 rng;

  Float next_1d(const Bool& active) { return rng.next_float32(active); }
  Array2f next_2d(const Bool& active) {
    Float x = rng.next_float32(active);
    return Array2f(x, rng.next_float32(active));
  }
};

/// The method `name` of the Python object behind `self`, which a Python integrator must
/// define; TypeError naming its class otherwise.
nb::object required(nb::handle self, nb::handle bound_class, const char* name, const char* contract) {
  nb::object method = python_override(self, bound_class, name);
  if (!method.is_valid())
    throw TypeError("kiln.render: " + std::string(nb::type_name(self.type()).c_str()) + "." + name +
                    "() is missing: " + contract);
  return method;
}

/// kr.SamplingIntegrator as subclassed in Python: Mitsuba's contract, sample(scene, sampler,
/// ray, medium, active) -> (radiance, valid, aovs), and optionally aov_names(), traverse()
/// and parameters_changed().
class PythonSamplingIntegrator : public SamplingIntegrator {
 public:
  NB_TRAMPOLINE(SamplingIntegrator);
  /// What mi.SamplingIntegrator.__init__(self, props) calls (it reads `mode`).
  explicit PythonSamplingIntegrator(const PythonProperties& props) : SamplingIntegrator(props.get()) {}

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active) const override {
    nb::gil_scoped_acquire gil;
    nb::handle self = nb_trampoline.base();
    nb::object method = required(self, nb::type<SamplingIntegrator>(), "sample",
                                 "an integrator written in Python defines sample(scene, sampler, ray, medium, active)");
    nb::object sampler = nb::cast(LaneSampler{rng});
    nb::object result = method(nb::cast(&scene, nb::rv_policy::reference), sampler, ray, nb::none(), active);
    std::string where = std::string(nb::type_name(self.type()).c_str()) + ".sample()";
    if (!nb::isinstance<nb::tuple>(result) || nb::len(result) != 3)
      throw TypeError("kiln.render: " + where + " must return (radiance, valid, aovs)");
    RaySample out{result_as<Color3f>(result[0], "Array3f", where + "'s radiance"),
                  result_as<Bool>(result[1], "Bool", where + "'s valid"),
                  {}};
    for (nb::handle aov : result[2]) out.aovs.push_back(result_as<Float>(aov, "Float", where + "'s aovs"));
    if (out.aovs.size() != aov_names().size())
      throw ValueError("kiln.render: " + where + " returned " + std::to_string(out.aovs.size()) +
                       " AOVs, but aov_names() names " + std::to_string(aov_names().size()));
    rng = nb::inst_ptr<LaneSampler>(sampler)->rng;
    return out;
  }
  std::vector<std::string> aov_names() const override {
    nb::gil_scoped_acquire gil;
    nb::object method = python_override(nb_trampoline.base(), nb::type<SamplingIntegrator>(), "aov_names");
    return method.is_valid() ? nb::cast<std::vector<std::string>>(method()) : std::vector<std::string>{};
  }
  void traverse(TraversalCallback& callback) override {
    nb::gil_scoped_acquire gil;
    python_traverse(nb_trampoline.base(), nb::type<SamplingIntegrator>(), callback);
  }
  void parameters_changed(const std::vector<std::string>& keys) override {
    nb::gil_scoped_acquire gil;
    python_parameters_changed(nb_trampoline.base(), nb::type<SamplingIntegrator>(), keys);
  }
};

/// kr.Integrator as subclassed in Python: render(scene, sensor, seed, spp) returns the
/// image (what kiln.render.ad's ADIntegrator implements).
class PythonIntegrator : public Integrator {
 public:
  NB_TRAMPOLINE(Integrator);
  explicit PythonIntegrator(const PythonProperties& props) : Integrator(props.get()) {}

  TensorXf render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const override {
    nb::gil_scoped_acquire gil;
    nb::handle self = nb_trampoline.base();
    nb::object method = required(self, nb::type<Integrator>(), "render",
                                 "an integrator written in Python on kr.Integrator defines render(scene, sensor, "
                                 "seed, spp) (or subclass kr.SamplingIntegrator and define sample())");
    return result_as<TensorXf>(
        method(nb::cast(&scene, nb::rv_policy::reference), nb::cast(&sensor, nb::rv_policy::reference), seed, spp),
        "TensorXf", std::string(nb::type_name(self.type()).c_str()) + ".render()");
  }
  void traverse(TraversalCallback& callback) override {
    nb::gil_scoped_acquire gil;
    python_traverse(nb_trampoline.base(), nb::type<Integrator>(), callback);
  }
  void parameters_changed(const std::vector<std::string>& keys) override {
    nb::gil_scoped_acquire gil;
    python_parameters_changed(nb_trampoline.base(), nb::type<Integrator>(), keys);
  }
};

}  // namespace

void bind_python_integrators(nb::module_& m) {
  nb::class_<Integrator, Object, PythonIntegrator>(
      m, "Integrator",
      "How a render estimates pixel values. Subclass it in Python with render(scene, sensor, seed, spp) returning "
      "the image, or subclass kr.SamplingIntegrator (one camera ray at a time); register it with "
      "kr.register_integrator.")
      .def(nb::init<const PythonProperties&>(), nb::arg("props"));
  nb::class_<SamplingIntegrator, Integrator, PythonSamplingIntegrator>(
      m, "SamplingIntegrator",
      "An integrator that estimates each camera ray on its own. Subclass it in Python (Mitsuba's contract): "
      "sample(self, scene, sampler, ray, medium=None, active=True) -> (radiance, valid, aovs), optionally "
      "aov_names(); the render loop, film and derivatives are the C++ ones.")
      .def(nb::init<const PythonProperties&>(), nb::arg("props"));

  nb::class_<LaneSampler>(m, "LaneSampler",
                          "The random numbers of a render's lanes (what an integrator's sample() receives as "
                          "`sampler`): one generator per lane.")
      .def(nb::init<PCG32>(), nb::arg("rng"), "A sampler drawing from a copy of `rng`.")
      .def("next_1d", &LaneSampler::next_1d, nb::arg("active") = true, "One uniform number per lane in [0, 1).")
      .def("next_2d", &LaneSampler::next_2d, nb::arg("active") = true, "Two uniform numbers per lane in [0, 1)².")
      .def_rw("rng", &LaneSampler::rng, "The lanes' generators.");

  nb::class_<CameraSamples>(m, "CameraSamples",
                            "The samples a render traces (kr.camera_samples()): per sample its pixel, film "
                            "positions, camera ray and weight, and the generators seeded for it.")
      .def_ro("rng", &CameraSamples::rng)
      .def_ro("pixel", &CameraSamples::pixel, "The pixel in the crop window, row-major.")
      .def_ro("sample_index", &CameraSamples::sample_index, "The sample within its pixel.")
      .def_ro("position", &CameraSamples::position, "The pixel's corner on the film (pixels).")
      .def_ro("sample_position", &CameraSamples::sample_position, "The jittered position (pixels).")
      .def_ro("splat_position", &CameraSamples::splat_position, "Where the sample splats (pixels).")
      .def_ro("ray", &CameraSamples::ray)
      .def_ro("weight", &CameraSamples::weight, "The sensor's weight of the ray.")
      .def_ro("active", &CameraSamples::active);
  m.def(
      "camera_samples",
      [](const Sensor& sensor, int64_t seed, int64_t spp) {
        return camera_samples(sensor,
                              checked_argument("camera_samples()", "seed", seed, 0, UINT32_MAX, "0 and 2^32 - 1"),
                              checked_argument("camera_samples()", "spp", spp, 0, UINT32_MAX, "0 and 2^32 - 1"));
      },
      nb::arg("sensor"), nb::arg("seed") = 0, nb::arg("spp") = 0,
      "The samples a render of `sensor` with `seed` and `spp` per pixel (the sampler's count when 0) traces, as "
      "every sampling integrator's render() does.");
  m.def("develop_samples", &develop_samples, nb::arg("film"), nb::arg("samples"), nb::arg("values"),
        nb::arg("color") = true,
        "The film's image of per-sample values (one kl.Float per channel; R, G, B[, A] first when `color`).");
  m.def(
      "sample_adjoints",
      [](const Film& film, const CameraSamples& samples, size_t channels, bool color, const TensorXf& adjoint) {
        return sample_adjoints(film, samples, channels, color, adjoint);
      },
      nb::arg("film"), nb::arg("samples"), nb::arg("channels"), nb::arg("color"), nb::arg("adjoint"),
      "Each sample's δL: the gradient of <image, adjoint> with respect to the first three of its `channels` "
      "values, the image developed as develop_samples() develops it.");
  m.def(
      "register_integrator",
      [](const std::string& name, nb::object constructor) {
        register_python_plugin(PluginKind::Integrator, nb::type<Integrator>(), name, std::move(constructor));
      },
      nb::arg("name"), nb::arg("constructor"),
      "Makes `name` an integrator plugin whose objects constructor(props) returns (a kr.SamplingIntegrator or "
      "kr.Integrator subclass written in Python), for load_dict and XML scenes; registering a name again "
      "replaces it.");
}

}  // namespace kiln::python::render
