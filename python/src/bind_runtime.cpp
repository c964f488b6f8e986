// Evaluation and introspection: eval, schedule, make_opaque, set_label, graphviz, flags,
// logging, memory and cache statistics, the cache controls and kernel_history().
#include "binding.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace kiln::python {
namespace {

/// Calls f(array&) on every Kiln array inside `value`: an array, a vector, matrix, mask
/// vector, quaternion, texture, tensor or PCG32, or any nesting of tuples, lists, dicts and
/// dataclasses of them; raises TypeError naming `op` for anything else (None included).
template <typename F> void visit_arrays(nb::handle value, F&& f, const char* op) {
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    for (nb::handle item : value) visit_arrays(item, f, op);
    return;
  }
  if (nb::isinstance<nb::dict>(value)) {
    for (auto [key, item] : nb::borrow<nb::dict>(value)) visit_arrays(item, f, op);
    return;
  }
  if (nb::hasattr(value, "__dataclass_fields__") && !nb::isinstance<nb::type_object>(value)) {
    for (nb::handle name : value.attr("__dataclass_fields__")) visit_arrays(value.attr(name), f, op);
    return;
  }
  bool found = false;
  auto try_array = [&](auto type) {
    using A = typename decltype(type)::type;
    if (!found && nb::isinstance<A>(value)) found = (f(nb::cast<A&>(value)), true);
  };
  for_each_array_type(try_array);
  auto try_composite = [&](auto type) {
    using V = typename decltype(type)::type;
    if (!found && nb::isinstance<V>(value)) found = (for_each_array(nb::cast<V&>(value), f), true);
  };
  for_each_type<CompositeTypes>(try_composite);
  for_each_type<StructOfArraysTypes>(try_composite);
  if (!found && nb::isinstance<PCG32>(value)) {
    PCG32& rng = nb::cast<PCG32&>(value);
    found = (f(rng.state), f(rng.inc), true);
  }
  auto try_tensor = [&](auto type) {
    using T = typename decltype(type)::type;
    if (!found && nb::isinstance<T>(value)) found = (f(nb::cast<T&>(value).array()), true);
  };
  for_each_type<TensorTypes>(try_tensor);
  if (!found)
    throw TypeError(std::string("kiln: ") + op +
                    "(): expected Kiln arrays, vectors, matrices, quaternions, textures, tensors or PCG32 (or "
                    "tuples, lists, dicts and dataclasses of them), got " +
                    nb::type_name(value.type()).c_str());
}

/// "file.py:line" of the Python code that called into Kiln (empty when unknown).
std::string python_caller() {
  PyFrameObject* frame = PyEval_GetFrame();
  if (!frame) return {};
  PyCodeObject* code = PyFrame_GetCode(frame);
  std::string file = nb::borrow<nb::str>(code->co_filename).c_str();
  Py_DECREF(code);
  return file.substr(file.find_last_of('/') + 1) + ":" + std::to_string(PyFrame_GetLineNumber(frame));
}

nb::dict launch_record(const KernelLaunch& launch) {
  nb::dict record;
  record["hash"] = launch.hash;
  record["shape_hash"] = launch.shape_hash;
  record["size"] = launch.size;
  record["device"] = device_name(launch.device);
  record["backend"] = launch.backend;
  record["ops"] = launch.ops;
  record["inputs"] = launch.inputs;
  record["outputs"] = launch.outputs;
  record["side_effects"] = launch.side_effects;
  record["parameters"] = launch.parameters;
  record["source"] = source_name(launch.source);
  record["reason"] = launch.reason.empty() ? nb::none() : nb::cast(launch.reason);
  record["codegen_ms"] = launch.codegen_ms;
  record["compile_ms"] = launch.compile_ms;
  record["run_ms"] = launch.run_ms;
  record["lookup_ms"] = launch.lookup_ms;
  record["ir"] = launch.ir();
  return record;
}

}  // namespace

void collect_indices(nb::handle value, std::vector<detail::Index>& out, const char* op) {
  visit_arrays(value, [&](const auto& array) { out.push_back(array.index()); }, op);
}

