// --device auto (solver/device_choice.hpp).
#include "solver/device_choice.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "base/input_error.hpp"
#include "solver/precond/cholesky.hpp"
#include "solver/precond_forecast.hpp"
#include "solver/solver.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {

namespace {

// The GPU's fixed cost (one H200 and its 16-core host, BENCHMARKS §27):
// - starting the driver and making the context (a process on a 66-row system: 343-360 ms on the
//   GPU against 4-6 ms on the CPU, whole), where this process has not (cgsolve makes it while it
//   reads a large input);
// - the plan's allocations, module loads and first launches (the format's build on the GPU:
//   7.4-11.6 ms whatever the size);
// - A and the vectors up at the staged rate (1.6-2.4 ms small, 21 ms for 45M entries).
constexpr double kGpuContextSeconds = 0.33;
constexpr double kGpuPlanSeconds = 10e-3;
constexpr double kUploadBytesPerSecond = 25e9;
constexpr double kLeastUploadSeconds = 1.5e-3;

// The probe's cost in Jacobi-CG iterations at the host's best rate: its iterations and the
// set-up of a CSR Jacobi solver (A copied, its diagonal inverted: 28 ms on gen:poisson2d:1000
// with 16 threads, 60 iterations at that rate).
constexpr double kProbeSetupIterations = 60;

double gpu_fixed_seconds(const CsrMatrix<double>& A, bool context_made) {
  const double bytes = 12.0 * double(A.nnz()) + 28.0 * double(A.rows);
  return (context_made ? 0 : kGpuContextSeconds) + kGpuPlanSeconds +
         std::max(kLeastUploadSeconds, bytes / kUploadBytesPerSecond);
}

double iteration_seconds(const ProbeRates& rates, double entries) {
  return rates.per_iteration + entries * rates.jacobi_per_entry;
}

// Which candidates the forecasts hold: the request's preconditioner (any other than AMG and
// chol forecast as Jacobi's iterations), or all for auto.
struct Candidates {
  bool jacobi = false, amg = false, chol = false;
};
Candidates candidates_of(const PrecondSpec& precond) {
  if (precond.is("auto")) return {true, true, true};
  if (precond.is("amg")) return {false, true, false};
  if (precond.is("chol")) return {false, false, true};
  return {true, false, false};
}

// A few Jacobi-CG iterations on the CPU (the request's threads, CSR): the time an iteration
// and the forecast of iterations to the request's tolerance. False where Jacobi cannot be set up
// (a zero diagonal: no SPD matrix; the solve itself will say so).
bool probe_cpu(const SolveRequest& request, const CsrMatrix<double>& A,
               const std::vector<double>& b, long iterations, DeviceFigures& f) {
  SolveRequest r = request;
  r.device_auto = false;
  r.backend.device = Device::omp;
  r.backend.format = Format::csr;
  r.backend.kernel.clear();
  r.format_auto = false;
  r.precond = parse_precond("jacobi");
  try {
    const PlannedSolver planned = analyze_planned(r, A);
    CgOptions stop = planned.solver->plan().cg;
    stop.max_iters = iterations;
    stop.record_history = true;
    stop.progress = nullptr;
    std::vector<double> x(b.size(), 0.0);
    const SolveReport report = planned.solver->solve(b, x, false, &stop);
    const CgResult& cg = report.cg;
    f.cpu_iteration = report.times.solve_seconds / double(std::max<long>(cg.iterations, 1));
    f.cpu_measured = true;
    f.solved_by_probe = cg.ok();
    const double target = std::max(stop.tol * norm2(b), stop.atol);
    f.iterations =
        cg.ok() ? double(cg.converged_at) : forecast_iterations(cg.residual_history, target);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

// chol's forecast on each device from its counted factor, on a network's graph (where
// --precond auto would try it first).
void forecast_network(const CsrMatrix<double>& A, const ProbeRates& cpu, const ProbeRates& gpu,
                      DeviceFigures& f) {
  if (!network_graph(A, 200) || A.rows > kCholeskyCountedRows) return;
  // chol's set-up is one host core's work (Eigen's simplicial factor): the host's serial rates.
  const precond::CholeskyEstimate e = precond::estimate_cholesky(A);
  if (!e.refusal.empty()) return;
  f.chol_cpu = forecast_cholesky(e, double(A.nnz()), cpu).seconds;
  f.chol_gpu = forecast_cholesky(e, double(A.nnz()), gpu).seconds;
}

std::string figures_text(const DeviceFigures& f) {
  char text[400];
  std::snprintf(text, sizeof text,
                "an iteration %s on the CPU (%s) against %s on the GPU, whose fixed cost is %s%s",
                format_ms(f.cpu_iteration).c_str(),
                f.cpu_measured ? "measured" : "at the host's best rate, not probed",
                format_ms(f.gpu_iteration).c_str(), format_ms(f.gpu_fixed).c_str(),
                f.context_counted ? " (its context included)" : "");
  std::string out = text;
  if (std::isfinite(f.iterations)) {
    std::snprintf(text, sizeof text, "; Jacobi's forecast %.0f iterations", f.iterations);
    out += text;
  }
  if (std::isfinite(f.amg_cpu))
    out += "; AMG's forecast " + format_ms(f.amg_cpu) + " on the CPU, " + format_ms(f.amg_gpu) +
           " on the GPU";
  if (std::isfinite(f.chol_cpu))
    out += "; chol's forecast " + format_ms(f.chol_cpu) + " on the CPU, " + format_ms(f.chol_gpu) +
           " on the GPU";
  if (!f.not_probed.empty()) out += "; not probed: " + f.not_probed;
  return out;
}

}  // namespace

DeviceChoice decide_device(const DeviceFigures& f) {
  DeviceChoice c;
  if (!f.no_gpu.empty()) {
    c.why = "device: cpu (--device auto: no GPU: " + f.no_gpu + ")";
    return c;
  }
  if (f.solved_by_probe) {
    c.why = "device: cpu (--device auto: Jacobi's probe solved the system on the CPU; " +
            figures_text(f) + ")";
    return c;
  }
  const double cpu = std::min({f.iterations * f.cpu_iteration, f.chol_cpu, f.amg_cpu});
  const double gpu =
      f.gpu_fixed + std::min({f.iterations * f.gpu_iteration, f.chol_gpu, f.amg_gpu});
  // Neither forecast finite (no probe, or a residual that did not fall): the faster iteration.
  const bool on_gpu =
      std::isfinite(cpu) || std::isfinite(gpu) ? gpu < cpu : f.gpu_iteration < f.cpu_iteration;
  c.device = on_gpu ? Device::gpu : Device::omp;
  c.why = std::string("device: ") + (on_gpu ? "gpu" : "cpu") + " (--device auto: ";
  if (std::isfinite(cpu) || std::isfinite(gpu))
    c.why +=
        "forecast " + format_ms(cpu) + " on the CPU against " + format_ms(gpu) + " on the GPU; ";
  c.why += figures_text(f) + ")";
  return c;
}

DeviceFigures measure_device_figures(const SolveRequest& request, const CsrMatrix<double>& A,
                                     const std::vector<double>* rhs) {
  DeviceFigures f;
  std::string why;
  if (!cuda_device_present(&why)) {
    f.no_gpu = why;
    return f;
  }
  const int threads = request.backend.threads > 0 ? request.backend.threads : omp_get_max_threads();
  const double entries = double(A.nnz());
  const ProbeRates cpu = probe_rates(Device::omp, threads, A.rows, entries);
  const ProbeRates gpu = probe_rates(Device::gpu, 1, A.rows, entries);
  f.context_counted = !cuda_context_made();
  f.gpu_fixed = gpu_fixed_seconds(A, !f.context_counted);
  f.gpu_iteration = iteration_seconds(gpu, entries);
  // The host's best: every thread at the serial rate, nothing lost to the team.
  f.cpu_iteration = cpu.per_iteration + entries * cpu.jacobi_per_entry / threads;
  const Candidates c = candidates_of(request.precond);
  if (c.amg) {
    f.amg_cpu = entries * cpu.amg_setup_per_entry + kAmgWork * f.cpu_iteration;
    f.amg_gpu = estimate_amg_setup(A, gpu).seconds + kAmgWork * f.gpu_iteration;
  }
  // Nothing left to count or probe where the GPU's fixed cost alone is above AMG's forecast on
  // the CPU (chol's count is an ordering of A: ~0.1 s on 100,000 rows).
  if (f.gpu_fixed >= f.amg_cpu) {
    f.not_probed = "the GPU's fixed cost alone is above the CPU's forecast";
    return f;
  }
  if (c.chol) forecast_network(A, cpu, gpu, f);
  if (!c.jacobi) return f;
  const double cpu_known = std::min(f.amg_cpu, f.chol_cpu);
  const double gpu_known = f.gpu_fixed + std::min(f.amg_gpu, f.chol_gpu);
  const double probe_cost = (kProbeSetupIterations + 12) * f.cpu_iteration;
  if (f.gpu_fixed >= cpu_known) {
    f.not_probed = "the GPU's fixed cost alone is above the CPU's forecast";
    return f;
  }
  if (probe_cost > 0.25 * std::min(cpu_known, gpu_known)) {
    f.not_probed =
        "the probe, about " + format_ms(probe_cost) + ", would cost more than a quarter of it";
    return f;
  }
  bool own = false;
  const std::vector<double> b = probe_rhs(rhs, A.rows, own);
  // As many iterations as a quarter of the GPU's fixed cost buys at the host's best rate, at
  // least enough to read a rate from.
  const long iterations = long(std::clamp(f.gpu_fixed / (4 * f.cpu_iteration), 12.0, 60.0));
  if (!probe_cpu(request, A, b, iterations, f))
    f.iterations = std::numeric_limits<double>::quiet_NaN();
  return f;
}

DeviceChoice choose_device(const SolveRequest& request, const CsrMatrix<double>& A,
                           const std::vector<double>* rhs) {
  if (!request.device_auto) return DeviceChoice{request.backend.device, ""};
  DeviceChoice choice = decide_device(measure_device_figures(request, A, rhs));
  std::string why;
  if (choice.device == Device::gpu && !cuda_device_available(&why)) {
    choice.device = Device::omp;
    choice.why = "device: cpu (--device auto: the GPU's forecast won, but " + why + ")";
  }
  return choice;
}

}  // namespace cgs
