// Control flow: the runtime-typed cores of while_loop, if_stmt, dispatch, print_async and
// Recorder (detail/control_api.h) over lists of plain arrays. kiln/control.py flattens
// Python values (tuples, dicts, dataclasses, vectors ...) into these lists and rebuilds them.
// Exceptions raised by Python callbacks pass through the C++ core unchanged.
#include "binding.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python {
namespace {

/// A new reference to the node of `value` (and to its AD node), one of the seven array
/// types; TypeError naming `what` otherwise.
detail::Handle to_handle(nb::handle value, const char* what) {
  detail::Handle out;
  bool found = false;
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    if (!found && nb::isinstance<A>(value)) {
      out = detail::Handle::borrow(nb::cast<const A&>(value).operand());
      found = true;
    }
  });
  if (!found)
    throw TypeError(std::string("kiln: ") + what + ": expected a Kiln array (kl.Float, kl.UInt32, ...), got " +
                    nb::type_name(value.type()).c_str());
  return out;
}

/// The array object of the class matching the node's type (None for an empty handle).
nb::object to_python(detail::Handle handle) {
  if (!handle) return nb::none();
  VarType type = detail::node_type(handle.index());
  nb::object out;
  for_each_array_type([&](auto array_type) {
    using A = typename decltype(array_type)::type;
    if (!out.is_valid() && A::Type == type) out = nb::cast(A::steal(handle.take()));
  });
  return out;
}

VarType var_type_of(nb::handle type) {
  std::optional<VarType> found;
  for_each_array_type([&](auto array_type) {
    using A = typename decltype(array_type)::type;
    if (!found && type.is(nb::type<A>())) found = A::Type;
  });
  if (!found)
    throw TypeError(std::string("kiln: RecorderCore(): a field type must be a Kiln array class (kl.Float, "
                                "kl.UInt32, ...), got ") +
                    nb::repr(type).c_str());
  return *found;
}

}  // namespace

detail::Values to_values(nb::handle list, const char* what) {
  detail::Values out;
  for (nb::handle item : list) out.push_back(to_handle(item, what));
  return out;
}

nb::list to_list(const detail::Values& values) {
  nb::list out;
  for (const detail::Handle& value : values) out.append(to_python(value));
  return out;
}

detail::BodyFn body_function(nb::callable fn, const char* what) {
  return [fn, what](const detail::Values& values) { return to_values(fn(to_list(values)), what); };
}

