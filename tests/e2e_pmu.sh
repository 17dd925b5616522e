#!/usr/bin/env bash
# e2e_pmu.sh - the default metric where a hardware counter is reachable:
# user-mode instructions.  tests/e2e/pmu.c counts its own fragments with a
# perf_event counter of its own and prints the work, the span and its
# serial code before the first construct; whatif's profile (preloaded, in
# both modes, and linked in) must agree within 0.2% (instruction counts
# repeat; what whatif adds is the runtime's code around each callback,
# a few thousand instructions against fragments of 4-45 million).
# Where perf_event_open refuses hardware events (most VMs) there is
# nothing to measure: the script says so and exits 77, which ctest shows
# as skipped, never as passed.
# Usage: e2e_pmu.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
clang-19 -fopenmp -g -O2 "$here/e2e/pmu.c" -o pmu || exit 1
clang-19 -fopenmp -g -O2 "$here/e2e/pmu.c" "$(dirname "$whatif")/../lib/libwhatif.a" \
  -Wl,-u,ompt_start_tool -lpfm -lsqlite3 -ldw -lelf -lm -lpthread -o pmu_linked || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
near() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w > 0 && d <= w * 0.002) }'; }
json() { sed -n "s/^  \"$2\": \"*\([^\",]*\)\"*,*$/\1/p" "$1/run.json" 2>/dev/null; }

rm -rf probe
OMP_NUM_THREADS=2 "$whatif" run -q -o probe -- ./pmu >/dev/null 2>probe.err
if [ "$(json probe metric)" != instructions ] || grep -q "whatif-expect none" probe.err; then
  echo "SKIP: no hardware counter here (default metric: $(json probe metric); $(grep '"metric_reason"' probe/run.json))"
  exit 77
fi
if grep -q '"metric_reason": "default: hardware counter' probe/run.json; then ok; else
  ko "run.json's metric_reason: $(grep '"metric_reason"' probe/run.json)"; fi

check() { # DIR ERRFILE WHAT
  local w s f e_w e_s e_f
  read -r e_w e_s e_f < <(sed -n 's/^whatif-expect work=\([0-9]*\) span=\([0-9]*\) first=\([0-9]*\)$/\1 \2 \3/p' "$2")
  w=$(json "$1" program_work); s=$(json "$1" program_span)
  f=$(awk -F, '$1 == "program start" { print $4 }' "$1/serial_fragments.csv" 2>/dev/null)
  if near "$w" "${e_w:-0}"; then ok; else ko "$3: work ${w:-none}, the program counted ${e_w:-none}"; fi
  if near "$s" "${e_s:-0}"; then ok; else ko "$3: span ${s:-none}, the program counted ${e_s:-none}"; fi
  # the serial code before the first construct: counted from the
  # program's start, not from where the runtime started the tool
  if near "$f" "${e_f:-0}"; then ok; else
    ko "$3: serial code before the first construct ${f:-none}, the program counted ${e_f:-none}"; fi
}

for mode in online offline; do
  rm -rf $mode
  OMP_NUM_THREADS=2 "$whatif" run -q --mode $mode -o $mode -- ./pmu >/dev/null 2>$mode.err
  check $mode $mode.err "preloaded, $mode"
done
rm -rf linked
OMP_NUM_THREADS=2 WHATIF_OUT=linked ./pmu_linked >/dev/null 2>linked.err
check linked linked.err "linked in"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
