// The C++ side of kiln.nn (nn.h) that Python's layers forward to: Linear's initial
// parameters, so both languages draw the same values from the same seeds.
#include "binding.h"

#include <kiln/nn.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

namespace kiln::python {

void bind_nn(nb::module_& m) {
  m.def("_linear_init",
        [](int64_t in_features, int64_t out_features, std::optional<uint64_t> seed) {
          nn::Linear layer(to_size(in_features, "nn.Linear"), to_size(out_features, "nn.Linear"), seed);
          return std::make_pair(layer.weight, layer.bias);
        },
        nb::arg("in_features"), nb::arg("out_features"), nb::arg("seed") = nb::none(),
        "(weight, bias) of kiln::nn::Linear: uniform in ±1/sqrt(in_features) from `seed`, or from the next "
        "of the process-wide layer seeds 0, 1, 2, ... when None.");
}

}  // namespace kiln::python
