// _cgsolve_core: the pybind11 extension under the cgsolve and netsolve Python packages
// (python/cgsolve/__init__.py, python/netsolve/__init__.py, which take scipy.sparse matrices and
// build the DataFrames). Over the stable C++ API only (cgsolve/api.hpp, cgsolve/network.hpp).
// The caller's CSR arrays are passed as pointers (no copy here); solves run without the GIL.
// cgsolve::InputError (a std::invalid_argument) arrives in Python as ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <time.h>

#include <algorithm>
#include <mutex>

#include "cgsolve/api.hpp"
#include "cgsolve/network.hpp"

namespace py = pybind11;

namespace {

// The arrays of a canonical CSR matrix (python/cgsolve/__init__.py makes it): row_ptr and col_idx
// both int32 or both int64, values float64, all C-contiguous.
cgsolve::CsrRef csr_ref(long rows, long cols, const py::array& row_ptr, const py::array& col_idx,
                        const py::array& values) {
  const bool i32 = row_ptr.dtype().is(py::dtype::of<std::int32_t>());
  const bool i64 = row_ptr.dtype().is(py::dtype::of<std::int64_t>());
  if ((!i32 && !i64) || !col_idx.dtype().is(row_ptr.dtype()))
    throw cgsolve::InputError("the CSR indices must be both int32 or both int64");
  if (!values.dtype().is(py::dtype::of<double>()))
    throw cgsolve::InputError("the CSR values must be float64");
  for (const py::array* a : {&row_ptr, &col_idx, &values})
    if (a->ndim() != 1 || !(a->flags() & py::array::c_style))
      throw cgsolve::InputError("the CSR arrays must be one-dimensional and contiguous");
  if (row_ptr.size() != rows + 1)
    throw cgsolve::InputError("the CSR row pointers have " + std::to_string(row_ptr.size()) +
                              " entries for " + std::to_string(rows) + " rows");
  cgsolve::CsrRef A;
  A.rows = rows;
  A.cols = cols;
  A.index_type = i32 ? cgsolve::IndexType::int32 : cgsolve::IndexType::int64;
  A.row_ptr = row_ptr.data();
  A.col_idx = col_idx.data();
  A.values = static_cast<const double*>(values.data());
  const long nnz = i32 ? static_cast<const std::int32_t*>(A.row_ptr)[rows]
                       : long(static_cast<const std::int64_t*>(A.row_ptr)[rows]);
  if (col_idx.size() < nnz || values.size() < nnz)
    throw cgsolve::InputError("the CSR arrays hold fewer entries than the row pointers say");
  return A;
}

using Vector = py::array_t<double, py::array::c_style | py::array::forcecast>;

void check_length(const Vector& v, std::int64_t n, const char* what) {
  if (v.ndim() != 1 || v.size() != n)
    throw cgsolve::InputError(std::string(what) + " has " + std::to_string(v.size()) +
                              " entries but the matrix has " + std::to_string(n) + " rows");
}

// A Solver with a lock: Python threads may share one, the solves run one at a time.
struct PySolver {
  cgsolve::Solver solver;
  std::mutex lock;
};

py::tuple solve_with(PySolver& s, const Vector& b, const py::object& x0) {
  const std::int64_t n = s.solver.rows();
  check_length(b, n, "the right-hand side");
  py::array_t<double> x(n);
  const bool guess = !x0.is_none();
  if (guess) {
    const Vector x0_array = x0.cast<Vector>();
    check_length(x0_array, n, "the initial guess");
    std::copy(x0_array.data(), x0_array.data() + n, x.mutable_data());
  }
  cgsolve::Result result;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> hold(s.lock);
    result = s.solver.solve(b.data(), x.mutable_data(), guess);
  }
  // The result moved to the heap and handed to Python as it is: no deep copy of its strings.
  return py::make_tuple(x, std::make_unique<cgsolve::Result>(std::move(result)));
}

