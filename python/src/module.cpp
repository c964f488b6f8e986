// The extension module kiln._kiln: registers every binding topic and maps Kiln's C++
// exceptions to Python's (TypeError, ValueError, IndexError, OSError, MemoryError, RuntimeError),
// their messages respelled for Python.
#include "binding.h"

#include <regex>

namespace kiln::python {

namespace {
/// `message` (written in C++ by the core) in Python's spelling: a value of an enum bound in
/// `module` (`ControlMode::Evaluated`) as `kl.ControlMode.Evaluated`, a boolean argument
/// (`retain_graph=true`) as `retain_graph=True`; environment variables (`KILN_X=true`) stay.
std::string python_spelling(const std::string& message, nb::handle module) {
  static const std::regex cpp_spelling(R"(\b([A-Z]\w*)::([A-Z]\w*)\b|\b([a-z_][a-z0-9_]*)=(true|false)\b)");
  std::string out;
  auto rest = message.cbegin();
  for (std::sregex_iterator it(message.begin(), message.end(), cpp_spelling), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(rest, m[0].first);
    if (m[1].matched)
      out += nb::hasattr(module, m.str(1).c_str()) ? "kl." + m.str(1) + "." + m.str(2) : m.str(0);
    else
      out += m.str(3) + (m.str(4) == "true" ? "=True" : "=False");
    rest = m[0].second;
  }
  return out.append(rest, message.cend());
}
}  // namespace

size_t to_size(int64_t size, const char* op) {
  if (size < 0)
    throw ValueError(std::string("kiln: ") + op + "(): the size must not be negative (got " + std::to_string(size) +
                     ")");
  return size_t(size);
}

size_t to_index(int64_t index, size_t size, const char* op) {
  int64_t resolved = index < 0 ? index + int64_t(size) : index;
  if (resolved < 0 || uint64_t(resolved) >= size)
    throw IndexError(std::string("kiln: ") + op + "(): index " + std::to_string(index) + " is out of range for " +
                     std::to_string(size) + " elements");
  return size_t(resolved);
}

TypeError no_true_division(const char* type) {
  return TypeError(std::string("kiln: ") + type +
                   " / ...: integer types have no true division; use // for the "
                   "integer quotient (truncated toward zero as in C++ and Dr.Jit, not floored as in NumPy), or "
                   "convert to a float type first (kl.Float(x) / y)");
}

}  // namespace kiln::python

NB_MODULE(_kiln, m) {
  namespace nb = nanobind;
  using namespace kiln::python;
  m.doc() = "Kiln: a just-in-time compiler for differentiable array programs (C++ core).";
  nb::exception<kiln::SizeError>(m, "SizeError", PyExc_ValueError);
  nb::register_exception_translator(
      [](const std::exception_ptr& error, void* module_ptr) {
        nb::handle module(static_cast<PyObject*>(module_ptr));
        auto raise = [&](nb::handle type, const std::exception& e) {
          PyErr_SetString(type.ptr(), python_spelling(e.what(), module).c_str());
        };
        try {
          std::rethrow_exception(error);
        } catch (const kiln::TypeError& e) {
          raise(PyExc_TypeError, e);
        } catch (const kiln::SizeError& e) {
          raise(module.attr("SizeError"), e);
        } catch (const kiln::ValueError& e) {
          raise(PyExc_ValueError, e);
        } catch (const kiln::IndexError& e) {
          raise(PyExc_IndexError, e);
        } catch (const kiln::FileError& e) {
          raise(PyExc_OSError, e);
        } catch (const kiln::Interrupted& e) {
          // Kiln handed the signal to Python's handler, which raises KeyboardInterrupt here
          // (or runs the user's handler); if that handler returned, say what happened.
          if (PyErr_CheckSignals() == 0) PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        } catch (const kiln::InternalError& e) {
          raise(PyExc_RuntimeError, e);
        }
      },
      m.ptr());
  bind_array(m);
  bind_construct(m);
  bind_math(m);
  bind_elementwise(m);
  bind_memory(m);
  bind_mask_vectors(m);
  bind_vector(m);
  bind_matrix(m);
  bind_layout(m);
  bind_reduce(m);
  bind_random(m);
  bind_runtime(m);
  bind_control(m);
  bind_interop(m);
  bind_tensor(m);
  bind_autodiff(m);
  bind_quaternion(m);
  bind_texture(m);
  bind_nn(m);
  bind_value_classes(m);
}
