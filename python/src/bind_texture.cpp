// kiln.Texture1f / 2f / 3f and Texture1f64 / 2f64 / 3f64 (texture.h), with the FilterMode
// and WrapMode enums: construction from a tensor or a shape, texel access, and eval() /
// eval_cubic(), which return one array per channel.
#include "binding.h"

#include <kiln/texture.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/vector.h>

namespace kiln::python {
namespace {

template <typename X> void bind_texture_type(nb::module_& m) {
  using T = typename X::ArrayType;
  using V = typename X::Value;
  using Position = typename X::Position;
  constexpr size_t Dim = X::Dimension;
  nb::class_<X> cls(m, X::name().c_str(),
                    "A grid of texels with channels, read at positions in [0, 1]^Dim (x first; texel i's center "
                    "at (i + 0.5) / resolution) with nearest, linear or cubic B-spline filtering. The texels are "
                    "one flat array laid out as a tensor of shape (resolution..., channels), outermost axis "
                    "first; reads are differentiable in the texels and (linear, cubic) in the position.");
  cls.def(nb::init<const Tensor<V>&, FilterMode, WrapMode>(), nb::arg("tensor"),
          nb::arg("filter_mode") = FilterMode::Linear, nb::arg("wrap_mode") = WrapMode::Clamp,
          "A texture holding `tensor`, of shape (resolution..., channels).");
  cls.def(
      "__init__",
      [](X* self, const std::vector<int64_t>& shape, int64_t channels, FilterMode filter, WrapMode wrap) {
        std::string name = X::name();
        if (shape.size() != Dim)
          throw ValueError("kiln: " + name + "(): shape has " + std::to_string(shape.size()) + " entries; a " +
                           std::to_string(Dim) + "-D texture needs " + std::to_string(Dim) + " (outermost axis first)");
        std::array<size_t, Dim> resolution;
        for (size_t axis = 0; axis < Dim; ++axis) resolution[axis] = to_size(shape[axis], name.c_str());
        new (self) X(resolution, to_size(channels, name.c_str()), filter, wrap);
      },
      nb::arg("shape"), nb::arg("channels"), nb::arg("filter_mode") = FilterMode::Linear,
      nb::arg("wrap_mode") = WrapMode::Clamp, "A texture of zeros; `shape` is the resolution, outermost axis first.");
  cls.def("value", &X::value, "The texels as one flat array (row-major over shape).")
      .def("set_value", &X::set_value, nb::arg("value"), "Replaces the texels (the same number of elements).")
      .def("tensor", &X::tensor, "The texels as a tensor of shape (resolution..., channels).")
      .def("set_tensor", &X::set_tensor, nb::arg("tensor"), "Replaces the texels and the shape.")
      .def_prop_ro(
          "shape", [](const X& t) { return nb::tuple(nb::cast(t.shape())); },
          "(resolution..., channels), outermost axis first.")
      .def_prop_ro("channels", &X::channels, "Number of channels per texel.")
      .def_prop_ro("filter_mode", &X::filter_mode)
      .def_prop_ro("wrap_mode", &X::wrap_mode);

  auto eval = [](const X& t, const Position& pos, const Bool* active) { return t.eval(pos, mask_or_all(active)); };
  auto eval_cubic = [](const X& t, const Position& pos, const Bool* active) {
    return t.eval_cubic(pos, mask_or_all(active));
  };
  const char* eval_doc =
      "One array per channel, filtered by filter_mode at `pos`. Inactive lanes give 0, lanes with a non-finite "
      "coordinate NaN.";
  const char* cubic_doc =
      "One array per channel: the texels convolved with the uniform cubic B-spline at `pos` (4^Dim taps, smooth, "
      "not interpolating). Inactive lanes give 0, lanes with a non-finite coordinate NaN.";
  if constexpr (Dim == 1 || std::is_same_v<Position, Array2f> || std::is_same_v<Position, Array3f> ||
                std::is_same_v<Position, Array3f64>)  // an array, or a vector type Python knows
    cls.def("eval", eval, nb::arg("pos"), nb::arg("active") = nb::none(), eval_doc)
        .def("eval_cubic", eval_cubic, nb::arg("pos"), nb::arg("active") = nb::none(), cubic_doc);
  if constexpr (Dim > 1) {  // positions given as a list or tuple of Dim arrays, x first
    auto position = [](const std::array<T, Dim>& coordinates) {
      Position pos;
      for (size_t axis = 0; axis < Dim; ++axis) pos[axis] = coordinates[axis];
      return pos;
    };
    cls.def(
           "eval",
           [=](const X& t, const std::array<T, Dim>& pos, const Bool* active) {
             return eval(t, position(pos), active);
           },
           nb::arg("pos"), nb::arg("active") = nb::none(), eval_doc)
        .def(
            "eval_cubic",
            [=](const X& t, const std::array<T, Dim>& pos, const Bool* active) {
              return eval_cubic(t, position(pos), active);
            },
            nb::arg("pos"), nb::arg("active") = nb::none(), cubic_doc);
  }
}

}  // namespace

void bind_texture(nb::module_& m) {
  nb::enum_<FilterMode>(m, "FilterMode", "How a texture reads between texel centers.")
      .value("Nearest", FilterMode::Nearest, "The texel the position falls in.")
      .value("Linear", FilterMode::Linear, "The 2^Dim nearest texel centers, weighted by distance.");
  nb::enum_<WrapMode>(m, "WrapMode", "Which texel a read outside the grid uses.")
      .value("Repeat", WrapMode::Repeat, "The grid tiles the space.")
      .value("Clamp", WrapMode::Clamp, "The nearest texel at the border.")
      .value("Mirror", WrapMode::Mirror, "The grid tiles the space, every other copy mirrored.");
  bind_texture_type<Texture1f>(m);
  bind_texture_type<Texture2f>(m);
  bind_texture_type<Texture3f>(m);
  bind_texture_type<Texture1f64>(m);
  bind_texture_type<Texture2f64>(m);
  bind_texture_type<Texture3f64>(m);
}

}  // namespace kiln::python
