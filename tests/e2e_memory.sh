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

# A single that creates 10^6 tasks as fast as it can.  The thread that
# once took the scope's lock was kept applying the creator's updates for
# good, never ran the tasks waiting in the runtime's queue, and every
# later task's record waited behind them: 300-660 MB at 2 and 4 threads
# (the program alone takes 4 MB), 13 MB on the fly and 45 MB in both
# modes now.  On the fly and offline, identical.
for T in 2 4; do
  out="$work/flood-$T"; rm -rf "$out"
  OMP_NUM_THREADS=$T /usr/bin/time -f "whatif-maxrss %M" -o "$out.rss" \
    "$whatif" run -q --mode both -o "$out" -- "$work/shapes" task_flood >"$out.out" 2>"$out.err"
  rss=$(sed -n 's/^whatif-maxrss //p' "$out.rss" 2>/dev/null)
  inst=$(awk -F, '$2 == "task" { print $3 }' "$out/profile.csv" 2>/dev/null)
  if grep -q "^ok task_flood 1000000$" "$out.out" && [ "${inst:-0}" = 1000000 ] &&
     [ -n "$rss" ] && [ "$rss" -lt 150000 ] &&
     cmp -s "$out/profile.csv" "$out/online/profile.csv"; then ok; else
    ko "FAIL: task_flood T=$T: ${rss:-?} KB at most, ${inst:-?} task instances ($(head -2 "$out.err"))"; fi
done

# The same with what-if factors (several scenarios), beside two busy
# processes: a thread kept off its core leaves the oldest tasks
# unreported, and the later tasks' records waited behind them one by one
# (180-350 MB at 2 and 4 threads on a 2-core machine) until runs kept a
# chain pair per scenario (ospg.c, "Segments"): 10 MB.
for T in 2 4; do
  out="$work/flood-factors-$T"; rm -rf "$out"
  yes >/dev/null & busy1=$!
  yes >/dev/null & busy2=$!
  OMP_NUM_THREADS=$T /usr/bin/time -f "whatif-maxrss %M" -o "$out.rss" \
    "$whatif" run -q --mode both --factors 2,4,8 -o "$out" -- "$work/shapes" task_flood >"$out.out" 2>"$out.err"
  kill $busy1 $busy2; wait $busy1 $busy2 2>/dev/null
  rss=$(sed -n 's/^whatif-maxrss //p' "$out.rss" 2>/dev/null)
  inst=$(awk -F, '$2 == "task" { print $3 }' "$out/profile.csv" 2>/dev/null)
  if grep -q "^ok task_flood 1000000$" "$out.out" && [ "${inst:-0}" = 1000000 ] &&
     [ -n "$rss" ] && [ "$rss" -lt 150000 ] &&
     cmp -s "$out/profile.csv" "$out/online/profile.csv"; then ok; else
    ko "FAIL: task_flood with factors beside busy processes, T=$T: ${rss:-?} KB at most, ${inst:-?} task instances ($(head -2 "$out.err"))"; fi
done

# Tasks that are nodes (their code crosses a what-if region, or they
# create a task and wait for it), beside two busy processes: each early
# one waited whole in its parent's parked list (0.3-1 KB) until a finished
# node joined runs too: 260-980 MB and 70-300 MB before at 2 and 4
# threads, 10-18 MB.  The region case runs on the fly only (what-if
# factors); the nested one in both modes, identical.
for c in "region 1000000 online" "nested 1000000 both"; do
  read -r name want mode <<<"$c"
  for T in 2 4; do
    out="$work/floods-$name-$T"; rm -rf "$out"
    yes >/dev/null & busy1=$!
    yes >/dev/null & busy2=$!
    OMP_NUM_THREADS=$T /usr/bin/time -f "whatif-maxrss %M" -o "$out.rss" \
      "$whatif" run -q --mode "$mode" -o "$out" -- "$work/floods" "$name" >"$out.out" 2>"$out.err"
    kill $busy1 $busy2; wait $busy1 $busy2 2>/dev/null
    rss=$(sed -n 's/^whatif-maxrss //p' "$out.rss" 2>/dev/null)
    tasks=$(awk -F, '$2 == "task" { n += $3 } END { print n + 0 }' "$out/profile.csv" 2>/dev/null)
    if grep -q "^ok $name $want$" "$out.out" && [ "$tasks" = "$want" ] &&
       [ -n "$rss" ] && [ "$rss" -lt 150000 ] &&
       { [ "$mode" != both ] || cmp -s "$out/profile.csv" "$out/online/profile.csv"; }; then ok; else
      ko "FAIL: floods $name beside busy processes, T=$T: ${rss:-?} KB at most, ${tasks:-?} task instances ($(head -2 "$out.err"))"; fi
  done
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
