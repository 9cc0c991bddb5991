#include "cli_options.hpp"

namespace cgs {

void add_solver_options(CLI::App& app, SolverCli& cli) {
  SolveOptions& o = cli.options;
  app.add_option("--format", cli.format,
                 "Sparse format: coo, csr, ell, hll or auto (time a few candidates on the matrix "
                 "and take the fastest; auto also decides --sort-rows and, on the GPU, --kernel)")
      ->check(CLI::IsMember({"coo", "csr", "ell", "hll", "auto"}))
      ->capture_default_str();
  app.add_flag("--sort-rows", o.sort_rows,
               "Sort rows by length (descending) before the solve; x comes back in the "
               "original order");
  app.add_flag("--rcm", o.reorder_rcm,
               "Renumber rows and columns by reverse Cuthill-McKee first (rows that share "
               "entries get nearby numbers: fewer cache lines per product, less traffic between "
               "threads); x comes back in the original order");
  app.add_option("--device", cli.device,
                 "cpu (OpenMP), serial (plain loops, one thread) or gpu (CUDA)")
      ->check(CLI::IsMember({"cpu", "omp", "serial", "gpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--threads", o.backend.threads, "OpenMP threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--precond", cli.precond, "Preconditioner: none or jacobi")
      ->check(CLI::IsMember({"none", "jacobi"}))
      ->capture_default_str();
  app.add_option("--tol", o.cg.tol, "Stop when ||r|| <= tol * ||b||")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--atol", o.cg.atol, "... or when ||r|| <= atol")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-iters", o.cg.max_iters, "Iteration limit (0 = 10 * n)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--check-every", o.cg.check_every,
                 "Read the residual back every k iterations (0 = device default: 1 on CPU, "
                 "16 on GPU); at most k-1 extra iterations run")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--precision", cli.precision,
                 "Arithmetic of the matrix and vectors: double or "
                 "float (reductions are always accumulated in double)")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  app.add_option("--hack-size", o.backend.hack_size, "Rows per hack of the HLL format")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-ell-fill", o.backend.max_ell_fill,
                 "Refuse ELL when its storage exceeds this multiple of CSR's")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--cpu-loop", cli.cpu_loop,
                 "CPU CG loop (cpu and serial devices): fused (two passes over the rows per "
                 "iteration; on cpu one thread team for the whole solve, or one thread where "
                 "that is faster: small systems, and in between timed on the system itself), "
                 "fused-serial or fused-team (that one, as asked), or generic (the "
                 "device-independent loop, a call per operation, SpMV timed)")
      ->check(CLI::IsMember({"fused", "fused-serial", "fused-team", "generic"}))
      ->capture_default_str();
  app.add_option("--gpu-loop", cli.gpu_loop,
                 "GPU CG loop: persistent (one cooperative kernel for the whole solve), graph "
                 "(fused kernels replayed as a CUDA graph), generic (separate kernels, SpMV timed) "
                 "or auto (the fastest measured); kernels without a row function (CSR vector, "
                 "COO, cuSPARSE) always run generic")
      ->check(CLI::IsMember({"auto", "persistent", "graph", "generic"}))
      ->capture_default_str();
  app.add_option("--kernel", o.backend.kernel,
                 "GPU kernel variant of the format (see README; empty = the format's default; "
                 "auto = the fastest measured on the matrix)");
  app.add_option("--block-size", o.backend.block_size, "GPU threads per block (0 = default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--blocks", o.backend.blocks, "GPU blocks for the COO kernel (0 = default)")
      ->check(CLI::NonNegativeNumber);
}

void SolverCli::resolve() {
  // "auto" is not a format: the inspector (solver/autotune.hpp) replaces it before the solve.
  options.auto_format = format == "auto";
  options.backend.format = options.auto_format ? Format::csr : parse_format(format);
  options.backend.device = parse_device(device);
  options.preconditioner = precond == "jacobi" ? Preconditioner::jacobi : Preconditioner::none;
  options.precision = precision == "float" ? Precision::single : Precision::double_;
  options.fused_cpu_loop = cpu_loop != "generic";
  options.fused_cpu_choice = cpu_loop == "fused-serial" ? FusedCpuLoop::serial
                             : cpu_loop == "fused-team" ? FusedCpuLoop::team
                                                        : FusedCpuLoop::automatic;
  options.gpu_loop = parse_gpu_loop(gpu_loop);
  if (!options.backend.kernel.empty() && options.backend.device != Device::gpu)
    throw InputError("--kernel chooses a GPU kernel; it needs --device gpu");
  options.auto_kernel = options.backend.kernel == "auto";
  if (options.auto_kernel) options.backend.kernel.clear();
  if (options.auto_format && !options.backend.kernel.empty())
    throw InputError(
        "--format auto picks the kernel too: leave out --kernel or give --kernel auto");
}

}  // namespace cgs
