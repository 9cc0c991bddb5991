#include "cli_options.hpp"

#include <iostream>
#include <limits>

namespace cgs {

namespace {

// --precond, its help listing the registry's preconditioners (name, argument, a line each), and
// --help-precond NAME, which prints one's argument and options table and exits.
void add_precond_options(CLI::App& app, SolverCli& cli) {
  app.add_option("--precond", cli.precond,
                 "Preconditioner, name[:argument]:\n" + preconditioner_list() +
                     "auto: probe the candidates on A and take the shortest estimated time to "
                     "solution")
      ->capture_default_str();
  app.add_option_function<std::string>(
      "--help-precond",
      [](const std::string& name) {
        std::string help;
        try {
          help = preconditioner_help(name);
        } catch (const InputError& e) {
          throw CLI::ValidationError("--help-precond", e.what());
        }
        std::cout << help;
        throw CLI::Success();
      },
      "Print a preconditioner's argument and options (amg's keys and defaults) and exit");
}

}  // namespace

void add_solver_options(CLI::App& app, SolverCli& cli) {
  SolveRequest& r = cli.request;
  app.add_option("--format", cli.format,
                 "Sparse format: coo, csr, ell, hll or auto (time a few candidates on the matrix "
                 "and take the fastest; auto also decides --sort-rows and, on the GPU, --kernel)")
      ->check(CLI::IsMember({"coo", "csr", "ell", "hll", "auto"}))
      ->capture_default_str();
  app.add_flag("--sort-rows", r.sort_rows,
               "Sort rows by length (descending) before the solve; x comes back in the "
               "original order");
  app.add_flag("--rcm", cli.rcm,
               "Renumber rows and columns by reverse Cuthill-McKee first (rows that share "
               "entries get nearby numbers: fewer cache lines per product, less traffic between "
               "threads); x comes back in the original order. The default for the ic0 (unless "
               "the rows already form wavefronts from row 0, as a grid in natural order) and "
               "bjacobi preconditioners");
  app.add_flag("--no-rcm", cli.no_rcm, "Keep the file's row order even for ic0 and bjacobi");
  app.add_option("--device", cli.device,
                 "cpu (OpenMP), serial (plain loops, one thread), gpu (CUDA) or auto (the GPU "
                 "where its forecast time to solution, its fixed costs included, beats the "
                 "CPU's; the plan says why)")
      ->check(CLI::IsMember({"cpu", "omp", "serial", "gpu", "cuda", "auto"}))
      ->capture_default_str();
  app.add_option("--threads", r.backend.threads, "OpenMP threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_precond_options(app, cli);
  app.add_option("--tol", r.cg.tol, "Stop when ||r|| <= tol * ||b||")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--atol", r.cg.atol, "... or when ||r|| <= atol")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-iters", r.cg.max_iters, "Iteration limit (0 = 10 * n)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  r.cg.check_every = 0;  // the device's default unless given
  app.add_option("--check-every", r.cg.check_every,
                 "Read the residual back every k iterations (0 = device default: 1 on CPU, "
                 "16 on GPU); at most k-1 extra iterations run")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--precision", cli.precision,
                 "Arithmetic of the matrix and vectors: double or "
                 "float (reductions are always accumulated in double)")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  app.add_option("--hack-size", r.backend.hack_size, "Rows per hack of the HLL format")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--hll-tail", r.backend.hll_tail,
                 "HLL: rows longer than this keep the rest of their entries in a CSR tail summed "
                 "in load-balanced pieces (HYB); -1 = chosen from the row lengths, a value past "
                 "the longest row = no tail")
      ->check(CLI::Range(-1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  app.add_option("--hll-sigma", r.backend.hll_sigma,
                 "HLL: store the rows sorted by length inside windows of this many rows "
                 "(SELL-C-sigma, a multiple of --hack-size; x and the columns keep their "
                 "order); 0 = rows in their own order, -1 = chosen from the row lengths")
      ->check(CLI::Range(-1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  app.add_option("--max-ell-fill", r.backend.max_ell_fill,
                 "Refuse ELL when its storage exceeds this multiple of CSR's")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--cpu-loop", cli.cpu_loop,
                 "CPU CG loop (cpu and serial devices): fused (two passes over the rows per "
                 "iteration; on cpu one thread team for the whole solve, or one thread where "
                 "that is faster: small systems, and in between timed on the system itself), "
                 "fused-serial or fused-team (that one, as asked), or generic (the "
                 "device-independent loop, a call per operation)")
      ->check(CLI::IsMember({"fused", "fused-serial", "fused-team", "generic"}))
      ->capture_default_str();
  app.add_option("--gpu-loop", cli.gpu_loop,
                 "GPU CG loop: persistent (one cooperative kernel for the whole solve), graph "
                 "(fused kernels replayed as a CUDA graph), cluster (a small system held in one "
                 "thread-block cluster's shared memory; CSR; a preconditioner's program, ic0's "
                 "levels for one, in one block), generic (separate "
                 "kernels) or auto; kernels without a row function (CSR stream, cuSPARSE) "
                 "always run generic")
      ->check(CLI::IsMember({"auto", "persistent", "graph", "generic", "cluster"}))
      ->capture_default_str();
  app.add_option("--kernel", r.backend.kernel,
                 "GPU kernel variant of the format (see README; empty = the format's default; "
                 "auto = the fastest measured on the matrix)");
  app.add_option("--block-size", r.backend.block_size, "GPU threads per block (0 = default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--blocks", r.backend.blocks, "GPU blocks for the COO kernel (0 = default)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-spmv-timing", cli.no_spmv_timing,
               "Do not time the SpMV inside the loop (to measure what the timing costs)");
}

// CLI11's IsMember checks come first; these refuse what they let through rather than map it to
// auto, for callers that fill SolverCli themselves (fuzz_cli_options).
CpuLoopAsk parse_cpu_loop(const std::string& name) {
  if (name == "fused") return CpuLoopAsk::automatic;
  if (name == "fused-serial") return CpuLoopAsk::serial;
  if (name == "fused-team") return CpuLoopAsk::team;
  if (name == "generic") return CpuLoopAsk::generic;
  throw InputError("--cpu-loop: unknown loop '" + name +
                   "' (fused, fused-serial, fused-team or generic)");
}

GpuLoopAsk parse_gpu_loop(const std::string& name) {
  if (name == "auto") return GpuLoopAsk::automatic;
  if (name == "persistent") return GpuLoopAsk::persistent;
  if (name == "graph") return GpuLoopAsk::graph;
  if (name == "generic") return GpuLoopAsk::generic;
  if (name == "cluster") return GpuLoopAsk::cluster;
  throw InputError("--gpu-loop: unknown loop '" + name +
                   "' (auto, persistent, graph, generic or cluster)");
}

void SolverCli::resolve() {
  SolveRequest& r = request;
  // "auto" is not a format: the inspector (solver/inspector.hpp) replaces it before the solve.
  r.format_auto = format == "auto";
  r.backend.format = r.format_auto ? Format::csr : parse_format(format);
  r.device_auto = device == "auto";
  r.backend.device = r.device_auto ? Device::omp : parse_device(device);
  r.precond = parse_precond(precond);
  r.precision = precision == "float" ? Precision::single : Precision::double_;
  r.cpu_loop = parse_cpu_loop(cpu_loop);
  r.gpu_loop = parse_gpu_loop(gpu_loop);
  if (rcm && no_rcm) throw InputError("--rcm and --no-rcm contradict each other");
  if (rcm) r.rcm = true;
  if (no_rcm) r.rcm = false;
  r.cg.time_spmv = !no_spmv_timing;
  if (!r.backend.kernel.empty() && (r.backend.device != Device::gpu || r.device_auto))
    throw InputError("--kernel chooses a GPU kernel; it needs --device gpu");
  if (r.format_auto && !r.backend.kernel.empty() && !r.kernel_auto())
    throw InputError(
        "--format auto picks the kernel too: leave out --kernel or give --kernel auto");
}

void add_tuning_options(CLI::App& app, TuningCli& cli, bool distributed) {
  app.add_option("--device-pool", cli.device_pool,
                 "GPU memory from the device's stream-ordered pool (on, the default) or from "
                 "cudaMalloc/cudaFree (off); docs/tuning.md")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--huge-pages", cli.huge_pages,
                 "Ask for transparent huge pages for host arrays of 4 MiB or more (on, the "
                 "default) or not (off); docs/tuning.md")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--device-tally", cli.device_tally,
                 "At exit, print the GPU allocations, frees, copies and syncs and their host time "
                 "to stderr: 0 (the default), 1, or 2 (also each large copy); docs/tuning.md")
      ->check(CLI::IsMember({"0", "1", "2"}));
  if (distributed)
    app.add_option("--gpu-transport", cli.gpu_transport,
                   "Distributed GPU ranks' halo exchange and sums: auto (the default: NCCL, or "
                   "host-staged MPI where ranks share a GPU), nccl or mpi; docs/tuning.md")
        ->check(CLI::IsMember({"auto", "nccl", "mpi"}));
}

void TuningCli::apply() const {
  Tuning t = tuning();
  if (!device_pool.empty()) t.device_pool = device_pool == "on";
  if (!huge_pages.empty()) t.huge_pages = huge_pages == "on";
  if (!device_tally.empty()) t.device_tally = std::stoi(device_tally);
  if (!gpu_transport.empty())
    t.gpu_transport = gpu_transport == "nccl"  ? GpuTransport::nccl
                      : gpu_transport == "mpi" ? GpuTransport::mpi
                                               : GpuTransport::automatic;
  set_tuning(t);
}

}  // namespace cgs
