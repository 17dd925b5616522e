#!/usr/bin/env bash
# fixed_cost.sh - what a run costs whatever the program does: the wall time
# of `whatif run` on a program whose OpenMP part is one parallel loop of 10
# iterations, against the plain run.  The parts are timed too: a process
# that does nothing (/bin/true: this machine's cost of starting one),
# `whatif --version` (the command's own start), and the program with the
# tool preloaded without a `whatif` process (the tool's start, its report
# and the loading of its libraries).  Configurations run interleaved, so
# that each median compares runs of the same moment.
#
#   bench/fixed_cost.sh [ROUNDS]     (default 21; prints a Markdown table)
#
# Not part of the test suite: its numbers depend on the machine.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-21}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] ||
  { echo "fixed_cost.sh: ROUNDS must be a positive number" >&2; exit 2; }
[ -n "${EPOCHREALTIME:-}" ] ||
  { echo "fixed_cost.sh: needs bash 5 (EPOCHREALTIME)" >&2; exit 1; }
whatif="$root/build/bin/whatif"
tool="$root/build/lib/libwhatif.so"
[ -x "$whatif" ] && [ -f "$tool" ] ||
  { echo "fixed_cost.sh: build first (./setup.sh)" >&2; exit 1; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat >"$work/one_loop.c" <<'EOF'
#include <stdio.h>
int main(void)
{
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < 10; i++)
        s += i;
    printf("%g\n", s);
    return 0;
}
EOF
clang-19 -O2 -g -fopenmp "$work/one_loop.c" -o "$work/one_loop" ||
  { echo "fixed_cost.sh: clang-19 -fopenmp failed" >&2; exit 1; }
prog="$work/one_loop"

names=(true version plain preloaded online offline)
run_one() {
  case $1 in
    true) /bin/true ;;
    version) "$whatif" --version ;;
    plain) "$prog" ;;
    preloaded) env -u WHATIF_METRIC -u WHATIF_FACTORS -u WHATIF_SAMPLE_HZ \
                 -u WHATIF_CONTEXT -u OMP_TOOL_LIBRARIES LD_PRELOAD="$tool" \
                 WHATIF_PRELOAD=1 OMP_TOOL=enabled WHATIF_OUT="$work/pre" \
                 WHATIF_MODE=online "$prog" ;;
    online) "$whatif" run -o "$work/on" -- "$prog" ;;
    offline) "$whatif" run --mode offline -o "$work/off" -- "$prog" ;;
  esac
}
for ((r = 0; r < rounds; r++)); do
  for n in "${names[@]}"; do
    # the shell's own clock: a `date` process would add a process start
    t0=${EPOCHREALTIME/[.,]/}
    run_one "$n" >/dev/null 2>&1 || { echo "fixed_cost.sh: $n failed" >&2; exit 1; }
    t1=${EPOCHREALTIME/[.,]/}
    echo "$n $((t1 - t0))" >>"$work/times"
  done
done
median() { awk -v n="$1" '$1 == n { print $2 }' "$work/times" | sort -n |
           awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'; }
declare -A ms
for n in "${names[@]}"; do ms[$n]=$(median "$n"); done
echo "| run ($OMP_NUM_THREADS threads, median of $rounds) | ms |"
echo "|---|---:|"
echo "| /bin/true | ${ms[true]} |"
echo "| whatif --version | ${ms[version]} |"
echo "| plain | ${ms[plain]} |"
echo "| tool preloaded, no whatif process | ${ms[preloaded]} |"
echo "| whatif run, on the fly | ${ms[online]} |"
echo "| whatif run, offline | ${ms[offline]} |"
awk -v p="${ms[plain]}" -v on="${ms[online]}" -v off="${ms[offline]}" \
  'BEGIN { printf "\nfixed cost (whatif run over plain): %.1f ms on the fly, %.1f ms offline\n", on - p, off - p }'
