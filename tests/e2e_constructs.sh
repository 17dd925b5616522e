#!/usr/bin/env bash
# e2e_constructs.sh - profiles every case of tests/e2e/constructs.c at 2
# and 4 threads (on the fly) and requires the program's parallelism within
# 5% of (2 + W) / (2 + P), the case's work W and span P in units of C ms
# (serial C ms before and after the construct), or, where all the case's
# units are parallel (P = 1), of the work over the span the program
# measured itself (its serial units and its longest one); a case outside
# 5% is measured twice more and judged on the median of its three runs'
# ratios to what each should have.  A few cases also run in
# "both" mode, where the on-the-fly profile and the offline analysis of
# the same run's trace must be identical byte for byte.  Every profile
# must also satisfy the invariants (e2e_lib.sh) and hold, within 3%, the
# work the program measured of its own units (tests/e2e/selftime.h): the
# work does not depend on the noise a span picks up.
# Usage: e2e_constructs.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$1; work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
mkdir -p "$work"
clang-19 -fopenmp -g -O1 "$here/e2e/constructs.c" -o "$work/constructs" || exit 1
C=10
pass=0 fail=0
within() { awk -v g="$1" -v w="$2" 'BEGIN { exit !(g >= w * 0.95 && g <= w * 1.05) }'; }
# case threads "env" W P   (P may be an awk expression of T)
cases=(
  "parallel     - 4 1"
  "barrier      - 8 2"
  "nested       OMP_MAX_ACTIVE_LEVELS=2 4 1"
  "nested       OMP_MAX_ACTIVE_LEVELS=1 2 1"
  "if0          - 1 1"
  "dynamic      - 12 1"
  "static       - 12 12/T"
  "nowait       - 12 1"
  "sections     - 4 4/T"
  "single       - 1 1"
  "masked       - 1 1"
  "critical     - 4 1"
  "lock         - 4 1"
  "tasks        - 12 1"
  "taskgroup    - 12 1"
  "undeferred   - 12 12"
  "chain        - 12 12"
  "diamond      - 4 3"
  "mixed_deps   - 3 2"
  "taskloop     - 12 1"
  "tree         - 16 1"
  "task_in_loop - 8 1"
  "reduction    - 12 1"
  "static1      - 12 1"
  "static2      - 12 2"
  "runtime      OMP_SCHEDULE=dynamic,1 12 1"
  "collapse     - 12 1"
  "ordered      - 12 7"
  "doacross     - 6 6"
  "doacross2    - 16 5"
  "untied       - 12 1"
  "mergeable    - 12 1"
  "final        - 4 4"
  "tg_deep      - 7 1"
  "empty_iter   - 8 1"
  "twdep        - 3 2"
  "detach       - 1 1"
  "testlock     - 4 1"
  "nestlock     - 4 1"
  "tgwait       - 2 1"
  "taskred      - 4 1"
  "tgbar        - 2 1"
  "allmem       - 4 3"
  "nogroup      - 4 1"
  "manylocks    - 2 1"
  "orphans      - 1 1"
)
# The parallelism a run should have: the analytic (2 + W) / (2 + P) in
# units; for a case whose units are all parallel (P = 1), the work over the
# serial units' and the longest unit's time, as the program measured them
# (the analytic value assumes identical units, and a span is a maximum,
# which picks up the VM's noise: 16 units that vary by 10% have a longest
# one ~18% above their mean).
expected() { # W P T ERRFILE
  if [ "$2" = 1 ]; then
    awk -v f="$4" 'BEGIN {
      while ((getline l < f) > 0) {
        if (l ~ /^whatif-expect work=/) { sub(/.*work=/, "", l); w = l + 0 }
        if (l ~ /^whatif-units /) { split(l, a, /[= ]/); s = a[3] + a[5] }
      }
      if (s > 0) printf "%.4f", w / s; else print "none" }'
  else
    awk -v w="$1" -v T="$3" "BEGIN { p = $2; printf \"%.4f\", (2 + w) / (2 + p) }"
  fi
}
# judge NAME ENVSET W P T: runs the case at T threads into $work/NAME-T
# and judges its program parallelism against expected (a run outside 5%:
# two more runs, judged on the median of the three runs' ratios to what
# each should have: a rare scheduling hiccup on a loaded VM can land in a
# fragment).  Returns 1 when whatif itself failed.
judge() {
  local name=$1 envset=$2 W=$3 P=$4 T=$5 want got r
  local out="$work/$name-$T" envs=(OMP_NUM_THREADS=$T)
  [ "$envset" != - ] && envs+=("$envset")
  if ! env "${envs[@]}" "$whatif" run -q --metric cputime -o "$out" -- "$work/constructs" "$name" $C >/dev/null 2>"$out.err"; then
    echo "FAIL: $name T=$T $envset: whatif run failed: $(head -3 "$out.err")"; fail=$((fail + 1)); return 1
  fi
  want=$(expected "$W" "$P" "$T" "$out.err")
  [ "$want" = none ] && { echo "FAIL: $name T=$T: the program printed no measured units"; fail=$((fail + 1)); return 0; }
  got=$(awk -F, '$1 == "program" { print $6 }' "$out/profile.csv")
  if ! within "$got" "$want"; then
    local ratios=("$(awk -v g="$got" -v w="$want" 'BEGIN { printf "%.4f", g / w }')")
    for again in 1 2; do
      env "${envs[@]}" "$whatif" run -q --metric cputime -o "$out" -- "$work/constructs" "$name" $C >/dev/null 2>"$out.err"
      ratios+=("$(awk -F, -v w="$(expected "$W" "$P" "$T" "$out.err")" '$1 == "program" { printf "%.4f", (w > 0 ? $6 / w : 0) }' "$out/profile.csv")")
    done
    r=$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n 2p)
    got=$(awk -v r="$r" -v w="$want" 'BEGIN { printf "%.4f", r * w }')
  fi
  if within "$got" "$want"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $name T=$T $envset: program parallelism $got, expected $want (median of 3 runs, each against its own measured units)"; fail=$((fail + 1))
  fi
  return 0
}
for T in 2 4; do
  for line in "${cases[@]}"; do
    read -r name envset W P <<<"$line"
    judge "$name" "$envset" "$W" "$P" "$T" || continue
    out="$work/$name-$T"
    # every profile: the invariants, and the work the program measured
    # (orphans: 100000 loops whose runtime calls outweigh its units: the
    # runtime's code between their events is work: 0.2-0.4 us a loop on
    # an idle 2-core VM, once 7 us beside two other test suites; only
    # that no unit is lost is checked)
    if [ "$name" = orphans ]; then
      ew=$(sed -n 's/^whatif-expect work=\([0-9]*\).*/\1/p' "$out.err" | tail -1)
      gw=$(awk -F, '$1 == "program" { print $4 }' "$out/profile.csv")
      check_invariants "$out" "$name T=$T" &&
        awk -v g="${gw:-0}" -v e="${ew:-0}" 'BEGIN { exit !(e > 0 && g >= e * 0.97) }' &&
        pass=$((pass + 1)) || { echo "FAIL: orphans T=$T: work ${gw:-none}, the program measured ${ew:-none} of its units"; fail=$((fail + 1)); }
      continue
    fi
    check_invariants "$out" "$name T=$T" || { fail=$((fail + 1)); continue; }
    if first=$(check_expect "$out" "$out.err" "$name T=$T" 3 1500000); then pass=$((pass + 1)); continue; fi
    # the work against the program's own timing is what noise reaches
    # (tgbar once measured 4.5 ms over its program's 40 ms, in 1 of 44
    # runs beside another suite, never in 300 runs alone): two more runs,
    # both within the bound, and the case passes on the median
    again=0 envs=(OMP_NUM_THREADS=$T)
    [ "$envset" != - ] && envs+=("$envset")
    for j in 1 2; do
      env "${envs[@]}" "$whatif" run -q --metric cputime -o "$out-again$j" -- \
        "$work/constructs" "$name" $C >/dev/null 2>"$out-again$j.err" &&
        check_expect "$out-again$j" "$out-again$j.err" "$name T=$T (again, $j)" 3 1500000 &&
        again=$((again + 1))
    done
    if [ $again -eq 2 ]; then
      echo "note: $name T=$T: outside the bound once, within it in two more runs: ${first#FAIL: }" | head -1
      pass=$((pass + 1))
    else
      echo "$first"; fail=$((fail + 1))
    fi
  done
