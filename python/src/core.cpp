// core.cpp — the extension module tristream._core (nanobind): the C++ API (tristream.hpp) for the
// Python package in python/tristream/. Counts run with the GIL released; tristream::Error becomes
// tristream.Error (InputError and UsageError are also ValueErrors, DeviceError a RuntimeError).
// Results come back as dicts whose per-vertex arrays are NumPy arrays that own the moved vectors.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tristream/tristream.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

template <class T>
using Pairs = nb::ndarray<const T, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

// A 1-D NumPy array owning `v` (moved, not copied).
template <class T>
nb::object numpy_of(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

nb::dict result_dict(tristream::CountResult&& r, bool per_vertex, bool clustering) {
  nb::dict d;
  d["triangles"] = r.triangles;
  d["vertices"] = r.vertices;
  d["edges"] = r.edges;
  d["transitivity"] = r.transitivity;
  d["average_clustering"] = per_vertex ? nb::cast(r.average_clustering) : nb::none();
  d["vertex_ids"] = per_vertex ? numpy_of(std::move(r.vertex_ids)) : nb::none();
  d["per_vertex"] = per_vertex ? numpy_of(std::move(r.per_vertex)) : nb::none();
  d["clustering"] = clustering ? numpy_of(std::move(r.clustering)) : nb::none();
  d["vertex_names"] = per_vertex && !r.vertex_names.empty() ? nb::cast(r.vertex_names) : nb::none();
  d["backend"] = r.backend;
  d["device"] = r.device;
  d["stats"] = r.stats;
  d["plan"] = r.plan;
  d["seconds"] = r.seconds;
  d["convert_seconds"] = r.convert_seconds;
  d["plan_seconds"] = r.plan_seconds;
  d["count_seconds"] = r.count_seconds;
  d["host_budget_bytes"] = r.host_budget_bytes;
  d["host_peak_bytes"] = r.host_peak_bytes;
  return d;
}

nb::dict summary_dict(const tristream::ConvertSummary& s) {
  nb::dict d;
  d["input_edges"] = s.input_edges;
  d["self_loops"] = s.self_loops;
  d["duplicates"] = s.duplicates;
  d["vertices"] = s.vertices;
  d["edges"] = s.edges;
  d["max_degree"] = s.max_degree;
  d["output_bytes"] = s.output_bytes;
  d["out_of_core"] = s.out_of_core;
  d["seconds"] = s.seconds;
  d["memory_limit_bytes"] = s.memory_limit_bytes;
  d["host_peak_bytes"] = s.host_peak_bytes;
  return d;
}

template <class F>
nb::dict counted(const tristream::CountOptions& o, F&& run) {
  tristream::CountResult r;
  {
    nb::gil_scoped_release release;
    r = run();
  }
  return result_dict(std::move(r), o.per_vertex || o.clustering, o.clustering);
}

template <class T>
nb::dict count_pairs(Pairs<T> a, const tristream::CountOptions& o) {
  return counted(o, [&] { return tristream::count_edges(a.data(), a.shape(0), o); });
}

template <class T>
nb::dict convert_pairs(Pairs<T> a, const std::string& dst, const tristream::ConvertOptions& o) {
  tristream::ConvertSummary s;
  {
    nb::gil_scoped_release release;
    s = tristream::convert_edges(a.data(), a.shape(0), dst, o);
  }
  return summary_dict(s);
}

}  // namespace

