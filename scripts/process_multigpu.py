#!/usr/bin/env python3
"""The numbers of scripts/multigpu-bench.sh (issue 26) from cgsolve's JSON reports.

  process_multigpu.py row KIND GPUS MATRIX VARIANT REPORT...   one JSON line: medians of a set
  process_multigpu.py agree MATRIX DIR REPORT...               iterations and x against the first
  process_multigpu.py summary ROWS.jsonl AGREE.txt             the tables and the targets

GPUS is a count of MPI ranks (one GPU each) or "single" (cgsolve without mpirun). Per-iteration
times of a distributed run are the slowest rank's: the ranks meet twice an iteration, so the
slowest sets the pace.
"""
import json
import math
import os
import statistics
import sys


def load(paths):
    runs = []
    for p in paths:
        try:
            with open(p) as f:
                runs.append(json.load(f))
        except (OSError, ValueError):
            pass  # a failed run: its stderr is in the log
    return runs


def median(values):
    values = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(values) if values else float("nan")


def slowest(run, key):
    d = run["distributed"]
    its = max(1, run["result"]["iterations"])
    return max(r["seconds"].get(key, 0.0) for r in d["per_rank"]) / its * 1e6


def row(kind, gpus, matrix, variant, paths):
    runs = load(paths)
    out = {"kind": kind, "gpus": gpus, "matrix": matrix, "variant": variant, "runs": len(runs)}
    if not runs:
        return out
    out["us_per_iteration"] = median([r["times"]["per_iteration_s"] * 1e6 for r in runs])
    out["iterations"] = runs[0]["result"]["iterations"]
    out["rows"] = runs[0]["matrix"].get("rows")
    if "distributed" in runs[0]:
        for key in ("local_spmv", "halo_wait", "halo_spmv", "allreduce", "halo_exchange"):
            out[key] = median([slowest(r, key) for r in runs])
        out["halo_bytes_per_product"] = runs[0]["distributed"]["halo_bytes_per_product"]
        out["rows_per_rank"] = max(r["rows"] for r in runs[0]["distributed"]["per_rank"])
        out["loop"] = "distributed"
    else:
        spmv = runs[0].get("spmv", {})
        out["spmv_us"] = median([r["spmv"].get("median_s", float("nan")) * 1e6 for r in runs]) \
            if spmv.get("measured") else float("nan")
        out["rows_per_rank"] = out["rows"]
        out["loop"] = runs[0]["plan"].get("loop", "?")
    return out


def read_vector(path):
    values = []
    with open(path) as f:
        header_done = False
        for line in f:
            if line.startswith("%") or not line.strip():
                continue
            if not header_done:
                header_done = True
                continue
            values.append(float(line.split()[-1]))
    return values


def agree(matrix, directory, paths):
    runs = load(paths)
    lines = []
    if not runs:
        return f"{matrix}: no report"
    ref = runs[0]
    ref_its = ref["result"]["iterations"]
    x_ref_path = os.path.join(directory, "x-single.mtx")
    x_ref = read_vector(x_ref_path) if os.path.exists(x_ref_path) and "150" in matrix else None
    lines.append(f"{matrix} single GPU: {ref_its} iterations, true residual "
                 f"{ref['result']['true_relative_residual']:.2e}, error vs ones "
                 f"{ref['result']['error_vs_ones']:.2e}")
    for r, p in zip(runs[1:], paths[1:]):
        d = r.get("distributed", {})
        g = len(d.get("per_rank", [])) or 1
        variant = d.get("cg_variant", "?")
        its = r["result"]["iterations"]
        text = (f"{matrix} {g} GPU(s) {variant}: {its} iterations ({(its - ref_its) / ref_its:+.1%} "
                f"of the single GPU's), true residual {r['result']['true_relative_residual']:.2e}, "
                f"error vs ones {r['result']['error_vs_ones']:.2e}")
        x_path = os.path.join(directory, f"x-{g}-{variant}.mtx")
        if x_ref is not None and os.path.exists(x_path):
            x = read_vector(x_path)
            diff = math.sqrt(sum((a - b) ** 2 for a, b in zip(x, x_ref)))
            norm = math.sqrt(sum(b * b for b in x_ref))
            text += f", ||x - x_single|| / ||x_single|| = {diff / norm:.2e}"
        lines.append(text)
    return "\n".join(lines)


def summary(rows_path, agree_path):
    rows = []
    if os.path.exists(rows_path):
        with open(rows_path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    by = {(r["kind"], r["gpus"], r["variant"]): r for r in rows if "us_per_iteration" in r}
    print("\n## per CG iteration (Jacobi, median of the processes; slowest rank's split, us)")
    print(f"{'kind':6} {'GPUs':>6} {'variant':17} {'rows/GPU':>10} {'us/it':>9} {'local':>8} "
          f"{'exchange':>9} {'wait':>7} {'halo':>7} {'allred':>7} {'model':>8} {'vs 1 GPU':>9}")
    for (kind, g, variant), r in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] != "single",
                                                                     kv[0][1], kv[0][2])):
        one = by.get((kind, "1", variant))
        model = ratio = float("nan")
        if r["loop"] == "distributed" and one:
            vector = one["us_per_iteration"] - (one["local_spmv"] + one["halo_wait"] +
                                                one["halo_spmv"] + one["allreduce"])
            vector *= r["rows_per_rank"] / max(1, one["rows_per_rank"])
            model = max(r["local_spmv"], r["halo_exchange"]) + r["halo_spmv"] + r["allreduce"] + vector
            if kind == "weak":
                ratio = r["us_per_iteration"] / one["us_per_iteration"]
            else:
                ratio = one["us_per_iteration"] / r["us_per_iteration"]
        get = lambda k: r.get(k, float("nan"))
        print(f"{kind:6} {g:>6} {variant:17} {r['rows_per_rank']:>10} {r['us_per_iteration']:9.1f} "
              f"{get('local_spmv'):8.1f} {get('halo_exchange'):9.1f} {get('halo_wait'):7.1f} "
              f"{get('halo_spmv'):7.1f} {get('allreduce'):7.1f} {model:8.1f} {ratio:9.3f}")
    print("(weak: time ratio to 1 GPU, target <= 1.15 at 2 GPUs, 1/0.85 at 4; strong: speed-up"
          " over 1 GPU, target >= 1.8 at 2; model = max(local, exchange) + halo + allreduce +"
          " the 1-GPU run's vector work per row; target: us/it within 10% of it)")
    if os.path.exists(agree_path):
        print("\n## agreement with the single-GPU solve (tol 1e-8)")
        print(open(agree_path).read().rstrip())


def main(argv):
    if argv[1] == "row":
        print(json.dumps(row(argv[2], argv[3], argv[4], argv[5], argv[6:])))
    elif argv[1] == "agree":
        print(agree(argv[2], argv[3], argv[4:]))
    elif argv[1] == "summary":
        summary(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
