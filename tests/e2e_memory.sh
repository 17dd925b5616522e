#!/usr/bin/env bash
# e2e_memory.sh - what the profiler keeps while a program runs, measured
# as the peak RSS of `whatif run` (the program's process included).
# Run alone (RUN_SERIAL): a thread that other processes keep off its core
# leaves older tasks unreported for as long, and the records of the tasks
# created meanwhile wait for them (docs/limits.md); the cases beside two
# busy processes of its own measure that.
# Usage: e2e_memory.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$1; work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$work"
clang-19 -fopenmp -g -O2 "$here/e2e/shapes.c" -o "$work/shapes" -lpthread || exit 1
clang-19 -fopenmp -g -O2 -I"$here/../include" "$here/e2e/floods.c" -o "$work/floods" || exit 1
command -v /usr/bin/time >/dev/null || { echo "e2e_memory: needs GNU time (./setup.sh installs it)"; exit 1; }
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "$1"; fail=$((fail + 1)); }

# flood LABEL LOAD MODE WANT PROGRAM ARGS... -- WHATIF_OPTIONS...: runs
# PROGRAM under `whatif run --mode MODE` at 2 and 4 threads, beside two
# busy processes when LOAD is "loaded"; passes when the program printed
# "ok ARG1 WANT", the profile counts WANT task instances, the peak RSS is
# under 150 MB and, in both modes, the two profiles are identical.
flood() {
  local label=$1 load=$2 mode=$3 want=$4; shift 4
  local prog=() opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do prog+=("$1"); shift; done
  [ $# -gt 0 ] && shift; opts=("$@")
  local T out rss tasks busy=()
  for T in 2 4; do
    out="$work/$label-$T"; rm -rf "$out"
    busy=()
    if [ "$load" = loaded ]; then
      yes >/dev/null & busy+=($!)
      yes >/dev/null & busy+=($!)
    fi
    OMP_NUM_THREADS=$T /usr/bin/time -f "whatif-maxrss %M" -o "$out.rss" \
      "$whatif" run -q --mode "$mode" "${opts[@]}" -o "$out" -- "${prog[@]}" >"$out.out" 2>"$out.err"
    if [ ${#busy[@]} -gt 0 ]; then kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null; fi
    rss=$(sed -n 's/^whatif-maxrss //p' "$out.rss" 2>/dev/null)
    tasks=$(awk -F, '$2 == "task" { n += $3 } END { print n + 0 }' "$out/profile.csv" 2>/dev/null)
    if grep -q "^ok ${prog[1]} $want$" "$out.out" && [ "$tasks" = "$want" ] &&
       [ -n "$rss" ] && [ "$rss" -lt 150000 ] &&
       { [ "$mode" != both ] || cmp -s "$out/profile.csv" "$out/online/profile.csv"; }; then ok; else
      ko "FAIL: $label ($load), T=$T: ${rss:-?} KB at most, ${tasks:-?} task instances ($(head -2 "$out.err"))"; fi
  done
}

# A single that creates 10^6 tasks as fast as it can.  The thread that
# once took the scope's lock was kept applying the creator's updates for
# good, never ran the tasks waiting in the runtime's queue, and every
# later task's record waited behind them: 300-660 MB at 2 and 4 threads
# (the program alone takes 4 MB), 13 MB on the fly and 45 MB in both
# modes now.
flood flood idle both 1000000 "$work/shapes" task_flood

# The same with what-if factors (several scenarios), beside two busy
# processes: a thread kept off its core leaves the oldest tasks
# unreported, and the later tasks' records waited behind them one by one
# (180-350 MB at 2 and 4 threads on a 2-core machine) until runs kept a
# chain pair per scenario (ospg.c, "Segments"): 10 MB.
flood flood-factors loaded both 1000000 "$work/shapes" task_flood -- --factors 2,4,8

# Tasks that are nodes (their code crosses a what-if region, or they
# create a task and wait for it), beside two busy processes: each early
# one waited whole in its parent's parked list (0.3-1 KB) until a finished
# node joined runs too: 260-980 MB and 70-300 MB before at 2 and 4
# threads, 10-18 MB.  The region case runs on the fly only (what-if
# factors); the nested one in both modes.
flood floods-region loaded online 1000000 "$work/floods" region
flood floods-nested loaded both 1000000 "$work/floods" nested

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