NB_MODULE(_core, m) {
  // 1. Exceptions: one Python type per error kind, all under tristream.Error.
  static PyObject* error = PyErr_NewException("tristream.Error", PyExc_RuntimeError, nullptr);
  static PyObject* input_error = PyErr_NewException(
      "tristream.InputError", nb::make_tuple(nb::handle(error), nb::handle(PyExc_ValueError)).ptr(),
      nullptr);
  static PyObject* usage_error = PyErr_NewException(
      "tristream.UsageError", nb::make_tuple(nb::handle(error), nb::handle(PyExc_ValueError)).ptr(),
      nullptr);
  static PyObject* device_error = PyErr_NewException("tristream.DeviceError", error, nullptr);
  m.attr("Error") = nb::handle(error);
  m.attr("InputError") = nb::handle(input_error);
  m.attr("UsageError") = nb::handle(usage_error);
  m.attr("DeviceError") = nb::handle(device_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tristream::Error& e) {
      PyObject* type = error;
      if (e.kind() == tristream::ErrorKind::Input) type = input_error;
      if (e.kind() == tristream::ErrorKind::Usage) type = usage_error;
      if (e.kind() == tristream::ErrorKind::Device) type = device_error;
      if (e.kind() == tristream::ErrorKind::Interrupted) type = PyExc_KeyboardInterrupt;
      PyErr_SetString(type, e.what());
    }
  });

  // 2. Options, field by field as in tristream.hpp; byte sizes are set as text ("4G", "4096").
  nb::class_<tristream::CountOptions>(m, "CountOptions")
      .def(nb::init<>())
      .def_rw("backend", &tristream::CountOptions::backend)
      .def_rw("kernel", &tristream::CountOptions::kernel)
      .def_rw("device", &tristream::CountOptions::device)
      .def_rw("devices", &tristream::CountOptions::devices)
      .def_rw("hybrid", &tristream::CountOptions::hybrid)
      .def_rw("cpu_workers", &tristream::CountOptions::cpu_workers)
      .def_rw("rank_split", &tristream::CountOptions::rank_split)
      .def_rw("threads", &tristream::CountOptions::threads)
      .def_prop_rw(
          "gpu_memory", [](const tristream::CountOptions& o) { return o.gpu_memory.bytes(); },
          [](tristream::CountOptions& o, const std::string& s) {
            o.gpu_memory = tristream::parse_byte_size(s, "gpu_memory");
          })
      .def_prop_rw(
          "host_memory", [](const tristream::CountOptions& o) { return o.host_memory.bytes(); },
          [](tristream::CountOptions& o, const std::string& s) {
            o.host_memory = tristream::parse_byte_size(s, "host_memory");
          })
      .def_rw("scheme", &tristream::CountOptions::scheme)
      .def_rw("parts", &tristream::CountOptions::parts)
      .def_rw("per_vertex", &tristream::CountOptions::per_vertex)
      .def_rw("clustering", &tristream::CountOptions::clustering)
      .def_rw("format", &tristream::CountOptions::format)
      .def_rw("delimiter", &tristream::CountOptions::delimiter)
      .def_rw("header", &tristream::CountOptions::header)
      .def_rw("names", &tristream::CountOptions::names)
      .def_rw("count_isolated", &tristream::CountOptions::count_isolated)
      .def_rw("tmp_dir", &tristream::CountOptions::tmp_dir)
      .def_rw("quiet", &tristream::CountOptions::quiet)
      .def_rw("trace", &tristream::CountOptions::trace);
  nb::class_<tristream::ConvertOptions>(m, "ConvertOptions")
      .def(nb::init<>())
      .def_rw("format", &tristream::ConvertOptions::format)
      .def_rw("delimiter", &tristream::ConvertOptions::delimiter)
      .def_rw("header", &tristream::ConvertOptions::header)
      .def_rw("names", &tristream::ConvertOptions::names)
      .def_prop_rw(
          "memory_limit", [](const tristream::ConvertOptions& o) { return o.memory_limit; },
          [](tristream::ConvertOptions& o, const std::string& s) {
            o.memory_limit = tristream::parse_byte_size(s, "memory_limit");
          })
      .def_rw("tmp_dir", &tristream::ConvertOptions::tmp_dir)
      .def_rw("threads", &tristream::ConvertOptions::threads)
      .def_rw("quiet", &tristream::ConvertOptions::quiet)
      .def_prop_rw(
          "chunk_size", [](const tristream::ConvertOptions& o) { return o.write.chunk_bytes; },
          [](tristream::ConvertOptions& o, const std::string& s) {
            o.write.chunk_bytes = tristream::parse_byte_size(s, "chunk_size");
          })
      .def_prop_rw(
          "zstd_level", [](const tristream::ConvertOptions& o) { return o.write.zstd_level; },
          [](tristream::ConvertOptions& o, int level) { o.write.zstd_level = level; });

  // 3. Counting and converting.
  m.def(
      "count_path",
      [](const std::string& path, const tristream::CountOptions& o) {
        return counted(o, [&] { return tristream::count(path, o); });
      },
      "path"_a, "options"_a);
  m.def("count_edges", &count_pairs<std::uint64_t>, "edges"_a, "options"_a);
  m.def("count_edges", &count_pairs<std::uint32_t>, "edges"_a, "options"_a);
  m.def(
      "convert_path",
      [](const std::string& src, const std::string& dst, const tristream::ConvertOptions& o) {
        tristream::ConvertSummary s;
        {
          nb::gil_scoped_release release;
          s = tristream::convert(src, dst, o);
        }
        return summary_dict(s);
      },
      "src"_a, "dst"_a, "options"_a);
  m.def("convert_edges", &convert_pairs<std::uint64_t>, "edges"_a, "dst"_a, "options"_a);
  m.def("convert_edges", &convert_pairs<std::uint32_t>, "edges"_a, "dst"_a, "options"_a);
  m.attr("__version__") = tristream::version();
}
