#!/usr/bin/env bash
# cgsolve under mpirun: 2 ranks give the answer of 1 process (x to the tolerance, iterations
# within 2%), the JSON report says how many ranks took part, outputs are written once by rank 0,
# and a bad input stops every rank with exit 2. Usage: cli_test.sh CGSOLVE MPIEXEC DATA_DIR
set -euo pipefail
cgsolve=$1 mpiexec=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cgsolve" --matrix gen:poisson2d:40 --tol 1e-10 --cpu-loop generic --threads 1 \
  --output "$work/x1.mtx" --report "$work/r1.json" --quiet
"$mpiexec" -np 2 "$cgsolve" --matrix gen:poisson2d:40 --tol 1e-10 --threads 1 \
  --output "$work/x2.mtx" --report "$work/r2.json" --quiet
# METIS is optional: a build without it refuses --partition metis with the reason (exit 2),
# and the single-reduction run takes contiguous rows instead.
single_reduction() {
  "$mpiexec" -np 2 "$cgsolve" --matrix gen:poisson2d:40 --tol 1e-10 --threads 1 \
    --cg-variant single-reduction --partition "$1" --report "$work/r3.json" --quiet 2>&1
}
if ! metis_run=$(single_reduction metis); then
  grep -q "built without METIS" <<<"$metis_run" || fail "--partition metis: $metis_run"
  echo "no METIS in this build (refused with the reason); single-reduction on contiguous rows"
  single_reduction contiguous >/dev/null
fi
"$mpiexec" -np 2 "$cgsolve" --matrix gen:poisson2d:40 --tol 1e-10 --threads 1 \
  --dist-loop plain --report "$work/r5.json" --quiet

python3 - "$work" <<'PY'
import json, math, sys
work = sys.argv[1]
def vector(path):
    lines = [l for l in open(path) if not l.startswith('%')]
    return [float(v) for v in lines[1:]]
r1, r2, r3 = (json.load(open(f"{work}/r{i}.json")) for i in (1, 2, 3))
assert r1["ranks"] == 1 and r2["ranks"] == 2 and r3["ranks"] == 2, (r1["ranks"], r2["ranks"])
i1, i2, i3 = (r["result"]["iterations"] for r in (r1, r2, r3))
for i in (i2, i3):
    assert abs(i - i1) <= max(1, 0.02 * i1), (i1, i2, i3)
d = r2["distributed"]
assert d["reductions_per_iteration"] == 2 and r3["distributed"]["reductions_per_iteration"] == 1
ranks = d["per_rank"]
assert sum(r["rows"] for r in ranks) == 1600
for r in ranks:  # the exchange moved the halo's bytes per product, no more
    assert r["halo_bytes_received"] == r["products"] * r["halo_size"] * 8, r
assert sum(r["halo_bytes_sent"] for r in ranks) == sum(r["halo_bytes_received"] for r in ranks)
# The loop that ran: fused by default for classic CG; single-reduction and --dist-loop plain: plain.
r5 = json.load(open(f"{work}/r5.json"))
assert (d["loop"], r3["distributed"]["loop"], r5["distributed"]["loop"]) == ("fused", "plain", "plain")
assert abs(r5["result"]["iterations"] - i2) <= max(1, 0.02 * i2)
for r in ranks + r5["distributed"]["per_rank"]:  # the waits split: imbalance + transfer
    s = r["seconds"]
    assert 0 <= s["halo_imbalance"] <= s["halo_wait"] + 1e-12, s
    assert 0 <= s["allreduce_imbalance"] <= s["allreduce"] + 1e-12, s
    assert abs(s["halo_imbalance"] + s["halo_transfer"] - s["halo_wait"]) < 1e-12, s
    assert abs(s["allreduce_imbalance"] + s["allreduce_transfer"] - s["allreduce"]) < 1e-12, s
x1, x2 = vector(f"{work}/x1.mtx"), vector(f"{work}/x2.mtx")
assert len(x1) == len(x2) == 1600
diff = math.sqrt(sum((a - b) ** 2 for a, b in zip(x1, x2)) / sum(a * a for a in x1))
assert diff < 1e-8, diff
PY

# A missing file: every rank stops, exit 2, one message.
set +e
"$mpiexec" -np 2 "$cgsolve" --matrix "$work/missing.mtx" 2> "$work/err"
status=$?
set -e
[ "$status" -ne 0 ] || fail "a missing matrix did not fail"
[ "$(grep -c 'cgsolve: error' "$work/err")" -eq 1 ] || fail "expected one error message: $(cat "$work/err")"
# A loop that does not exist: exit 2, the option named.
set +e
"$mpiexec" -np 2 "$cgsolve" --matrix gen:poisson2d:10 --dist-loop fast 2> "$work/err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "--dist-loop fast: exit $status, expected 2"
grep -q -- "--dist-loop" "$work/err" || fail "--dist-loop fast: no message naming it: $(cat "$work/err")"
# The EPANET system on 2 ranks with Jacobi: converged, true residual under the tolerance.
"$mpiexec" -np 2 "$cgsolve" --matrix "$data/systems/Exnet_EXN_step3.mtx.gz" \
  --rhs "$data/systems/Exnet_EXN_step3_b.mtx.gz" --precond jacobi --threads 1 --quiet \
  --report "$work/r4.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['result']['converged'] and r['result']['true_relative_residual'] <= 1.5e-8, r['result']" "$work/r4.json"
echo "cgsolve under mpirun: OK"
