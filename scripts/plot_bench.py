#!/usr/bin/python3
"""Plots and markdown tables from one benchmark folder (spmvbench and cgbench CSV/JSON output).

Usage: scripts/plot_bench.py DIR [--out OUT_DIR] [--publish NAME] [--benchmarks FILE]

Reads DIR/spmv.csv, spmv_matrices.csv, rowlen.csv, spmv_targets.csv, cg.csv, cg_targets.csv and
the JSON files' metadata (any may be missing), writes into DIR:
  rowlen_hist.png              row-length histogram of each matrix
  spmv_gflops_<device>.png     GFLOP/s per format/kernel per matrix, as given vs sorted rows,
                               beside the reference (cuSPARSE / Eigen) of the same run
  spmv_bandwidth_<device>.png  min-bytes bandwidth as a fraction of the measured copy bandwidth
  cg_per_iteration.png         CG time per iteration against n, ours against the baselines
  cg_bandwidth.png             CG minimal bytes per iteration / time as a fraction of copy
  summary.md                   the tables, with links to the figures
(or into OUT_DIR, after copying DIR's files there: for a read-only DIR) and prints a short summary
last. Plots need matplotlib (Debian's python3-matplotlib); without it
only the tables are written.

--publish NAME copies the results (CSV, JSON, PNG, summary.md, logs) to bench/results/NAME/ and
replaces the part of BENCHMARKS.md between "<!-- BEGIN NAME results -->" and
"<!-- END NAME results -->" with the summary, its figure links made relative to the repository.
"""

import argparse
import csv
import json
import math
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT_COLOURS = {"csr": "tab:blue", "coo": "tab:orange", "ell": "tab:green", "hll": "tab:purple"}
REFERENCE_COLOUR = "0.45"


# --------------------------------------------------------------------------------------------
# Reading

