#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for cgsolve and builds it into build/.
# Idempotent: installs only missing packages and rebuilds only what changed.
# CUDA is used when nvcc is on PATH or in /usr/local/cuda/bin; without it the CPU paths build.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libeigen3-dev libcli11-dev doctest-dev nlohmann-json3-dev zlib1g-dev
  libsuitesparse-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Optional: MPI for the distributed solve, METIS for --partition metis (docs/DISTRIBUTED.md),
# hypre (built with MPI) for hyprebench, the reference AMG (bench/hypre). Without them cgsolve
# builds and runs as one process; a failure to install them is not fatal.
optional=(libopenmpi-dev openmpi-bin libmetis-dev libhypre-dev)
missing=()
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing the optional ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null ||
    echo "setup: could not install ${missing[*]}; building without them"
fi

# NCCL for GPU ranks: the CUDA toolkit's, or the nvidia-nccl Python package's (GPU hosts).
if [[ -z "${NCCL_ROOT:-}" ]] && nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))" 2>/dev/null); then
  export NCCL_ROOT="$nccl"
fi

# Optional: matplotlib for scripts/plot_study.py (maps of a study) and plot_bench.py. A failure
# here does not stop the setup; those scripts then say what is missing.
if ! python3 -c "import matplotlib" 2>/dev/null; then
  echo "setup: installing python3-matplotlib (optional, for scripts/plot_study.py)"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    python3-matplotlib >/dev/null; } ||
    echo "setup: python3-matplotlib not installed (optional): scripts/plot_study.py will not run"
fi

# Optional: the Python modules (docs/python.md: pybind11 and Python's headers to build them,
# pytest and pandas for them and their tests; NumPy and SciPy come with python3-scipy). Without
# them CMake says "Python modules OFF" and builds the rest.
optional=(python3-dev pybind11-dev python3-scipy python3-pandas python3-pytest)
missing=()
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing the optional ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null ||
    echo "setup: could not install ${missing[*]}; building without the Python modules"
fi

if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${CGSOLVE_CMAKE_ARGS:-} >build-configure.log ||
  { cat build-configure.log; exit 1; }
grep -E "cgsolve: CUDA" build-configure.log || true
cmake --build build -j"$(nproc)"
