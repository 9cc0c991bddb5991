#!/usr/bin/env bash
# Issue 21 item 4: `--precond auto`'s whole cost (its probe + the chosen candidate's set-up + the
# solve) against the best fixed candidate's, on the five EPANET systems of DATA and on the
# matrices in data/matrices (b = A * 1), in one call on one machine (BENCHMARKS §10l).
# Time to solution = inspect + reorder + format + preconditioner + upload + solve from cgsolve's
# JSON report (file read excluded, as bench/scripts/precond-gpu-study.sh), the median of RUNS runs; a
# candidate that does not converge is not a "best fixed" one. Also runs the GPU tests of auto.
# Usage: [SKIP_BUILD=1] [BUILD=build-gpu] [OUT=dir] [RUNS=3] [DEVICE=gpu] [DEVICES="cpu gpu"] [TOL=1e-10]
#        [CANDS="jacobi chol ic0 fsai:2 cheb:8 bjacobi:64 amg"] [ONLY=regex] [MATRICES="..."]
#        bench/scripts/precond-auto-study.sh [DATA]
#   DATA: the EPANET systems (NAME_stepK.mtx[.gz] with NAME_stepK_b.mtx[.gz]), default .gpu-data;
#   DEVICE=serial runs the same table on one CPU core, DEVICE=cpu on every core (no tests then).
#   DEVICES="cpu gpu": every candidate on each (columns NAME@DEVICE), and auto as
#   `--device auto --precond auto` (issue 50: auto against the best of every preconditioner and
#   device).
#   MATRICES: more systems after data/matrices: files (a NAME_b file beside one is its b) or
#   generator specs (gen:poisson2d:1000; b = A * 1).
#   The runs are interleaved: round r runs every candidate once, so a load that comes and goes on
#   a shared machine falls on each alike; a run past PER_RUN_TIMEOUT (60 s) counts as not
#   converged.
# Logs under $OUT/auto-logs; the table is printed last. < 4 min on one H100.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD:-build-gpu}
OUT=${OUT:-/tmp/auto-out}
RUNS=${RUNS:-3}
DEVICE=${DEVICE:-gpu}
TOL=${TOL:-1e-10}
CANDS=${CANDS:-"jacobi chol ic0 fsai:2 cheb:8 bjacobi:64 amg"}
DATA=${1:-.gpu-data}
L=$OUT/auto-logs
mkdir -p "$L"
S=$L/summary.txt
: > "$S"
say() { echo "$*" | tee -a "$S"; }
t0=$SECONDS
if [[ $DEVICE == gpu ]]; then
  nvidia-smi --query-gpu=name --format=csv,noheader > "$L/machine.txt" 2>&1
  machine=$(head -1 "$L/machine.txt")
else
  machine="CPU ($DEVICE), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
fi
say "device: $machine, $(nproc) host cores, tree $(git rev-parse --short HEAD 2>/dev/null), $(date -u +%FT%TZ)"
if [[ -z ${SKIP_BUILD:-} ]]; then
  targets=(--target cgsolve)
  [[ $DEVICE == gpu ]] && targets+=(--target test_gpu)
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF > "$L/configure.log" 2>&1 &&
    cmake --build "$B" -j "$(nproc)" "${targets[@]}" > "$L/build.log" 2>&1 ||
    { say "build failed"; grep -B2 -A10 "error" "$L/build.log" | head -40; exit 1; }
  say "build $((SECONDS - t0)) s"
fi
C=$B/app/cgsolve
if [[ $DEVICE == gpu && -x $B/tests/test_gpu ]]; then
  timeout 120 "$B/tests/test_gpu" -tc='GPU --precond auto*' > "$L/test-auto.log" 2>&1
  say "test_gpu 'GPU --precond auto*': exit $? $(grep -E 'test cases' "$L/test-auto.log")"
  grep -B4 -A12 "ERROR" "$L/test-auto.log" | head -40
fi

# The systems: the five EPANET ones of issue 21 (found by name in DATA), then data/matrices.
cases=()
for pat in 'Exnet*_step3' 'ky2_step4' 'Richmond_standard_step4' 'Wolf-Cordera*_step5' \
  'BWSN_Network_2_step10'; do
  found=
  for f in "$DATA"/$pat.mtx "$DATA"/$pat.mtx.gz; do [[ -f $f ]] && found=$f && break; done
  [[ -n $found ]] && cases+=("$found") || say "not found: $DATA/$pat.mtx[.gz]"