done
# One thread: every case whose parallelism libomp lets us see in a team of
# one (tasks are; loop chunks are not, docs/limits.md).
for line in "tasks - 12 1" "taskgroup - 12 1" "chain - 12 12" "diamond - 4 3" \
            "mixed_deps - 3 2" "taskloop - 12 1" "tree - 16 1" \
            "parallel - 4 1" "barrier - 8 2" "critical - 4 1"; do
  read -r name envset W P <<<"$line"
  judge "$name" "$envset" "$W" "$P" 1
done

for name in barrier nested diamond task_in_loop tree static2 taskloop; do
  out="$work/both-$name"
  OMP_NUM_THREADS=4 OMP_MAX_ACTIVE_LEVELS=2 "$whatif" run -q --mode both --metric cputime -o "$out" -- "$work/constructs" $name $C >/dev/null 2>&1
  if [ -s "$out/profile.csv" ] && cmp -s "$out/profile.csv" "$out/online/profile.csv"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $name: on-the-fly and offline profiles differ"; fail=$((fail + 1))
  fi
  # applied by three threads (the trace is too small for them by default)
  if "$whatif" analyze -q -j 3 -o "$out/j3" "$out/trace" 2>/dev/null &&
     cmp -s "$out/profile.csv" "$out/j3/profile.csv"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $name: whatif analyze -j 3 gives another profile"; fail=$((fail + 1))
  fi
