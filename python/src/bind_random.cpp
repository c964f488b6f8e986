// kiln.PCG32: one PCG-XSH-RR 64/32 generator per lane (the streams of the reference C
// implementation), and the seeding constants.
#include "binding.h"

namespace kiln::python {

void bind_random(nb::module_& m) {
  m.attr("PCG32_DEFAULT_STATE") = PCG32_DEFAULT_STATE;
  m.attr("PCG32_DEFAULT_STREAM") = PCG32_DEFAULT_STREAM;
  auto lanes = [](int64_t size) { return to_size(size, "PCG32"); };
  nb::class_<PCG32>(m, "PCG32",
                    "`size` PCG32 generators, one per lane; lane i uses stream "
                    "PCG32_DEFAULT_STREAM + i unless seeded otherwise.")
      .def(
          "__init__", [=](PCG32* self, int64_t size) { new (self) PCG32(lanes(size)); }, nb::arg("size") = 1)
      .def(
          "__init__",
          [=](PCG32* self, int64_t size, const UInt64& initstate) { new (self) PCG32(lanes(size), initstate); },
          nb::arg("size"), nb::arg("initstate"), "Lane i seeded with (initstate, PCG32_DEFAULT_STREAM + i).")
      .def(
          "__init__",
          [=](PCG32* self, int64_t size, const UInt64& initstate, const UInt64& initseq) {
            new (self) PCG32(lanes(size), initstate, initseq);
          },
          nb::arg("size"), nb::arg("initstate"), nb::arg("initseq"),
          "Seeds as pcg32_srandom_r(initstate, initseq) per lane (size-1 arguments broadcast).")
      .def(
          "seed",
          [=](PCG32& rng, int64_t size, const UInt64& initstate, const UInt64& initseq) {
            rng.seed(lanes(size), initstate, initseq);
          },
          nb::arg("size"), nb::arg("initstate"), nb::arg("initseq"), "Reseeds as pcg32_srandom_r, per lane.")
      .def("next_uint32", nb::overload_cast<>(&PCG32::next_uint32), "Uniform 32-bit integers.")
      .def("next_uint32", nb::overload_cast<const Bool&>(&PCG32::next_uint32), nb::arg("active"),
           "As next_uint32(), advancing only the active lanes.")
      .def("next_float32", nb::overload_cast<>(&PCG32::next_float32), "Uniform floats in [0, 1).")
      .def("next_float32", nb::overload_cast<const Bool&>(&PCG32::next_float32), nb::arg("active"))
      .def("next_float64", nb::overload_cast<>(&PCG32::next_float64), "Uniform doubles in [0, 1).")
      .def("next_float64", nb::overload_cast<const Bool&>(&PCG32::next_float64), nb::arg("active"))
      .def("next_uint32_bounded", &PCG32::next_uint32_bounded, nb::arg("bound"),
           "Uniform integers in [0, bound) without modulo bias; a bound of 0 in any lane raises ValueError.")
      .def("size", &PCG32::size, "Number of lanes.")
      .def_prop_rw(
          "state", [](const PCG32& rng) { return rng.state; },
          [](PCG32& rng, const UInt64& state) { rng.state = state; },
          "The LCG state of each lane (UInt64; reading gives a value, as in C++).")
      .def_prop_rw(
          "inc", [](const PCG32& rng) { return rng.inc; }, [](PCG32& rng, const UInt64& inc) { rng.inc = inc; },
          "The stream of each lane: (initseq << 1) | 1 (UInt64).");
}

}  // namespace kiln::python