done
for f in data/matrices/*.mtx data/matrices/*.mtx.gz; do cases+=("$f"); done
for m in ${MATRICES:-}; do cases+=("$m"); done

# One run: "<exit> <JSON report on one line>" appended to $1.
one() {  # file precond[@device] args...
  local file=$1 precond=${2%@*} device=$DEVICE
  [[ $2 == *@* ]] && device=${2#*@}
  [[ -n ${DEVICES:-} && $2 == auto ]] && device=auto
  shift 2
  rm -f "$L/r.json"
  local t0=$(date +%s%N)
  timeout "${PER_RUN_TIMEOUT:-60}" "$C" "$@" --device "$device" --precond "$precond" --tol "$TOL" \
    --max-iters "${MAXITERS:-200000}" --quiet --report "$L/r.json" > "$L/last.txt" 2>&1
  local status=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "$status $wall_ms $([[ -f $L/r.json ]] && tr -d '\n' < "$L/r.json")" >> "$file"
  # auto's choice and why, one line a run, for the report
  [[ $precond == auto && -f $L/r.json ]] && python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(sys.argv[2], j["plan"].get("reasons", [""])[0], j["plan"]["inspection"])' "$L/r.json" "$(basename "$file")" >> "$L/auto-choices.txt"
}
if [[ -n ${DEVICES:-} ]]; then
  pairs=
  for p in $CANDS; do for d in $DEVICES; do pairs+=" $p@$d"; done; done
  CANDS=$pairs
fi
for A in "${cases[@]}"; do
  name=$(basename "${A%.gz}" .mtx | tr ':' '_')
  [[ -n ${ONLY:-} && ! $name =~ $ONLY ]] && continue
  args=(--matrix "$A")
  for b in "${A%.mtx*}_b.mtx.gz" "${A%.mtx*}_b.mtx"; do [[ $A != gen:* && -f $b ]] && args+=(--rhs "$b") && break; done
  for p in $CANDS auto; do : > "$L/runs-$name-$(echo "$p" | tr ':/@' '___').txt"; done
  for ((i = 0; i < RUNS; i++)); do
    for p in $CANDS auto; do one "$L/runs-$name-$(echo "$p" | tr ':/@' '___').txt" "$p" "${args[@]}"; done
  done
done

for metric in phases process; do
python3 - "$L" "$RUNS" "$metric" $CANDS <<'PY' | tee -a "$S"
import glob, json, os, statistics, sys
logs, runs, metric, cands = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
# phases: the report's times from the first set-up to the solution (the file's reading and
# the GPU's context, made while reading, left out); process: the whole process, wall clock.
def tts(j):
    if metric == "process":
        return j["wall_s"]
    t = j["times"]
    return sum(t.get(k) or 0 for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s", "solve_s"))
def median_of(path):
    ok = []
    for line in open(path):
        status, wall, text = (line.strip().split(" ", 2) + ["", ""])[:3]
        try:
            j = json.loads(text)
        except Exception:
            continue
        j["wall_s"] = float(wall) / 1e3
        if j["result"]["converged"]:
            ok.append(j)
    if not ok:
        return None
    return sorted(ok, key=tts)[len(ok) // 2]
names = sorted({os.path.basename(p)[5:].rsplit("-", 1)[0] for p in glob.glob(f"{logs}/runs-*-auto.txt")},
               key=lambda n: (not "_step" in n, n))
print(f"\n[{metric}] time to solution, ms (median of {runs}; NC: did not converge); auto's probe cost in ms: all of it"
      " (inspect_s), and what was not the chosen candidate's own kept iterations (inspect_s - probe_kept_s),"
      " against the bound max(5 ms, 20% of the chosen solve's time: auto's less the losers')")
print(f"{'system':28} " + " ".join(f"{c:>10}" for c in cands) + f" {'auto':>9} {'-> pick':12} {'probe':>7} {'losers':>7} {'bound':>9} {'auto/best':>9}")
met = bounded = 0
for n in names:
    cells, best = [], None
    for c in cands:
        j = median_of(f"{logs}/runs-{n}-{c.replace(':', '_').replace('@', '_')}.txt")
        cells.append(f"{tts(j)*1e3:10.2f}" if j else f"{'NC':>10}")
        if j and (best is None or tts(j) < best[1]): best = (c, tts(j))
    a = median_of(f"{logs}/runs-{n}-auto.txt")
    if a is None:
        print(f"{n:28} " + " ".join(cells) + f" {'NC':>9}"); continue
    ratio = tts(a) / best[1] if best else float("nan")
    met += ratio <= 1.25
    probe = a['times'].get('inspect_s', 0) or 0
    losers = probe - (a['times'].get('probe_kept_s', 0) or 0)
    limit = max(5e-3, 0.2 * (tts(a) - losers))
    bounded += losers <= limit
    pick = a['plan']['preconditioner'] + "@" + a['plan']['device']
    print(f"{n:28} " + " ".join(cells) + f" {tts(a)*1e3:9.2f} {pick:12} "
          f"{probe*1e3:7.2f} {losers*1e3:7.2f} {'ok' if losers <= limit else 'OVER':>4}{limit*1e3:5.1f} {ratio:8.2f}x")
print(f"[{metric}] auto within 1.25x of the best fixed candidate on {met} of {len(names)}; probe within its bound on {bounded} of {len(names)}")
PY
done
say "whole run $((SECONDS - t0)) s"