def number(text):
    """CSV cell -> int, float, bool or the text itself ('' -> None)."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [{k: number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def read_meta(path):
    if not os.path.exists(path):
        return {}, []
    with open(path) as f:
        doc = json.load(f)
    return doc.get("meta", {}), doc.get("devices", [])


def load(folder):
    data = {name: read_csv(os.path.join(folder, name + ".csv"))
            for name in ("spmv", "spmv_matrices", "rowlen", "spmv_targets", "cg", "cg_targets")}
    data["spmv_meta"], data["spmv_devices"] = read_meta(os.path.join(folder, "spmv.json"))
    data["cg_meta"], data["cg_devices"] = read_meta(os.path.join(folder, "cg.json"))
    return data


def short(label):
    return label[4:] if label.startswith("gen:") else label


def slug(device):
    return re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")


def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def fmt(x, digits=3):
    """Like the C++ side's format_number: 3 significant digits, '-' for no value."""
    if not finite(x):
        return "-"
    if x != 0 and (abs(x) >= 1e7 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    exponent = 0 if x == 0 else math.floor(math.log10(abs(x)))
    return f"{x:.{max(0, digits - 1 - exponent)}f}"


def percent(fraction):
    return fmt(100 * fraction) if finite(fraction) else "-"


def devices_of(rows):
    seen = []
    for r in rows:
        if r["device"] not in seen:
            seen.append(r["device"])
    return seen


def ours_key(r):
    return (r["format"], r["kernel"])


def best_by(rows, key, value, want_min=True):
    """For each key(r): the row with the smallest (or largest) finite value(r)."""
    best = {}
    for r in rows:
        v = value(r)
        if not finite(v):
            continue
        k = key(r)
        if k not in best or (v < value(best[k]) if want_min else v > value(best[k])):
            best[k] = r
    return best


# --------------------------------------------------------------------------------------------
# Plots

def grid(plt, count, width=3.3, height=2.6, columns=6):
    columns = max(1, min(columns, count))
    rows = max(1, math.ceil(count / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
    for ax in axes.flat[count:]:
        ax.axis("off")
    return fig, list(axes.flat)


def plot_rowlen(plt, np, data, folder):
    stats = {m["matrix"]: m for m in data["spmv_matrices"]}
    by_matrix = {}
    for r in data["rowlen"]:
        by_matrix.setdefault(r["matrix"], []).append((r["row_length"], r["rows"]))
    if not by_matrix:
        return None
    names = sorted(by_matrix, key=lambda m: stats.get(m, {}).get("nnz", 0))
    fig, axes = grid(plt, len(names))
    for ax, name in zip(axes, names):
        lengths = np.array([l for l, _ in by_matrix[name]], dtype=float)
        counts = np.array([c for _, c in by_matrix[name]], dtype=float)
        if lengths.max() <= 64:
            ax.bar(lengths, counts, width=0.8, color="tab:blue")
        else:  # power-law rows: logarithmic bins
            edges = np.unique(np.geomspace(max(1, lengths.min()), lengths.max() + 1, 30).astype(int))
            hist, edges = np.histogram(lengths, bins=edges, weights=counts)
            ax.bar(edges[:-1], hist, width=np.diff(edges), align="edge", color="tab:blue")
            ax.set_xscale("log")
        if counts.max() / max(1, counts.min()) > 100:
            ax.set_yscale("log")
        s = stats.get(name, {})
        ax.set_title(f"{short(name)}\nn={s.get('rows', '?')}, mean {fmt(s.get('mean_row_length'))}, "
                     f"dev {fmt(s.get('row_length_avg_deviation_pct'), 2)}%", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.supxlabel("nonzeros in the row")
    fig.supylabel("rows")
    fig.suptitle("Row-length histograms", fontsize=12)
    fig.tight_layout()
    path = os.path.join(folder, "rowlen_hist.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_spmv_gflops(plt, data, folder, device):
    rows = [r for r in data["spmv"] if r["device"] == device]
    names = sorted({r["matrix"] for r in rows}, key=lambda m: next(r["nnz"] for r in rows if r["matrix"] == m))
    fig, axes = grid(plt, len(names), width=3.6, height=3.0)
    for ax, name in zip(axes, names):
        mine = [r for r in rows if r["matrix"] == name]
        keys, labels = [], {}
        for r in mine:
            k = ("ref", "") if r["role"] == "reference" else ours_key(r)
            if k not in keys:
                keys.append(k)
            if r["check"] != "SKIP":
                labels[k] = "ref " + r["kernel"] if r["role"] == "reference" else r["backend"]
        values = []
        for i, k in enumerate(keys):
            for sorted_rows, offset in ((False, -0.2), (True, 0.2)):
                match = [r for r in mine if r["sorted"] == sorted_rows and
                         (("ref", "") if r["role"] == "reference" else ours_key(r)) == k]
                if not match or not finite(match[0]["gflops"]):
                    continue
                r = match[0]
                colour = REFERENCE_COLOUR if k[0] == "ref" else FORMAT_COLOURS.get(k[0], "tab:gray")
                ax.barh(i + offset, r["gflops"], height=0.4, color=colour,
                        hatch="///" if sorted_rows else None, alpha=0.6 if sorted_rows else 1.0,
                        edgecolor="red" if r["check"] == "FAIL" else "white", linewidth=0.5)
                ax.text(r["gflops"], i + offset, " " + fmt(r["gflops"]), fontsize=5, va="center")
                values.append(r["gflops"])
        if values and max(values) > 30 * min(values):  # a stalled or tiny row stays visible
            ax.set_xscale("log")
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels([labels.get(k, "/".join(k)) for k in keys], fontsize=6)
        ax.invert_yaxis()
        ax.tick_params(axis="x", labelsize=7)
        nnz = mine[0]["nnz"]
        ax.set_title(f"{short(name)} ({fmt(nnz / 1e6)}M nnz)" if nnz >= 1e5 else f"{short(name)} ({nnz} nnz)",
                     fontsize=8)
    fig.supxlabel("GFLOP/s (2 nnz / median time); solid: rows as given, hatched: rows sorted by length; "
                  "grey: reference; red edge: FAIL", fontsize=9)
    fig.suptitle(f"SpMV on {device}", fontsize=12)
    fig.tight_layout()
    path = os.path.join(folder, f"spmv_gflops_{slug(device)}.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_spmv_bandwidth(plt, data, folder, device):
    rows = [r for r in data["spmv"] if r["device"] == device and r["check"] == "PASS"]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for fmt_name, colour in FORMAT_COLOURS.items():
        pts = [r for r in rows if r["role"] == "ours" and r["format"] == fmt_name]
        ax.scatter([r["nnz"] for r in pts], [r["bw_fraction"] for r in pts], s=10, color=colour,
                   alpha=0.35, label=f"{fmt_name} (every kernel, both orders)")
    best = best_by([r for r in rows if r["role"] == "ours"], lambda r: r["matrix"],
                   lambda r: r["bw_fraction"], want_min=False)
    ref = best_by([r for r in rows if r["role"] == "reference"], lambda r: r["matrix"],
                  lambda r: r["bw_fraction"], want_min=False)
    xs = sorted(best.values(), key=lambda r: r["nnz"])
    ax.plot([r["nnz"] for r in xs], [r["bw_fraction"] for r in xs], "o-", color="tab:red", ms=5,
            label="best of ours per matrix")
    xr = sorted(ref.values(), key=lambda r: r["nnz"])
    ax.plot([r["nnz"] for r in xr], [r["bw_fraction"] for r in xr], "s--", color="black", ms=4,
            label="reference (" + ("cuSPARSE CSR" if device == "gpu" else "Eigen") + ")")
    ax.axhline(1.0, color="0.5", lw=0.8)
    if device == "gpu":
        ax.axhline(0.85, color="tab:red", lw=0.8, ls=":", label="target: 85% for >= 10M nnz")
        ax.axvline(1e7, color="tab:red", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nonzeros")
    ax.set_ylabel("min-bytes bandwidth / copy bandwidth")
    copy = next((r["copy_gbps"] for r in rows if finite(r["copy_gbps"])), float("nan"))
    ax.set_title(f"SpMV on {device}: fraction of the measured copy bandwidth ({fmt(copy)} GB/s); "
                 "> 1 means the matrix sits in cache", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(folder, f"spmv_bandwidth_{slug(device)}.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_cg(plt, data, folder, value, want_min, ylabel, filename, title):
    rows = [r for r in data["cg"] if r["check"] == "PASS"]
    devices = devices_of(rows)
    if not devices:
        return None
    fig, axes = plt.subplots(1, len(devices), figsize=(7.5 * len(devices), 5.5), squeeze=False)
    for ax, device in zip(axes.flat, devices):
        mine = [r for r in rows if r["device"] == device]
        ours = [r for r in mine if r["role"] == "ours"]
        for fmt_name, colour in FORMAT_COLOURS.items():
            pts = [r for r in ours if r["format"] == fmt_name]
            ax.scatter([r["n"] for r in pts], [value(r) for r in pts], s=10, color=colour, alpha=0.35,
                       label=f"{fmt_name} (every kernel)")
        best = sorted(best_by(ours, lambda r: r["matrix"], value, want_min).values(), key=lambda r: r["n"])
        base = sorted(best_by([r for r in mine if r["role"] == "baseline"], lambda r: r["matrix"], value,
                              want_min).values(), key=lambda r: r["n"])
        ax.plot([r["n"] for r in best], [value(r) for r in best], "o", color="tab:red", ms=6,
                label="best of ours per matrix")
        base_name = "sample-style cuSPARSE + cuBLAS" if device == "gpu" else "Eigen ConjugateGradient"
        ax.plot([r["n"] for r in base], [value(r) for r in base], "s", color="black", ms=5, mfc="none",
                label=base_name)
        if device == "gpu" and "us" in ylabel:
            ax.plot([15000], [8], "*", color="tab:green", ms=14, label="target: 8 us at n = 15,000")
        if device == "gpu" and "fraction" in ylabel:
            ax.axhline(1 / 1.15, color="tab:green", ls=":", label="target at n ~ 9M: 1/1.15")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (rows)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} on {device}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(folder, filename)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def make_plots(data, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        print("plot_bench: matplotlib is not installed here (Debian: apt-get install python3-matplotlib);"
              " tables only. Run this script again on a machine with it.", file=sys.stderr)
        return []
    paths = [plot_rowlen(plt, np, data, folder)]
    for device in devices_of(data["spmv"]):
        paths.append(plot_spmv_gflops(plt, data, folder, device))
        paths.append(plot_spmv_bandwidth(plt, data, folder, device))
    paths.append(plot_cg(plt, data, folder, lambda r: r["per_iter_us"], True, "us per iteration",
                         "cg_per_iteration.png", "CG time per iteration"))
    paths.append(plot_cg(plt, data, folder, lambda r: r["bw_fraction"], False,
                         "min bytes per iteration / time / copy bandwidth (fraction)",
                         "cg_bandwidth.png", "CG bandwidth"))
    return [p for p in paths if p]


# --------------------------------------------------------------------------------------------
# Tables

def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def run_section(data):
    meta = data["spmv_meta"] or data["cg_meta"]
    if not meta:
        return ""
    lines = [f"- date: {meta.get('date', '?')}, commit `{meta.get('commit', '?')}`",
             f"- CPU: {meta.get('cpu', '?')} ({meta.get('cpu_hardware_threads', '?')} hardware threads)",
             f"- GPU: {meta.get('gpu', '?')}"]
    devices = {d["device"]: d for d in data["spmv_devices"] + data["cg_devices"]}
    for d in devices.values():
        lines.append(f"- copy bandwidth {d['device']}: {fmt(d['copy_gbps'])} GB/s ({d['copy_method']})")
    for name in ("spmv", "cg"):
        if data[name + "_meta"]:
            lines.append(f"- command: `{data[name + '_meta']['command']}`")
    return "\n".join(lines)


def matrices_section(data):
    rows = sorted(data["spmv_matrices"], key=lambda m: m["nnz"])
    return md_table(["matrix", "rows", "nnz", "row length min / mean / max", "mean deviation %"],
                    [[short(m["matrix"]), m["rows"], m["nnz"],
                      f"{m['min_row_length']} / {fmt(m['mean_row_length'])} / {m['max_row_length']}",
                      fmt(m["row_length_avg_deviation_pct"], 2)] for m in rows])


def spmv_section(data, device, full):
    rows = [r for r in data["spmv"] if r["device"] == device]
    names = sorted({r["matrix"] for r in rows}, key=lambda m: next(r["nnz"] for r in rows if r["matrix"] == m))
    best = best_by([r for r in rows if r["role"] == "ours" and r["check"] == "PASS"],
                   lambda r: r["matrix"], lambda r: r["median_us"])
    ref = best_by([r for r in rows if r["role"] == "reference" and r["check"] == "PASS"],
                  lambda r: r["matrix"], lambda r: r["median_us"])
    fails = [r for r in rows if r["check"] == "FAIL"]
    table = []
    for m in names:
        b, f = best.get(m), ref.get(m)
        if not b or not f:
            continue
        table.append([short(m), b["nnz"], f"{f['kernel']}{' (sorted)' if f['sorted'] else ''}",
                      fmt(f["median_us"]), percent(f["bw_fraction"]),
                      f"{b['backend']}{' (sorted)' if b['sorted'] else ''}", fmt(b["median_us"]),
                      fmt(b["gflops"]), fmt(b["gbps"]), percent(b["bw_fraction"]),
                      fmt(f["median_us"] / b["median_us"])])
    out = [md_table(["matrix", "nnz", "reference", "ref µs", "ref % copy", "best of ours", "µs", "GFLOP/s",
                     "GB/s", "% copy", "× ref"], table)]
    if not full:
        return "\n".join(out)
    out.append("\n<details><summary>every row (" + str(len(rows)) + ")</summary>\n")
    out.append(md_table(["matrix", "sorted", "backend", "median µs", "GFLOP/s", "GB/s", "% copy", "× ref",
                         "check"],
                        [[short(r["matrix"]), "yes" if r["sorted"] else "no",
                          ("**ref** " + r["backend"]) if r["role"] == "reference" else r["backend"],
                          fmt(r["median_us"]), fmt(r["gflops"]), fmt(r["gbps"]), percent(r["bw_fraction"]),
                          fmt(r["speedup_vs_ref"]), r["check"]]
                         for r in rows]))
    out.append("\n</details>")
    if fails:
        out.append(f"\n**{len(fails)} FAILED products**: " + ", ".join(
            f"{short(r['matrix'])} {r['backend']}" for r in fails))
    return "\n".join(out)


def cg_section(data, device, full):
    rows = [r for r in data["cg"] if r["device"] == device]
    names = sorted({r["matrix"] for r in rows}, key=lambda m: next(r["n"] for r in rows if r["matrix"] == m))
    best = best_by([r for r in rows if r["role"] == "ours" and r["check"] == "PASS"],
                   lambda r: r["matrix"], lambda r: r["per_iter_us"])
    base = best_by([r for r in rows if r["role"] == "baseline"], lambda r: r["matrix"],
                   lambda r: r["per_iter_us"])
    table = []
    for m in names:
        b, f = best.get(m), base.get(m)
        if not b or not f:
            continue
        table.append([short(m), b["n"], b["nnz"], b["iterations"], fmt(f["per_iter_us"]),
                      f"{b['solver']}{' (sorted)' if b['sorted'] else ''}", fmt(b["per_iter_us"]),
                      fmt(b["solve_ms"]), fmt(f["per_iter_us"] / b["per_iter_us"]),
                      percent(b["bw_fraction"]), fmt(b["true_rel_residual"], 2)])
    baseline = "sample-style µs/iter" if device == "gpu" else "Eigen CG µs/iter"
    out = [md_table(["matrix", "n", "nnz", "iterations", baseline, "best of ours", "µs/iter", "total ms",
                     "× baseline", "% copy (min bytes)", "‖b−Ax‖/‖b‖"], table)]
    if not full:
        return "\n".join(out)
    out.append("\n<details><summary>every row (" + str(len(rows)) + ")</summary>\n")
    out.append(md_table(["matrix", "sorted", "solver", "iterations", "µs/iter", "total ms", "setup ms",
                         "% copy", "× baseline", "residual", "check"],
                        [[short(r["matrix"]), "yes" if r["sorted"] else "no",
                          ("**base** " + r["solver"]) if r["role"] == "baseline" else
                          ("**ref** " + r["solver"]) if r["role"] == "reference" else r["solver"],
                          r["iterations"], fmt(r["per_iter_us"]), fmt(r["solve_ms"]), fmt(r["setup_ms"]),
                          percent(r["bw_fraction"]), fmt(r["speedup_vs_baseline"]), fmt(r["true_rel_residual"], 2), r["check"]]
                         for r in rows]))
    out.append("\n</details>")
    return "\n".join(out)


def auto_rows(data, device):
    return [r for r in data["cg"] if r["device"] == device and r["role"] == "auto"]


def auto_count(rows):
    """'k of N within 10%' over the auto rows that could be judged."""
    judged = [r for r in rows if r.get("within_10pct") in ("yes", "no")]
    within = sum(1 for r in judged if r["within_10pct"] == "yes")
    return f"{within} of {len(judged)} within 10%"


def auto_section(data, device):
    """cgbench's --format auto rows: what the inspector picked, its time per iteration against
    the best combination measured in the same run, and what the inspector cost."""
    rows = sorted(auto_rows(data, device), key=lambda r: r["n"])
    if not rows:
        return ""
    table = md_table(
        ["matrix", "n", "picked", "µs/iter", "best measured", "µs/iter", "auto / best", "pick / best",
         "inspector ms", "% of the solve", "within 10%"],
        [[short(r["matrix"]), r["n"], r["auto_picks"] or "-", fmt(r["per_iter_us"]), r["best_solver"] or "-",
          fmt(r["best_per_iter_us"]), fmt(r["auto_vs_best"]), fmt(r["pick_vs_best"]), fmt(r["inspector_ms"]),
          fmt(r["inspector_pct"]), r["within_10pct"] or "-"] for r in rows])
    return (table + f"\n\n`--format auto` on {device}: {auto_count(rows)} of the best measured combination "
            "(time per CG iteration; *auto / best*: the auto solve itself, *pick / best*: the picked "
            "combination as measured in its own row; % of the solve: the inspector against the "
            f"{rows[0]['iterations']}-iteration solve).")


def targets_section(data):
    out = []
    if data["spmv_targets"]:
        out.append(md_table(
            ["matrix", "nnz", "best kernel", "µs", "× cuSPARSE", "% copy", "≥ cuSPARSE", "≥ 85% (≥ 10M nnz)",
             "≥ 1.35× (3D Poisson)"],
            [[short(t["matrix"]), t["nnz"], t["best_kernel"], fmt(t["best_us"]), fmt(t["speedup_vs_cusparse"]),
              percent(t["best_bw_fraction"]), t["goal_not_slower"], t["goal_bw_85pct"],
              t["goal_1.35x_poisson3d"]] for t in data["spmv_targets"]]))
    if data["cg_targets"]:
        out.append(md_table(
            ["matrix", "device", "n", "best", "µs/iter", "baseline µs/iter", "× baseline", "% copy", "goal",
             "status"],
            [[short(t["matrix"]), t["device"], t["n"], t["best_solver"], fmt(t["per_iter_us"]),
              fmt(t["baseline_per_iter_us"]), fmt(t["speedup_vs_baseline"]), percent(t["bw_fraction"]),
              t["goal"], t["status"]] for t in data["cg_targets"]]))
    return "\n\n".join(out)


def summary_markdown(data, images, image_prefix, full=True):
    """The tables and figures; `full` adds every row of every table in fold-outs."""
    parts = []
    run = run_section(data)
    if run:
        parts.append("#### Run\n\n" + run)
    if data["spmv_matrices"]:
        parts.append("#### Matrices\n\n" + matrices_section(data))
    targets = targets_section(data)
    if targets:
        parts.append("#### Where the targets stand (issue 4, §6)\n\n" + targets)
    for device in devices_of(data["spmv"]):
        parts.append(f"#### SpMV on {device}\n\n" + spmv_section(data, device, full))
    for device in devices_of(data["cg"]):
        parts.append(f"#### CG on {device}\n\n" + cg_section(data, device, full))
    for device in devices_of(data["cg"]):
        section = auto_section(data, device)
        if section:
            parts.append(f"#### --format auto on {device}\n\n" + section)
    if images:
        figures = "\n\n".join(f"![{os.path.basename(p)}]({image_prefix}{os.path.basename(p)})" for p in images)
        parts.append("#### Figures\n\n" + figures)
    return "\n\n".join(parts) + "\n"


def short_summary(data):
    lines = []
    for device in devices_of(data["spmv"]):
        rows = [r for r in data["spmv"] if r["device"] == device and r["check"] == "PASS"]
        best = best_by([r for r in rows if r["role"] == "ours"], lambda r: r["matrix"], lambda r: r["median_us"])
        ref = best_by([r for r in rows if r["role"] == "reference"], lambda r: r["matrix"],
                      lambda r: r["median_us"])
        ratios = [ref[m]["median_us"] / best[m]["median_us"] for m in best if m in ref]
        fails = sum(1 for r in data["spmv"] if r["device"] == device and r["check"] == "FAIL")
        if ratios:
            lines.append(f"spmv {device:8s}: {len(best)} matrices, best of ours vs reference x{fmt(min(ratios))} "
                         f"(worst) .. x{fmt(max(ratios))} (best), geometric mean "
                         f"x{fmt(math.exp(sum(map(math.log, ratios)) / len(ratios)))}; {fails} FAIL")
    for device in devices_of(data["cg"]):
        rows = [r for r in data["cg"] if r["device"] == device and r["check"] == "PASS"]
        best = best_by([r for r in rows if r["role"] == "ours"], lambda r: r["matrix"], lambda r: r["per_iter_us"])
        base = best_by([r for r in rows if r["role"] == "baseline"], lambda r: r["matrix"],
                       lambda r: r["per_iter_us"])
        ratios = [base[m]["per_iter_us"] / best[m]["per_iter_us"] for m in best if m in base]
        fails = sum(1 for r in data["cg"] if r["device"] == device and r["check"] == "FAIL")
        if ratios:
            lines.append(f"cg   {device:8s}: {len(best)} matrices, best of ours vs baseline x{fmt(min(ratios))} "
                         f".. x{fmt(max(ratios))}, geometric mean "
                         f"x{fmt(math.exp(sum(map(math.log, ratios)) / len(ratios)))}; {fails} FAIL")
    for device in devices_of(data["cg"]):
        rows = auto_rows(data, device)
        shares = sorted(r["inspector_pct"] for r in rows if finite(r.get("inspector_pct")))
        if rows:
            lines.append(f"auto {device:8s}: {auto_count(rows)} of the best measured combination per iteration"
                         + (f"; inspector median {fmt(shares[len(shares) // 2])}% of the solve" if shares else ""))
    for t in data["spmv_targets"]:
        status = [t["goal_not_slower"], t["goal_bw_85pct"], t["goal_1.35x_poisson3d"]]
        lines.append(f"target spmv {short(t['matrix']):24s} x{fmt(t['speedup_vs_cusparse'])} cuSPARSE, "
                     f"{percent(t['best_bw_fraction'])}% copy: " + ", ".join(s for s in status if s != "n/a"
                                                                              and not s.startswith("n/a")))
    cpu_goals = {}
    for t in data["cg_targets"]:
        if t["device"] != "gpu":  # one line per device: on how many matrices it is met
            cpu_goals.setdefault((t["device"], t["goal"]), []).append(t)
            continue
        lines.append(f"target cg   {short(t['matrix']):24s} {t['device']:7s} {fmt(t['per_iter_us'])} us/iter "
                     f"(baseline {fmt(t['baseline_per_iter_us'])}), {percent(t['bw_fraction'])}% copy: "
                     f"{t['goal']}: {t['status']}")
    for (device, goal), targets in cpu_goals.items():
        met = [short(t["matrix"]) for t in targets if t["status"] == "met"]
        lines.append(f"target cg   {device}: {goal}: met on {len(met)} of {len(targets)} matrices"
                     + (f" ({', '.join(met)})" if met else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Publishing into the repository

def publish(folder, name, data, images, benchmarks):
    """Results into bench/results/NAME; BENCHMARKS.md gets the per-matrix tables and the figures,
    and links to the full summary (every row) beside the CSV files."""
    target = os.path.join(ROOT, "bench", "results", name)
    os.makedirs(target, exist_ok=True)
    for entry in sorted(os.listdir(folder)):
        if entry.endswith((".csv", ".json", ".png", ".txt", ".md")):
            shutil.copy2(os.path.join(folder, entry), os.path.join(target, entry))
    relative = os.path.relpath(target, os.path.dirname(os.path.abspath(benchmarks)))
    summary = summary_markdown(data, images, relative + "/", full=False)
    summary += (f"\nEvery row of every table: [{relative}/summary.md]({relative}/summary.md); the "
                f"data: `{relative}/*.csv` and `*.json`; the programs' own tables: "
                f"[spmvbench.txt]({relative}/spmvbench.txt), [cgbench.txt]({relative}/cgbench.txt).\n")
    with open(benchmarks) as f:
        text = f.read()
    begin, end = f"<!-- BEGIN {name} results -->", f"<!-- END {name} results -->"
    if begin not in text or end not in text:
        sys.exit(f"plot_bench: {benchmarks} has no '{begin}' ... '{end}' markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(benchmarks, "w") as f:
        f.write(head + begin + "\n\n" + summary + "\n" + end + tail)
    print(f"plot_bench: results copied to {os.path.relpath(target, ROOT)}/, {benchmarks} updated")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--out", help="work in this folder (DIR's files are copied there first)")
    parser.add_argument("--publish", metavar="NAME", help="copy into bench/results/NAME and update BENCHMARKS.md")
    parser.add_argument("--benchmarks", default=os.path.join(ROOT, "BENCHMARKS.md"))
    args = parser.parse_args()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for entry in os.listdir(args.folder):
            source = os.path.join(args.folder, entry)
            if os.path.isfile(source):
                shutil.copyfile(source, os.path.join(args.out, entry))  # not copy2: DIR may be read-only
        args.folder = args.out
    data = load(args.folder)
    if not data["spmv"] and not data["cg"]:
        sys.exit(f"plot_bench: no spmv.csv or cg.csv in {args.folder}")
    images = make_plots(data, args.folder)
    summary_path = os.path.join(args.folder, "summary.md")
    with open(summary_path, "w") as f:
        f.write(summary_markdown(data, images, "./"))
    if args.publish:
        publish(args.folder, args.publish, data, images, args.benchmarks)
    print(f"plot_bench: {len(images)} figure(s) and summary.md in {args.folder}")
    print(short_summary(data))


if __name__ == "__main__":
    main()