void bind_control(nb::module_& m) {
  nb::enum_<ControlMode>(m, "ControlMode", "How a loop, conditional or call runs (the default: Flag.Symbolic).")
      .value("Symbolic", ControlMode::Symbolic, "Recorded once into the kernel that uses its results.")
      .value("Evaluated", ControlMode::Evaluated,
             "The host launches kernels per iteration / branch / instance over the active lanes.");

  m.def(
      "_while_loop",
      [](nb::list state, nb::callable cond, nb::callable body, std::optional<ControlMode> mode, const std::string& name,
         size_t max_iterations, bool sum_loop) {
        detail::ConditionFn c = [cond](const detail::Values& values) {
          return to_handle(cond(to_list(values)), "while_loop(): the condition");
        };
        return to_list(detail::while_loop(to_values(state, "while_loop(): the state"), c,
                                          body_function(body, "while_loop(): the body"), mode, name,
                                          LoopDerivative{max_iterations, sum_loop}));
      },
      nb::arg("state"), nb::arg("cond"), nb::arg("body"), nb::arg("mode").none(), nb::arg("name"),
      nb::arg("max_iterations") = 0, nb::arg("sum_loop") = false,
      "Core of kiln.while_loop over a list of arrays: cond(list) -> Bool, body(list) -> list.");
  m.def(
      "_if_stmt",
      [](const Bool& cond, nb::callable true_fn, nb::callable false_fn, nb::list args, std::optional<ControlMode> mode,
         const std::string& name) {
        return to_list(detail::if_stmt(cond.index(), body_function(true_fn, "if_stmt(): true_fn"),
                                       body_function(false_fn, "if_stmt(): false_fn"),
                                       to_values(args, "if_stmt(): the arguments"), mode, name));
      },
      nb::arg("cond"), nb::arg("true_fn"), nb::arg("false_fn"), nb::arg("args"), nb::arg("mode").none(),
      nb::arg("name"), "Core of kiln.if_stmt over a list of arrays: true_fn(list) -> list, false_fn likewise.");
  m.def(
      "_dispatch",
      [](const UInt32& ids, const std::vector<uint32_t>& instances, nb::callable fn, nb::list args,
         std::optional<ControlMode> mode, const std::string& name) {
        detail::InstanceFn call = [fn](uint32_t id, const detail::Values& values) {
          return to_values(fn(id, to_list(values)), "dispatch(): the function");
        };
        return to_list(
            detail::dispatch(ids.index(), instances, call, to_values(args, "dispatch(): the arguments"), mode, name));
      },
      nb::arg("ids"), nb::arg("instances"), nb::arg("fn"), nb::arg("args"), nb::arg("mode").none(), nb::arg("name"),
      "Core of kiln.dispatch: fn(id, list) -> list for each id in `instances`.");
  m.def(
      "_print_async",
      [](const std::string& format, nb::list values, const Bool* active) {
        detail::print_async(format, to_values(values, "print_async()"), active ? active->index() : 0);
      },
      nb::arg("format"), nb::arg("values"), nb::arg("active").none(),
      "Core of kiln.print_async over a list of arrays (active None: every lane).");

  m.def(
      "_chunked_map",
      [](nb::callable fn, nb::list mapped, const std::vector<size_t>& widths, size_t rows, nb::list whole,
         size_t chunk_rows, const std::string& title) {
        detail::ChunkFn chunk = [fn, title](const detail::Values& m, const detail::Values& w, size_t count) {
          return to_values(fn(to_list(m), to_list(w), count), title.c_str());
        };
        return to_list(detail::chunked_map(chunk, to_values(mapped, title.c_str()), widths, rows,
                                           to_values(whole, title.c_str()), chunk_rows, title));
      },
      nb::arg("fn"), nb::arg("mapped"), nb::arg("widths"), nb::arg("rows"), nb::arg("whole"), nb::arg("chunk_rows"),
      nb::arg("title"),
      "Core of kiln.chunked_map / kiln.checkpoint over lists of flat arrays: fn(mapped rows, whole, count) -> "
      "list of outputs, count rows each.");

  nb::class_<detail::RecorderCore>(m, "RecorderCore",
                                   "Per-lane records of plain array columns (the core of kiln.Recorder).")
      .def(
          "__init__",
          [](detail::RecorderCore* self, nb::list types, int64_t capacity, const std::vector<size_t>& widths) {
            std::vector<VarType> columns;
            for (nb::handle type : types) columns.push_back(var_type_of(type));
            new (self) detail::RecorderCore(std::move(columns), to_size(capacity, "Recorder"), widths);
          },
          nb::arg("types"), nb::arg("capacity"), nb::arg("widths"),
          "Columns of the given array classes, `capacity` records each, grouped into fields of `widths` columns "
          "stored interleaved.")
      .def(
          "append",
          [](detail::RecorderCore& core, const Bool& active, nb::list values) {
            core.append(active.index(), to_values(values, "Recorder.append()"));
          },
          nb::arg("active"), nb::arg("values"), "One record (one array per column) per lane where `active` is set.")
      .def("count", &detail::RecorderCore::count,
           "Records appended so far, including any beyond the capacity (evaluates).")
      .def_prop_ro("capacity", &detail::RecorderCore::capacity, "Records each column holds.")
      .def(
          "field", [](const detail::RecorderCore& core, size_t k) { return to_python(core.field(k)); },
          nb::arg("field"),
          "Field k's first count() records (interleaved: count() * width values), sharing the recorder's memory; "
          "SizeError when more were appended than fit.")
      .def("clear", &detail::RecorderCore::clear, "Forgets the records (the counter restarts at zero).");
}

}  // namespace kiln::python
