// The C++ side of kiln.nn (nn.h) that Python's layers and optimizers forward to: Linear's
// initial parameters, so both languages draw the same values from the same seeds, and the
// optimizers SGD and Adam, which kiln/nn.py subclasses to hold the parameter tensors.
#include "binding.h"

#include <kiln/nn.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

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

}  // namespace

void bind_nn(nb::module_& m) {
  m.def(
      "_linear_init",
      [](int64_t in_features, int64_t out_features, std::optional<uint64_t> seed) {
        nn::Linear layer(to_size(in_features, "nn.Linear"), to_size(out_features, "nn.Linear"), seed);
        return std::make_pair(layer.weight, layer.bias);
      },
      nb::arg("in_features"), nb::arg("out_features"), nb::arg("seed") = nb::none(),
      "(weight, bias) of kiln::nn::Linear: uniform in ±1/sqrt(in_features) from `seed`, or from the next "
      "of the process-wide layer seeds 0, 1, 2, ... when None.");

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