void bind_runtime(nb::module_& m) {
  m.def(
      "eval",
      [](nb::args values) {
        std::vector<detail::Index> indices;
        collect_indices(values, indices, "eval");
        detail::eval(indices.data(), indices.size());
      },
      "Evaluates the given arrays (one kernel per size) and every pending side effect.");
  m.def(
      "schedule", [](nb::args values) { visit_arrays(values, [](const auto& array) { schedule(array); }, "schedule"); },
      "Marks arrays for evaluation at the next eval().");
  m.def(
      "make_opaque",
      [](nb::args values) { visit_arrays(values, [](auto& array) { make_opaque(array); }, "make_opaque"); },
      "Makes arrays opaque in place: literals become launch parameters, pending work is "
      "evaluated, evaluated arrays stay as they are.");
  m.def(
      "graphviz",
      [](nb::args values) {
        std::vector<detail::Index> indices;
        collect_indices(values, indices, "graphviz");
        return detail::graphviz(indices.data(), indices.size());
      },
      "The pending computation behind the arrays as Graphviz DOT text.");
  m.def(
      "kernel_source",
      [](nb::args values, const std::string& device, std::optional<std::string> format) {
        std::vector<detail::Index> indices;
        collect_indices(values, indices, "kernel_source");
        return detail::kernel_source(indices.data(), indices.size(), device,
                                     format.value_or(device == "cuda" ? "ptx" : "llvm"));
      },
      nb::arg("values"), nb::kw_only(), nb::arg("device") = "cuda", nb::arg("format") = nb::none(),
      "The code of the kernels that would compute the values (and the pending side effects), without compiling "
      "or launching them, on any machine: device='cuda' gives their PTX (format='ptx', sm_90) or LLVM IR "
      "(format='llvm'); device='cpu' their LLVM IR. Literals appear as a first launch bakes them in.");
  m.def(
      "set_label",
      [](nb::handle value, const std::string& label) {
        std::string where = python_caller();
        visit_arrays(value, [&](const auto& array) { detail::set_label(array.index(), label, where); }, "set_label");
      },
      nb::arg("array"), nb::arg("label"),
      "Names an array in IR listings, kernel logs and compile reasons (never part of a kernel's identity).");
  m.def("ir_listing", &ir_listing, "The pending IR (everything reachable from live arrays).");
  m.def("live_nodes", &live_nodes, "Number of live IR nodes.");

  nb::enum_<Flag>(m, "Flag", "Behaviour switches (each also read from the environment at start-up).")
      .value("Checks", Flag::Checks, "Bounds-check gathers and scatters (KILN_CHECKS=1).")
      .value("Interpreter", Flag::Interpreter, "Run kernels on the reference interpreter (KILN_BACKEND=interp).")
      .value("Generalize", Flag::Generalize, "Literals that change become kernel parameters (KILN_GENERALIZE).")
      .value("DiskCache", Flag::DiskCache, "Keep compiled kernels on disk (KILN_DISK_CACHE).")
      .value("Symbolic", Flag::Symbolic, "Loops, conditionals and calls default to symbolic mode (KILN_SYMBOLIC).");
  m.def("set_flag", &set_flag, nb::arg("flag"), nb::arg("value"), "Turns a Flag on or off.");
  m.def("flag", &flag, nb::arg("flag"), "The current value of a Flag.");
  nb::enum_<LogLevel>(m, "LogLevel", "How much Kiln prints to stderr (KILN_LOG).")
      .value("Error", LogLevel::Error)
      .value("Warn", LogLevel::Warn)
      .value("Info", LogLevel::Info, "One line per kernel launch, with the reason for each compilation.")
      .value("Debug", LogLevel::Debug, "Also the IR of each kernel.");
  m.def("set_log_level", &set_log_level, nb::arg("level"), "Sets the LogLevel.");
  m.def("log_level", &log_level, "The current LogLevel.");

  nb::class_<MemoryStats>(m, "MemoryStats", "Bytes of memory Kiln's arrays use.")
      .def_ro("current_bytes", &MemoryStats::current_bytes, "In use by live arrays.")
      .def_ro("peak_bytes", &MemoryStats::peak_bytes, "Highest current_bytes since start-up or reset_peak_memory().")
      .def_ro("allocations", &MemoryStats::allocations, "Allocations served since start-up.")
      .def_ro("cached_bytes", &MemoryStats::cached_bytes, "Freed blocks kept for reuse.");
  m.def(
      "memory_stats", [](const std::optional<std::string>& device) { return memory_stats(device_argument(device)); },
      nb::arg("device") = nb::none(), "Current and peak memory use on a device (default: the default device).");
  m.def(
      "reset_peak_memory", [](const std::optional<std::string>& device) { reset_peak_memory(device_argument(device)); },
      nb::arg("device") = nb::none(), "Sets the peak counter to the current usage.");
  m.def(
      "flush_memory_cache",
      [](const std::optional<std::string>& device) { flush_memory_cache(device_argument(device)); },
      nb::arg("device") = nb::none(), "Returns every cached block to the device.");
  m.def(
      "set_memory_cache_limit",
      [](int64_t bytes, const std::optional<std::string>& device) {
        set_memory_cache_limit(to_size(bytes, "set_memory_cache_limit"), device_argument(device));
      },
      nb::arg("bytes"), nb::arg("device") = nb::none(),
      "Caps the bytes of freed blocks kept for reuse on a device (0 disables the cache).");
  m.def(
      "set_device", [](const std::string& device) { set_device(parse_device(device)); }, nb::arg("device"),
      "Makes 'cpu' or 'cuda' the device new arrays are created on (arrays already made stay where they "
      "are). ValueError saying why when the device cannot be used.");
  m.def(
      "default_device", [] { return std::string(device_name(default_device())); },
      "The device new arrays are created on: 'cpu' or 'cuda' (KILN_DEVICE at start-up, else 'cpu').");
  m.def(
      "_is_gpu_memory", [](const std::string& device) { return is_gpu_memory(parse_device(device)); },
      nb::arg("device"), "Whether arrays on the device live in GPU memory (DLPack hands that out, not a host copy).");

  nb::class_<CacheStats>(m, "CacheStats", "Statistics of the kernel caches.")
      .def_ro("memory_hits", &CacheStats::memory_hits, "Launches served by the in-memory cache.")
      .def_ro("disk_hits", &CacheStats::disk_hits, "Launches served by the disk cache.")
      .def_ro("compiles", &CacheStats::compiles, "Kernels compiled (specialized and generalized).")
      .def_ro("generalizations", &CacheStats::generalizations, "Compilations that turned literals into parameters.")
      .def_ro("kernels", &CacheStats::kernels, "Kernels held in memory now.")
      .def_ro("disk_bytes", &CacheStats::disk_bytes, "Bytes of the disk cache's Kiln entries.")
      .def_ro("disk_enabled", &CacheStats::disk_enabled, "False when the disk cache is off or refused.")
      .def_ro("disk_problem", &CacheStats::disk_problem, "Why the disk cache is not used (empty when it is).");
  m.def("cache_stats", &cache_stats, "Statistics of the kernel caches.");
  m.def("flush_kernel_cache", &flush_kernel_cache,
        "Drops every compiled kernel held in memory and forgets which literals varied.");
  m.def("clear_disk_cache", &clear_disk_cache, "Removes Kiln's entries from the disk cache directory.");
  m.def("set_disk_cache_dir", &set_disk_cache_dir, nb::arg("path"),
        "Uses `path` as the disk cache directory (empty: $KILN_CACHE_DIR, else ~/.cache/kiln).");
  m.def("disk_cache_dir", &disk_cache_dir, "The disk cache directory.");
  m.def(
      "set_disk_cache_limit", [](int64_t bytes) { set_disk_cache_limit(to_size(bytes, "set_disk_cache_limit")); },
      nb::arg("bytes"), "Caps the disk cache; least recently used entries are removed first.");
  m.def("set_generalization_threshold", &set_generalization_threshold, nb::arg("variants"),
        "Distinct literal variants of one kernel shape at which changed literals become parameters.");
  m.def("generalization_threshold", &generalization_threshold, "See set_generalization_threshold().");
  m.def(
      "kernel_history",
      [](bool clear) {
        nb::list records;
        for (const KernelLaunch& launch : kernel_history(clear)) records.append(launch_record(launch));
        return records;
      },
      nb::arg("clear") = false,
      "The most recent kernel launches, oldest first, as dicts: hash, shape_hash, size, device "
      "('cpu', 'cuda'), backend ('llvm', 'interp', 'cuda', 'cuda-emulated', 'library'), ops, "
      "inputs, outputs, side_effects, parameters, source ('compiled', 'generalized', 'memory', "
      "'disk'), reason (None for cache hits), codegen_ms, compile_ms, run_ms, lookup_ms, ir.");
  m.def("packet_width", &packet_width, "SIMD lanes of the host's LLVM backend.");
  m.def("cuda_status", &cuda_status,
        "What Kiln sees of CUDA: the NVIDIA driver's version and device count, or one sentence saying why there "
        "is none (loads libcuda.so.1, or KILN_LIBCUDA_PATH, on first use).");
  m.def(
      "set_block_size", [](int64_t lanes) { set_block_size(to_size(lanes, "set_block_size")); }, nb::arg("lanes"),
      "Lanes per parallel task (a multiple of the packet width).");
  m.def("block_size", &block_size, "Lanes per parallel task.");
  m.def(
      "set_kernel_split",
      [](int64_t statements) {
        size_t count = to_size(statements, "set_kernel_split");
        if (count > UINT32_MAX)
          throw ValueError("kiln: set_kernel_split(): " + std::to_string(count) +
                           " statements is more than 4294967295; use 0 to never split kernels");
        set_kernel_split(uint32_t(count));
      },
      nb::arg("statements"),
      "Kernels of more than this many statements compile as pieces of about this many (default 5000; "
      "0 never splits), so compile time grows linearly with kernel size. Results are the same.");
  m.def("kernel_split", &kernel_split, "See set_kernel_split().");
}

}  // namespace kiln::python
