#!/usr/bin/env bash
# Checks that a change of structure changed no answer: writes netsolve's node, link and tank
# series (24 h, every network of ../shared/data/networks, the direct and the CG solver), study
# CSVs (fire flow and closure on every network's first 40 elements; steady and extended, DDA and
# PDA, the host and the batched engines on a few) and cgsolve's solutions of data/ into a folder,
# then, given a second folder, compares the two byte for byte.
#
#   scripts/same-results.sh write BUILD_DIR OUT_DIR     # e.g. a build of the commit before
#   scripts/same-results.sh compare OLD_DIR NEW_DIR     # exit 1 on the first difference listed
#
# Run times and thread counts are left out of what is compared (the JSON reports are not kept);
# everything written is an answer.
set -uo pipefail
cd "$(dirname "$0")/.."
nets=../shared/data/networks

write() {
  local build=$1 out=$2
  mkdir -p "$out"
  local ns=$build/app/netsolve cg=$build/app/cgsolve
  for inp in "$nets"/*.inp; do
    local n
    n=$(basename "$inp" .inp)
    "$ns" --network "$inp" --quiet --nodes "$out/$n.nodes.csv" --links "$out/$n.links.csv" \
      --tanks "$out/$n.tanks.csv" >/dev/null 2>"$out/$n.err"
    echo "exit $?" >>"$out/$n.err"
  done
  # The CG solver at time 0 where its default (Jacobi-scaled CG) takes seconds, not minutes.
  for n in Net1 Net2 Net3 Anytown Hanoi ky2 Exnet_EXN; do
    "$ns" --network "$nets/$n.inp" --quiet --duration 0 --solver cg --nodes "$out/$n.cg.nodes.csv" \
      >/dev/null 2>"$out/$n.cg.err"
    echo "exit $?" >>"$out/$n.cg.err"
  done
  # Studies: small networks whole, a larger one on the trials engine and with PDA.
  local s
  for n in Net1 Net3 Anytown Hanoi; do
    for s in fireflow closure; do
      "$ns" --network "$nets/$n.inp" --quiet --study $s --duration 0 --study-csv "$out/$n.$s.csv" \
        >/dev/null 2>>"$out/studies.err"
      "$ns" --network "$nets/$n.inp" --quiet --study $s --duration 6h --threads 2 \
        --study-csv "$out/$n.$s.6h.csv" >/dev/null 2>>"$out/studies.err"
    done
    "$ns" --network "$nets/$n.inp" --quiet --study fireflow --duration 0 --study-batch 64 \
      --study-csv "$out/$n.fireflow.batch.csv" >/dev/null 2>>"$out/studies.err"
    "$ns" --network "$nets/$n.inp" --quiet --study demand:20 --duration 0 --demand-model pda \
      --study-csv "$out/$n.demand.pda.csv" >/dev/null 2>>"$out/studies.err"
    "$ns" --network "$nets/$n.inp" --quiet --study fireflow --duration 0 --solver cg \
      --study-csv "$out/$n.fireflow.cg.csv" >/dev/null 2>>"$out/studies.err"
  done
  # Every network: fire flow at its first 40 junctions and closure of its first 40 pipes,
  # steady state, on the host (as scripts/study-check.sh takes them).
  source scripts/study-elements.sh
  for inp in "$nets"/*.inp; do
    local n
    n=$(basename "$inp" .inp)
    elements "$inp" JUNCTIONS 40 >"$out/.junctions"
    elements "$inp" PIPES 40 >"$out/.pipes"
    "$ns" --network "$inp" --quiet --study fireflow --duration 0 --elements "$out/.junctions" \
      --study-csv "$out/$n.fireflow40.csv" >/dev/null 2>>"$out/studies.err"
    "$ns" --network "$inp" --quiet --study closure --duration 0 --elements "$out/.pipes" \
      --study-csv "$out/$n.closure40.csv" >/dev/null 2>>"$out/studies.err"
  done
  rm -f "$out/.junctions" "$out/.pipes"
  "$ns" --network "$nets/ky2.inp" --quiet --study fireflow --duration 0 --study-batch 256 \
    --study-csv "$out/ky2.fireflow.batch.csv" >/dev/null 2>>"$out/studies.err"
  for inp in "$nets"/Net3.inp "$nets"/ky2.inp "$nets"/Exnet_EXN.inp; do
    local n
    n=$(basename "$inp" .inp)
    "$ns" --network "$inp" --quiet --demand-model pda --nodes "$out/$n.pda.nodes.csv" \
      --links "$out/$n.pda.links.csv" >/dev/null 2>>"$out/studies.err"
  done
  # cgsolve: the matrices of data/ with each preconditioner on one core (auto and the team loop
  # decide by timings), the solutions.
  local m p
  for m in data/matrices/*.mtx data/matrices/*.mtx.gz; do
    for p in none jacobi ic0 fsai bjacobi cheb amg chol; do
      local base
      base=$(basename "$m")
      "$cg" --matrix "$m" --precond $p --device serial --output "$out/$base.$p.x.mtx" --quiet \
        >/dev/null 2>>"$out/cgsolve.err"
      "$cg" --matrix "$m" --precond $p --cpu-loop generic --output "$out/$base.$p.generic.x.mtx" \
        --quiet >/dev/null 2>>"$out/cgsolve.err"
    done
  done
}

compare() {
  local old=$1 new=$2 bad=0 f
  for f in "$old"/*; do
    local name
    name=$(basename "$f")
    [[ $name == DONE ]] && continue
    if [[ ! -e "$new/$name" ]]; then
      echo "missing: $name"
      bad=1
    elif ! cmp -s "$f" "$new/$name"; then
      echo "differs: $name"
      bad=1
    fi
  done
  for f in "$new"/*; do
    [[ -e "$old/$(basename "$f")" ]] || { echo "new: $(basename "$f")"; bad=1; }
  done
  ((bad)) && return 1
  echo "same-results: $(ls "$old" | wc -l) files identical"
}

case "${1:-}" in
write) write "$2" "$3" ;;
compare) compare "$2" "$3" ;;
*) sed -n '2,12p' "$0"; exit 2 ;;
esac
