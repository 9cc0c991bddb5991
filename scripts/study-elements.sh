# Sourced by the study scripts (scripts/study-check.sh, bench/scripts/study-gpu-bench.sh): which elements a study of the
# first N takes, as epanet-scenarios --max N takes them.
# elements FILE SECTION N: the first N IDs of an .inp section (junctions, or pipes without check
# valves: the ones epanet-scenarios --max N closes), one a line.
elements() {
  awk -v want="[$2]" -v n="$3" '
    { sub(/\r$/, "") }  # files with CRLF line ends
    /^[ \t]*\[/ { inside = (toupper($1) == want); next }
    { sub(/;.*/, "") }
    inside && NF && !(want == "[PIPES]" && toupper($8) == "CV") && count < n { print $1; count++ }' "$1"
}
