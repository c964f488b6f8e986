// kiln.nn's layers and optimizers are nn.h's: the layers (Linear, ReLU, LeakyReLU, Sigmoid,
// Exp, PositionalEncoding) bound as they are, under _kiln._nn, and the optimizers SGD and
// Adam, which kiln/nn.py subclasses to hold the parameter tensors. Python adds only Module
// (networks written in Python) and Sequential (of any callables).
#include "binding.h"

#include <kiln/nn.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

namespace kiln::python {
namespace {

/// The C++ tensors behind the Python objects in `params` (the optimizer updates them in
/// place through these pointers); TypeError naming `optimizer` for anything else.
std::vector<TensorXf*> parameter_pointers(nb::handle params, const char* optimizer) {
  std::vector<TensorXf*> out;
  for (nb::handle p : params) {
    if (!nb::isinstance<TensorXf>(p))
      throw TypeError(std::string("kiln: ") + optimizer + "(): parameters are TensorXf, got " +
                      nb::type_name(p.type()).c_str());
    out.push_back(nb::inst_ptr<TensorXf>(p));
  }
  return out;
}

/// A layer class: called on a tensor; parameters() lists its tensors (the layer's own,
/// kept alive with it: optimizers update them in place).
template <typename Layer> nb::class_<Layer> bind_layer(nb::module_& m, const char* name, const char* doc) {
  return nb::class_<Layer>(m, name, doc)
      .def(
          "__call__", [](const Layer& layer, const TensorXf& x) { return layer(x); }, nb::arg("x"))
      .def(
          "parameters", [](Layer& layer) { return layer.parameters(); }, nb::rv_policy::reference_internal,
          "The layer's parameter tensors (its own: changing them changes the layer).");
}

void bind_layers(nb::module_& m) {
  bind_layer<nn::Linear>(m, "Linear",
                         "x @ weight + bias, weight (in_features, out_features) and bias initialized uniformly in "
                         "±1/sqrt(in_features) (PyTorch's default) from `seed`; without a seed, each layer takes the "
                         "next of the process-wide seeds 0, 1, 2, ... (shared with C++), so layers start different "
                         "and a program that builds the same layers in the same order starts the same every run.")
      .def(
          "__init__",
          [](nn::Linear* self, int64_t in_features, int64_t out_features, bool bias, std::optional<uint64_t> seed) {
            new (self) nn::Linear(to_size(in_features, "nn.Linear"), to_size(out_features, "nn.Linear"), seed, bias);
          },
          nb::arg("in_features"), nb::arg("out_features"), nb::arg("bias") = true, nb::arg("seed") = nb::none())
      .def_rw("weight", &nn::Linear::weight, "(in_features, out_features), an AD leaf.")
      .def_prop_ro(
          "bias", [](nn::Linear& layer) { return layer.bias ? &*layer.bias : nullptr; },
          nb::rv_policy::reference_internal, "(out_features,), an AD leaf; None without bias.");
  bind_layer<nn::ReLU>(m, "ReLU", "max(x, 0).").def(nb::init<>());
  bind_layer<nn::LeakyReLU>(m, "LeakyReLU", "x where x > 0, else slope * x.")
      .def(
          "__init__", [](nn::LeakyReLU* self, float slope) { new (self) nn::LeakyReLU{slope}; },
          nb::arg("slope") = nn::LeakyReLU{}.slope)
      .def_rw("slope", &nn::LeakyReLU::slope);
  bind_layer<nn::Sigmoid>(m, "Sigmoid", "1 / (1 + exp(-x)).").def(nb::init<>());
  bind_layer<nn::Exp>(m, "Exp", "exp(x).").def(nb::init<>());
  bind_layer<nn::PositionalEncoding>(m, "PositionalEncoding",
                                     "NeRF's encoding of the last axis: (x, sin(2^k π x), cos(2^k π x) for k < "
                                     "n_frequencies), concatenated along it.")
      .def(
          "__init__",
          [](nn::PositionalEncoding* self, int64_t n_frequencies, bool include_input) {
            new (self) nn::PositionalEncoding{to_size(n_frequencies, "nn.PositionalEncoding"), include_input};
          },
          nb::arg("n_frequencies"), nb::arg("include_input") = true)
      .def_ro("n_frequencies", &nn::PositionalEncoding::n_frequencies)
      .def_ro("include_input", &nn::PositionalEncoding::include_input)
      .def(
          "out_features",
          [](const nn::PositionalEncoding& encoding, int64_t in_features) {
            return encoding.out_features(to_size(in_features, "nn.PositionalEncoding.out_features"));
          },
          nb::arg("in_features"), "in_features * (2 n_frequencies + 1), or 2 n_frequencies without the input.");
}

}  // namespace

void bind_nn(nb::module_& m) {
  nb::module_ layers = m.def_submodule("_nn", "kiln::nn's layers (kiln.nn binds them).");
  bind_layers(layers);

  // The optimizers keep the sequence of parameters alive (keep_alive); kl.nn's subclasses
  // also hold it, as `params`.
  nb::class_<nn::Optimizer>(m, "_Optimizer", "What kiln::nn::SGD and Adam share.")
      .def("zero_grad", &nn::Optimizer::zero_grad, "Clears the parameters' gradients.")
      .def_prop_rw(
          "lr", [](const nn::Optimizer& o) { return o.lr(); }, [](nn::Optimizer& o, double lr) { o.set_lr(lr); },
          "The learning rate of the next steps.");
  nb::class_<nn::SGD, nn::Optimizer>(m, "_SGD", "kiln::nn::SGD: p ← p − lr · grad(p).")
      .def(
          "__init__",
          [](nn::SGD* self, nb::handle params, double lr) {
            new (self) nn::SGD(parameter_pointers(params, "SGD"), lr);
          },
          nb::arg("params"), nb::arg("lr"), nb::keep_alive<1, 2>())
      .def("step", &nn::SGD::step, "One step: every parameter becomes p − lr · grad(p), a fresh AD leaf.");
  nb::class_<nn::Adam, nn::Optimizer>(m, "_Adam", "kiln::nn::Adam (Kingma & Ba) with bias correction.")
      .def(
          "__init__",
          [](nn::Adam* self, nb::handle params, double lr, std::pair<double, double> betas, double eps) {
            new (self) nn::Adam(parameter_pointers(params, "Adam"), lr, betas.first, betas.second, eps);
          },
          nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = std::make_pair(0.9, 0.999), nb::arg("eps") = 1e-8,
          nb::keep_alive<1, 2>())
      .def("step", &nn::Adam::step, "One step of Adam: parameters and moments are updated in place.");
}

}  // namespace kiln::python
