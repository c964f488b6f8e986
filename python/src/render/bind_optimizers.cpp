// kr.SGD / kr.Adam: Mitsuba-style optimizers over scene parameters by key
// (`opt[key] = params[key]; params.update(opt)`), forwarding to kiln::render's optimizers.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/large_steps.h>
#include <kiln/render/optimizer.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// Stores `value` under `key`: a kl.Float, a kl.Array2f, a kl.Array3f, a kl.TensorXf or a
/// number (a Float of one entry).
void set_value(ParameterOptimizer& optimizer, const std::string& key, nb::handle value) {
  if (nb::isinstance<Float>(value)) return optimizer.set(key, nb::cast<Float>(value));
  if (nb::isinstance<Array2f>(value)) return optimizer.set(key, nb::cast<Array2f>(value));
  if (nb::isinstance<Array3f>(value)) return optimizer.set(key, nb::cast<Array3f>(value));
  if (nb::isinstance<TensorXf>(value)) return optimizer.set(key, nb::cast<TensorXf>(value));
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value))
    return optimizer.set(key, Float(nb::cast<float>(value)));
  throw TypeError("kiln.render: optimizer['" + key +
                  "']: the value must be a kl.Float, a kl.Array2f, a kl.Array3f, a kl.TensorXf or a number, got " +
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

/// Dr.Jit's set_learning_rate(value, **per_key): a number sets the optimizer's rate, a
/// mapping (or keywords) sets keys' own rates, None in it returns a key to the global one.
void set_learning_rate(ParameterOptimizer& optimizer, nb::handle value, const nb::kwargs& per_key) {
  auto set_keys = [&](nb::handle mapping) {
    for (nb::handle key : mapping.attr("keys")()) {
      nb::handle rate = mapping[key];
      optimizer.set_lr(nb::cast<std::string>(key),
                       rate.is_none() ? std::nullopt : std::optional<double>(nb::cast<double>(rate)));
    }
  };
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value)) {
    optimizer.set_lr(nb::cast<double>(value));
  } else if (nb::hasattr(value, "keys")) {
    set_keys(value);
  } else if (!value.is_none()) {
    throw TypeError(std::string("kiln.render: set_learning_rate(): expected a number or a mapping from keys to "
                                "numbers, got ") +
                    nb::type_name(value.type()).c_str());
  }
  set_keys(per_key);
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
      .def("values",
           [](const ParameterOptimizer& self) {
             nb::list out;
             for (const std::string& key : self.keys()) out.append(nb::cast(self.get(key)));
             return out;
           })
      .def(
          "update",
          [](ParameterOptimizer& self, nb::handle params, const nb::kwargs& more) {
            set_all(self, params);
            set_all(self, more);
          },
          nb::arg("params") = nb::none(), nb::arg("more"), "Sets several values at once (as opt[key] = value).")
      .def(
          "reset",
          [](ParameterOptimizer& self, std::optional<std::string> key) {
            for (const std::string& k : key ? std::vector<std::string>{*key} : self.keys()) self.reset(k);
          },
          nb::arg("key") = nb::none(), "Starts `key`'s optimizer state afresh (every key's when None).")
      .def(
          "learning_rate",
          [](const ParameterOptimizer& self, std::optional<std::string> key) -> std::optional<double> {
            return key ? self.lr(*key) : std::optional<double>(self.lr());
          },
          nb::arg("key") = nb::none(),
          "The optimizer's learning rate, or `key`'s own (None when it has none and follows the optimizer's).")
      .def("set_learning_rate", &set_learning_rate, nb::arg("value") = nb::none(), nb::arg("per_key"),
           "Dr.Jit's set_learning_rate: a number sets the optimizer's rate; a mapping or keywords set keys' own "
           "rates, which then take precedence (None returns a key to the optimizer's).")
      .def_prop_rw("mask_updates", &ParameterOptimizer::mask_updates, &ParameterOptimizer::set_mask_updates,
                   "Lanes whose gradient is zero keep their value and state (Dr.Jit's mask_updates).")
      .def("step", &ParameterOptimizer::step,
           "Updates every value from its gradient; each becomes a fresh AD leaf (put them in the scene again "
           "with params.update(opt)).")
      .def("zero_grad", &ParameterOptimizer::zero_grad, "Clears the values' gradients.")
      .def_prop_rw(
          "lr", [](const ParameterOptimizer& o) { return o.lr(); },
          [](ParameterOptimizer& o, double lr) { o.set_lr(lr); }, "The learning rate of the next steps.")
      .def("__repr__", [](const ParameterOptimizer& self) {
        std::string text = nb::cast<std::string>(nb::str(nb::handle(nb::find(self).type()).attr("__name__"))) +
                           "(lr=" + std::to_string(self.lr()) + ")[";
        for (const std::string& key : self.keys()) text += "\n  " + key;
        return text + (self.keys().empty() ? "]" : "\n]");
      });
  nb::class_<SGD, ParameterOptimizer>(
      m, "SGD", "Stochastic gradient descent over scene parameters: p ← p − lr · grad(p), with optional momentum.")
      .def(
          "__init__",
          [](SGD* self, double lr, nb::handle params, double momentum, bool nesterov, bool mask_updates) {
            new (self) SGD(lr, momentum, nesterov);
            self->set_mask_updates(mask_updates);
            set_all(*self, params);
          },
          nb::arg("lr"), nb::arg("params") = nb::none(), nb::kw_only(), nb::arg("momentum") = 0.0,
          nb::arg("nesterov") = false, nb::arg("mask_updates") = false,
          "Dr.Jit 1.5's signature (mi.ad.SGD). `params`: an optional mapping of keys to initial values (as "
          "opt[key] = value for each); `momentum` μ keeps v ← μ·v + g and steps by v (by μ·v + g with "
          "`nesterov`).");
  nb::class_<Adam, ParameterOptimizer>(m, "Adam", "Adam (Kingma & Ba) over scene parameters, with bias correction.")
      .def(
          "__init__",
          [](Adam* self, double lr, nb::handle params, double beta_1, double beta_2, double epsilon, bool mask_updates,
             bool uniform, bool amsgrad) {
            new (self) Adam(lr, beta_1, beta_2, epsilon, uniform, amsgrad);
            self->set_mask_updates(mask_updates);
            set_all(*self, params);
          },
          nb::arg("lr"), nb::arg("params") = nb::none(), nb::kw_only(), nb::arg("beta_1") = 0.9,
          nb::arg("beta_2") = 0.999, nb::arg("epsilon") = 1e-8, nb::arg("mask_updates") = false,
          nb::arg("uniform") = false, nb::arg("amsgrad") = false,
          "Dr.Jit 1.5's signature (mi.ad.Adam); `params` as for SGD; `uniform`: UniformAdam (the largest second "
          "moment of a parameter for all its lanes); `amsgrad`: the largest second moment so far.");
  nb::class_<LargeSteps>(m, "LargeSteps",
                         "Large steps in inverse rendering of geometry (Nicolet et al. 2021), as mi.ad.LargeSteps: "
                         "optimize u = (I + lambda L) v instead of the vertex positions v (L: the mesh's Laplacian). "
                         "Coincident vertices are fused; (I + lambda L) v = u is solved by conjugate gradients in Kiln "
                         "arrays, differentiably.")
      .def(nb::init<const Float&, const UInt32&, float>(), nb::arg("verts"), nb::arg("faces"),
           nb::arg("lambda_") = 19.0f,
           "`verts`: a mesh's vertex_positions (3 per vertex), `faces` its faces; `lambda_` how far gradients spread "
           "over the surface (more for finer meshes).")
      .def("to_differential", &LargeSteps::to_differential, nb::arg("v"),
           "u = (I + lambda L) v (3 values per fused vertex).")
      .def("from_differential", &LargeSteps::from_differential, nb::arg("u"),
           "v = (I + lambda L)^-1 u (3 values per vertex of the mesh), differentiable.")
      .def_prop_ro("n_verts", &LargeSteps::unique_count, "Vertices after fusing coincident ones.");
}

}  // namespace kiln::python::render