// A vector's contents as a NumPy array that owns them (no copy).
template <typename T>
py::array_t<T> to_array(std::vector<T>&& v) {
  auto* owner = new std::vector<T>(std::move(v));
  py::capsule free(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(owner->size(), owner->data(), free);
}

// Options, Plan and Info: plain records with their fields as attributes.
void bind_records(py::module_& m) {
  py::class_<cgsolve::Options>(m, "Options")
      .def(py::init<>())
      .def_readwrite("format", &cgsolve::Options::format)
      .def_readwrite("device", &cgsolve::Options::device)
      .def_readwrite("precond", &cgsolve::Options::precond)
      .def_readwrite("precision", &cgsolve::Options::precision)
      .def_readwrite("cpu_loop", &cgsolve::Options::cpu_loop)
      .def_readwrite("gpu_loop", &cgsolve::Options::gpu_loop)
      .def_readwrite("kernel", &cgsolve::Options::kernel)
      .def_readwrite("threads", &cgsolve::Options::threads)
      .def_readwrite("sort_rows", &cgsolve::Options::sort_rows)
      .def_readwrite("rcm", &cgsolve::Options::rcm)
      .def_readwrite("tol", &cgsolve::Options::tol)
      .def_readwrite("atol", &cgsolve::Options::atol)
      .def_readwrite("max_iters", &cgsolve::Options::max_iters)
      .def_readwrite("check_every", &cgsolve::Options::check_every)
      .def_readwrite("record_history", &cgsolve::Options::record_history)
      .def_readwrite("check_symmetry", &cgsolve::Options::check_symmetry)
      .def_readwrite("more", &cgsolve::Options::more);
  py::class_<cgsolve::PlanInfo>(m, "Plan", "What ran, and the reason of every decision")
      .def_readonly("format", &cgsolve::PlanInfo::format)
      .def_readonly("device", &cgsolve::PlanInfo::device)
      .def_readonly("loop", &cgsolve::PlanInfo::loop)
      .def_readonly("preconditioner", &cgsolve::PlanInfo::precond)
      .def_readonly("precision", &cgsolve::PlanInfo::precision)
      .def_readonly("kernel", &cgsolve::PlanInfo::kernel)
      .def_readonly("threads", &cgsolve::PlanInfo::threads)
      .def_readonly("rcm", &cgsolve::PlanInfo::rcm)
      .def_readonly("sort_rows", &cgsolve::PlanInfo::sort_rows)
      .def_readonly("summary", &cgsolve::PlanInfo::summary)
      .def_readonly("reasons", &cgsolve::PlanInfo::reasons)
      .def_readonly("inspection", &cgsolve::PlanInfo::inspection)
      .def("__repr__", [](const cgsolve::PlanInfo& p) { return "<cgsolve plan: " + p.summary + ">"; });
  py::class_<cgsolve::Result>(m, "Info", "What a solve did (docs/python.md)")
      .def_readonly("iterations", &cgsolve::Result::iterations)
      .def_readonly("converged", &cgsolve::Result::converged)
      .def_readonly("status", &cgsolve::Result::status)
      .def_readonly("relative_residual", &cgsolve::Result::relative_residual)
      .def_readonly("true_relative_residual", &cgsolve::Result::true_relative_residual)
      .def_readonly("residual_history", &cgsolve::Result::residual_history)
      .def_readonly("times", &cgsolve::Result::times)
      .def_readonly("plan", &cgsolve::Result::plan)
      .def_readonly("backend", &cgsolve::Result::backend)
      .def_readonly("spmv_measured", &cgsolve::Result::spmv_measured)
      .def_readonly("spmv_median_s", &cgsolve::Result::spmv_median_s)
      .def_readonly("probe_iterations", &cgsolve::Result::probe_iterations)
      .def("__repr__", [](const cgsolve::Result& r) {
        return "<cgsolve info: " + r.status + " after " + std::to_string(r.iterations) +
               " iterations, " + r.plan.summary + ">";
      });
}

void bind_solver(py::module_& m) {
  py::register_exception<cgsolve::DeviceError>(m, "DeviceError", PyExc_RuntimeError);
  py::class_<PySolver>(m, "_Solver")
      .def(py::init([](long rows, long cols, const py::array& row_ptr, const py::array& col_idx,
                       const py::array& values, const cgsolve::Options& options) {
             const cgsolve::CsrRef A = csr_ref(rows, cols, row_ptr, col_idx, values);
             py::gil_scoped_release release;
             return new PySolver{cgsolve::Solver(A, options), {}};
           }))
      .def("set_values",
           [](PySolver& s, const py::array& values) {
             if (!values.dtype().is(py::dtype::of<double>()) || values.ndim() != 1 ||
                 !(values.flags() & py::array::c_style) || values.size() != s.solver.nnz())
               throw cgsolve::InputError("set_values: " + std::to_string(s.solver.nnz()) +
                                         " contiguous float64 values expected");
             const double* v = static_cast<const double*>(values.data());
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> hold(s.lock);
             s.solver.set_values(v);
           })
      .def("set_matrix",
           [](PySolver& s, long rows, long cols, const py::array& row_ptr,
              const py::array& col_idx, const py::array& values) {
             const cgsolve::CsrRef A = csr_ref(rows, cols, row_ptr, col_idx, values);
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> hold(s.lock);
             s.solver.set_values(A);
           })
      .def("solve", &solve_with)
      .def_property_readonly("rows", [](PySolver& s) { return s.solver.rows(); })
      .def_property_readonly("nnz", [](PySolver& s) { return s.solver.nnz(); })
      .def_property_readonly("plan", [](PySolver& s) { return s.solver.plan(); });
  m.def("_solve", [](long rows, long cols, const py::array& row_ptr, const py::array& col_idx,
                     const py::array& values, const Vector& b, const py::object& x0,
                     const cgsolve::Options& options) {
    const cgsolve::CsrRef A = csr_ref(rows, cols, row_ptr, col_idx, values);
    check_length(b, rows, "the right-hand side");
    py::array_t<double> x(rows);
    const bool guess = !x0.is_none();
    if (guess) {
      const Vector x0_array = x0.cast<Vector>();
      check_length(x0_array, rows, "the initial guess");
      std::copy(x0_array.data(), x0_array.data() + rows, x.mutable_data());
    }
    cgsolve::Result result;
    {
      py::gil_scoped_release release;
      result = cgsolve::solve(A, b.data(), x.mutable_data(), options, guess);
    }
    // The result moved to the heap and handed to Python as it is: no deep copy of its strings.
  return py::make_tuple(x, std::make_unique<cgsolve::Result>(std::move(result)));
  });
  // The same solve repeated from C++: this thread's CPU seconds a call (what a loaded machine's
  // other processes do not change). bench/scripts/python_overhead.py sets Solver.solve's cost
  // from Python against it.
  m.def("_time_solves", [](PySolver& s, const Vector& b, int calls) {
    check_length(b, s.solver.rows(), "the right-hand side");
    std::vector<double> x(std::size_t(s.solver.rows()));
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> hold(s.lock);
    auto cpu = [] {
      timespec t{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
    };
    const double start = cpu();
    for (int k = 0; k < calls; ++k) s.solver.solve(b.data(), x.data());
    return (cpu() - start) / std::max(calls, 1);
  });
  m.def("version", &cgsolve::version);
  m.def("built_with_cuda", &cgsolve::built_with_cuda);
}

using cgsolve::network::Network;

py::dict results_dict(cgsolve::network::Results&& r) {
  py::dict d;
  d["times"] = to_array(std::vector<std::int64_t>(r.times.begin(), r.times.end()));
  d["node_ids"] = r.node_ids;
  d["link_ids"] = r.link_ids;
  d["tank_ids"] = r.tank_ids;
  d["head"] = to_array(std::move(r.head));
  d["pressure"] = to_array(std::move(r.pressure));
  d["demand"] = to_array(std::move(r.demand));
  d["cut_off"] = to_array(std::move(r.cut_off));
  d["required_demand"] = to_array(std::move(r.required_demand));
  d["delivered_demand"] = to_array(std::move(r.delivered_demand));
  d["deficit"] = to_array(std::move(r.deficit));
  d["deficit_pct"] = to_array(std::move(r.deficit_pct));
  d["leakage"] = to_array(std::move(r.leakage));
  d["flow"] = to_array(std::move(r.flow));
  d["headloss"] = to_array(std::move(r.headloss));
  d["open"] = to_array(std::move(r.open));
  d["level"] = to_array(std::move(r.level));
  d["tank_head"] = to_array(std::move(r.tank_head));
  d["volume"] = to_array(std::move(r.volume));
  d["summary_json"] = r.summary_json;
  d["completed"] = r.completed;
  d["unbalanced"] = r.unbalanced;
  d["error"] = r.error;
  return d;
}

cgsolve::network::Options network_options(const std::string& duration, const std::string& solver,
                                          const std::string& demand_model, bool keep_freed_memory,
                                          std::vector<std::pair<std::string, std::string>> more) {
  cgsolve::network::Options o;
  o.keep_freed_memory = keep_freed_memory;
  o.duration = duration;
  o.solver = solver;
  o.demand_model = demand_model;
  o.more = std::move(more);
  return o;
}

void bind_network(py::module_& m) {
  py::class_<Network>(m, "_Network")
      .def_static("from_file", &Network::from_file, py::call_guard<py::gil_scoped_release>())
      .def_static("from_string", &Network::from_string, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("node_ids", &Network::node_ids)
      .def_property_readonly("link_ids", &Network::link_ids)
      .def_property_readonly("junction_count", &Network::junction_count);
  m.def("_run", [](const Network& net, const std::string& duration, const std::string& solver,
                   const std::string& demand_model, bool keep_freed_memory,
                   std::vector<std::pair<std::string, std::string>> more) {
    const auto options =
        network_options(duration, solver, demand_model, keep_freed_memory, std::move(more));
    cgsolve::network::Results r;
    {
      py::gil_scoped_release release;
      r = cgsolve::network::run(net, options);
    }
    return results_dict(std::move(r));
  });
  m.def("_study", [](const Network& net, const std::string& kind, const std::string& duration,
                     const std::string& solver, const std::string& demand_model,
                     bool keep_freed_memory, std::vector<std::pair<std::string, std::string>> more) {
    const auto options =
        network_options(duration, solver, demand_model, keep_freed_memory, std::move(more));
    py::gil_scoped_release release;
    return cgsolve::network::study(net, kind, options);
  });
}

}  // namespace

PYBIND11_MODULE(_cgsolve_core, m) {
  m.doc() = "cgsolve's engine for the cgsolve and netsolve Python packages";
  bind_records(m);
  bind_solver(m);
  bind_network(m);
}
