// kr.SGD / kr.Adam: Mitsuba-style optimizers over scene parameters by key
// (`opt[key] = params[key]; params.update(opt)`), forwarding to kiln::render's optimizers.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/optimizer.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// Stores `value` under `key`: a kl.Float, a kl.Array3f or a number (a Float of one entry).
void set_value(ParameterOptimizer& optimizer, const std::string& key, nb::handle value) {
  if (nb::isinstance<Float>(value)) return optimizer.set(key, nb::cast<Float>(value));
  if (nb::isinstance<Array3f>(value)) return optimizer.set(key, nb::cast<Array3f>(value));
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value))
    return optimizer.set(key, Float(nb::cast<float>(value)));
  throw TypeError("kiln.render: optimizer['" + key +
                  "']: the value must be a kl.Float, a kl.Array3f or a number, got " +
                  nb::type_name(value.type()).c_str());
}

/// Adds every item of the mapping `params` (None: nothing).
void set_all(ParameterOptimizer& optimizer, nb::handle params) {
  if (params.is_none()) return;
  if (!nb::hasattr(params, "keys"))
    throw TypeError(std::string("kiln.render: optimizer: params must be a mapping from keys to values, got ") +
                    nb::type_name(params.type()).c_str());
  for (nb::handle key : params.attr("keys")()) set_value(optimizer, nb::cast<std::string>(key), params[key]);
}

}  // namespace

void bind_optimizers(nb::module_& m) {
  nb::class_<ParameterOptimizer>(
      m, "ParameterOptimizer",
      "What kr.SGD and kr.Adam share: values under scene parameter keys, optimized in place. "
      "opt[key] = params[key] starts optimizing a parameter (a detached copy, with derivatives); "
      "params.update(opt) puts the values in the scene; opt.step() updates them from their gradients. "
      "Assigning a key again with a value of the same size (e.g. clamped) keeps its optimizer state.")
      .def("__setitem__", &set_value, nb::arg("key"), nb::arg("value"))
      .def(
          "__getitem__",
          [](const ParameterOptimizer& self, const std::string& key) {
            if (!self.contains(key)) throw nb::key_error(key.c_str());
            return self.get(key);
          },
          nb::arg("key"), "The current value (it carries derivatives).")
      .def(
          "__delitem__",
          [](ParameterOptimizer& self, const std::string& key) {
            if (!self.contains(key)) throw nb::key_error(key.c_str());
            self.erase(key);
          },
          nb::arg("key"), "Stops optimizing `key`.")
      .def("__contains__", &ParameterOptimizer::contains, nb::arg("key"))
      .def("__len__", [](const ParameterOptimizer& self) { return self.keys().size(); })
      .def("__iter__", [](const ParameterOptimizer& self) { return nb::iter(nb::cast(self.keys())); })
      .def("keys", &ParameterOptimizer::keys, "The keys being optimized, sorted.")
      .def("items",
           [](const ParameterOptimizer& self) {
             nb::list out;
             for (const std::string& key : self.keys()) out.append(nb::make_tuple(key, self.get(key)));
             return out;
           })
      .def("reset", &ParameterOptimizer::reset, nb::arg("key"), "Starts `key`'s optimizer state afresh.")
      .def("step", &ParameterOptimizer::step,
           "Updates every value from its gradient; each becomes a fresh AD leaf (put them in the scene again "
           "with params.update(opt)).")
      .def("zero_grad", &ParameterOptimizer::zero_grad, "Clears the values' gradients.")
      .def_prop_rw("lr", &ParameterOptimizer::lr, &ParameterOptimizer::set_lr, "The learning rate of the next steps.")
      .def("__repr__", [](const ParameterOptimizer& self) {
        std::string text = nb::cast<std::string>(nb::str(nb::handle(nb::find(self).type()).attr("__name__"))) +
                           "(lr=" + std::to_string(self.lr()) + ")[";
        for (const std::string& key : self.keys()) text += "\n  " + key;
        return text + (self.keys().empty() ? "]" : "\n]");
      });
  nb::class_<SGD, ParameterOptimizer>(m, "SGD",
                                      "Stochastic gradient descent over scene parameters: p ← p − lr · grad(p).")
      .def(
          "__init__",
          [](SGD* self, double lr, nb::handle params) {
            new (self) SGD(lr);
            set_all(*self, params);
          },
          nb::arg("lr"), nb::arg("params") = nb::none(),
          "`params`: an optional mapping of keys to initial values (as opt[key] = value for each).");
  nb::class_<Adam, ParameterOptimizer>(m, "Adam", "Adam (Kingma & Ba) over scene parameters, with bias correction.")
      .def(
          "__init__",
          [](Adam* self, double lr, double beta_1, double beta_2, double epsilon, nb::handle params) {
            new (self) Adam(lr, beta_1, beta_2, epsilon);
            set_all(*self, params);
          },
          nb::arg("lr"), nb::arg("beta_1") = 0.9, nb::arg("beta_2") = 0.999, nb::arg("epsilon") = 1e-8,
          nb::arg("params") = nb::none(), "Mitsuba's names for the hyperparameters; `params` as for SGD.");
}

}  // namespace kiln::python::render
