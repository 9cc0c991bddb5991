#!/usr/bin/env bash
# Reproduces the EPANET GPU study's table from our own runs: for each network, netsolve exports the
# linear system of every gradient-algorithm trial, then cgsolve solves each of them with every
# format, device, and sorted/unsorted rows, and the table (CSV on stdout) gives
#   network, order, nnz, % nonzero, format, device, sorted, systems, mean CG iterations,
#   total solve time (s, summed over the trials), time per iteration (s)
#
# Usage: scripts/study-table.sh [--build DIR] [--devices "cpu gpu"] [--formats "coo csr ell hll"]
#                               [--tol 1e-10] [--max-iters N] NETWORK.inp ...
# Needs netsolve and cgsolve built in DIR (default: build). Iteration counts depend only on the
# tolerance; CG runs with Jacobi preconditioning, as the study did.
set -euo pipefail

build=build
devices="cpu"
formats="coo csr ell hll"
tol=1e-10
max_iters=1000000
networks=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --formats) formats=$2; shift 2 ;;
    --tol) tol=$2; shift 2 ;;
    --max-iters) max_iters=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) networks+=("$1"); shift ;;
  esac
done
[[ ${#networks[@]} -gt 0 ]] || { echo "usage: $0 [options] NETWORK.inp ..." >&2; exit 2; }
netsolve=$build/app/netsolve
cgsolve=$build/app/cgsolve
for tool in "$netsolve" "$cgsolve"; do
  [[ -x $tool ]] || { echo "$0: $tool not found (build it first)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "network,order,nnz,percent_nonzero,format,device,sorted,systems,mean_cg_iterations,total_solve_s,per_iteration_s"
for inp in "${networks[@]}"; do
  name=$(basename "$inp" .inp)
  dir=$work/$name
  mkdir -p "$dir"
  # The systems do not depend on the device; serial is the fast one at these sizes.
  "$netsolve" --network "$inp" --device serial --export-systems "$dir" --quiet || true
  for device in $devices; do
    for format in $formats; do
      for sorted in no yes; do
        sort_flag=()
        [[ $sorted == yes ]] && sort_flag=(--sort-rows)
        for matrix in "$dir"/"$name"_trial*[0-9].mtx; do
          "$cgsolve" --matrix "$matrix" --rhs "${matrix%.mtx}_b.mtx" --format "$format" \
            --device "$device" --precond jacobi --tol "$tol" --max-iters "$max_iters" \
            "${sort_flag[@]}" --quiet --report "${matrix%.mtx}.$device.$format.$sorted.json" || true
        done
      done
    done
  done
  python3 - "$dir" "$name" "$devices" "$formats" <<'PY'
import glob, json, sys
folder, name, devices, formats = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
for device in devices:
    for fmt in formats:
        for sorted_rows in ("no", "yes"):
            runs = [json.load(open(f)) for f in sorted(glob.glob(f"{folder}/{name}_trial*.{device}.{fmt}.{sorted_rows}.json"))]
            if not runs:
                continue
            order, nnz = runs[0]["matrix"]["rows"], runs[0]["matrix"]["nnz"]
            iterations = [r["result"]["iterations"] for r in runs]
            solve = sum(r["times"]["solve_s"] for r in runs)
            per_iteration = solve / max(1, sum(iterations))
            print(f"{name},{order},{nnz},{100.0 * nnz / order / order:.4f},{fmt},{device},{sorted_rows},"
                  f"{len(runs)},{sum(iterations) / len(runs):.1f},{solve:.6g},{per_iteration:.6g}")
PY
done
