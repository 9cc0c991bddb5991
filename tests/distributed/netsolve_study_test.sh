#!/usr/bin/env bash
# netsolve --study under mpirun: 1, 2 and 4 ranks give the one process's CSV byte for byte
# (fire flow, a 24 h closure study, demand draws whose seeds follow the scenario numbers), the
# JSON report says how many ranks took part, only rank 0 writes, and a single run under mpirun
# is refused (exit 2). Usage: netsolve_study_test.sh NETSOLVE MPIEXEC DATA_DIR
set -euo pipefail
netsolve=$1 mpiexec=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
net=$data/networks/Net3.inp
studies=("fireflow" "closure --duration 6h" "demand:24:0.3:5")
for s in "${!studies[@]}"; do
  # shellcheck disable=SC2086
  "$netsolve" --network "$net" --study ${studies[$s]} --threads 1 --quiet \
    --study-csv "$work/one_$s.csv"
  for np in 1 2 4; do
    # shellcheck disable=SC2086
    "$mpiexec" -np $np "$netsolve" --network "$net" --study ${studies[$s]} --threads 1 --quiet \
      --study-csv "$work/np${np}_$s.csv" --report "$work/np${np}_$s.json"
    cmp -s "$work/one_$s.csv" "$work/np${np}_$s.csv" ||
      fail "${studies[$s]}: $np ranks' CSV differs from one process's"
    grep -q "\"ranks\": $np" "$work/np${np}_$s.json" || [[ $np == 1 ]] ||
      fail "${studies[$s]}: the report does not say $np ranks"
  done
  echo "${studies[$s]}: 1, 2 and 4 ranks give one process's CSV ($(($(wc -l < "$work/one_$s.csv") - 1)) rows)"
done
if out=$("$mpiexec" -np 2 "$netsolve" --network "$net" --duration 0 --quiet 2>&1); then
  fail "a single run under mpirun was not refused"
fi
grep -q "spreads a --study's scenarios over the ranks" <<<"$out" || fail "refusal: $out"
echo "a single run under mpirun: refused with the reason"