done
# The profile of 100000 orphaned loops stays small (each loop's group is
# freed with it): the profiled process's peak RSS under 20 MB.
rss=$(OMP_NUM_THREADS=2 "$whatif" run -q --metric cputime -o "$work/orph" -- "$work/constructs" orphans 1 2>/dev/null | awk '/maxrss/ { print $2 }')
if [ -n "$rss" ] && [ "$rss" -lt 20000 ]; then pass=$((pass + 1)); else echo "FAIL: orphaned loops: peak RSS ${rss:-?} KB"; fail=$((fail + 1)); fi

# exit() inside a parallel region: status kept, a profile all the same.
out="$work/exit"
OMP_NUM_THREADS=2 "$whatif" run -q --metric cputime -o "$out" -- "$work/constructs" exit $C >/dev/null 2>"$out.err"
rc=$?
if [ $rc -eq 3 ] && [ -s "$out/profile.csv" ] && grep -q '"complete": false' "$out/run.json" \
   && grep -q "exited inside an OpenMP construct" "$out.err"; then
  pass=$((pass + 1))
else
  echo "FAIL: exit inside a region: rc $rc, $(cat "$out.err")"; fail=$((fail + 1))
fi
# teams: refused with one clear line in both modes, never a profile.
for mode in online offline; do
  out="$work/teams-$mode"; rm -rf "$out"
  "$whatif" run -q --mode $mode -o "$out" -- "$work/constructs" teams 1 >/dev/null 2>"$out.err"
  rc=$?
  if [ $rc -ne 0 ] && [ ! -e "$out/profile.csv" ] && grep -q "teams at [^ ]*constructs.c:[0-9]* is not supported" "$out.err"; then
    pass=$((pass + 1))
  else
    echo "FAIL: teams ($mode): rc $rc, $(cat "$out.err")"; fail=$((fail + 1))
  fi
done
# A bad setting: one line on stderr, the program runs unprofiled, its
# output and exit status unchanged.
tool="$(dirname "$(realpath "$whatif")")/../lib/libwhatif.so"
for bad in WHATIF_MODE=sideways WHATIF_METRIC=no-such-event; do
  env "$bad" WHATIF_OUT="$work/bad" OMP_TOOL_LIBRARIES="$tool" OMP_NUM_THREADS=2 "$work/constructs" parallel 1 >"$work/bad.out" 2>"$work/bad.all"
  rc=$?
  got=$(cat "$work/bad.out")
  grep -v '^whatif-\(expect\|units\) ' "$work/bad.all" >"$work/bad.err" # the program's own line
  if [ $rc -eq 0 ] && [ "$got" = "ok parallel" ] && [ "$(wc -l <"$work/bad.err")" -eq 1 ] \
     && grep -q "${bad%%=*}.*profiling disabled" "$work/bad.err"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $bad: rc $rc, out '$got', err '$(cat "$work/bad.err")'"; fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
