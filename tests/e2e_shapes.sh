#!/usr/bin/env bash
# e2e_shapes.sh - the program shapes that once lost a profile or got a
# wrong one (tests/e2e/shapes.c), at 2, 4 and 8 threads, each run in
# "both" mode: the on-the-fly profile and the offline analysis of the same
# run must be identical, both must exist, every profile must satisfy the
# invariants (e2e_lib.sh), the instance counts must not exceed what the
# program ran, and the program row must agree with the work and span the
# program measured of itself.
# Usage: e2e_shapes.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$1; work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
mkdir -p "$work"
clang-19 -fopenmp -g -O2 "$here/e2e/shapes.c" -o "$work/shapes" -lpthread || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "$1"; fail=$((fail + 1)); }

# case  env  repetitions
cases=(
  "taskloop_split - 3"
  "taskloop_nogroup - 2"
  "taskloop_huge  - 1"
  "taskloop_rec   - 2"
  "taskloop_nt    - 1"
  "nest_deep      OMP_MAX_ACTIVE_LEVELS=8 2"
  "nest_wide      OMP_MAX_ACTIVE_LEVELS=2 2"
  "dup            - 1"
  "untied         - 3"
  "untied_mix     - 2"
  "pthreads       - 1"
  "pthreads10     - 1"
  "nowait_tasks   - 2"
  "tasks_loop     - 1"
  "loop_tasks_loop - 1"
  "dir_nowait_tw  - 1"
  "pretask_tw     - 2"
  "tw_outer_tg    - 2"
  "many_kinds     - 2"
)
# Untied tasks: the events name the task a thread runs, so the tool asks
# the runtime only where a part ended with no event (rare): at most one
# task in 1000 (it asked at every event of an untied task once, then
# after every requeue: 15,709 times for 85,789 tasks at 2 threads; at
# each taskgroup's end: 369 times for 369 tasks of untied_mix).
check_queries() {
  local dir=$1 err=$2 what=$3 tasks q
  tasks=$(sed -n 's/^whatif-count task \([0-9]*\)$/\1/p' "$err" | tail -1)
  [ -n "$tasks" ] || return 0
  q=$(sed -n 's/.*"runtime_task_queries": \([0-9]*\).*/\1/p' "$dir/run.json")
  if [ -z "$q" ] || [ "$q" -gt $((tasks / 1000)) ]; then
    echo "FAIL: $what: the tool asked the runtime which task runs ${q:-?} times for $tasks tasks"
    return 1
  fi
}

# clang begins every untied task with a part that only queues the task
# again (kmp_task_t.part_id 1): the tool leaves it out, and counts it.
# Every task of untied and untied_mix is untied; a worker's last few
# counts (under 32) reach run.json only if it ended before the profile.
check_first_parts() {
  local dir=$1 err=$2 what=$3 threads=$4 tasks n
  tasks=$(sed -n 's/^whatif-count task \([0-9]*\)$/\1/p' "$err" | tail -1)
  n=$(sed -n 's/.*"untied_first_parts": \([0-9]*\).*/\1/p' "$dir/run.json")
  if [ -z "$tasks" ] || [ -z "$n" ] || [ "$n" -gt "$tasks" ] ||
     [ "$n" -lt $((tasks - 31 * (threads - 1))) ]; then
    echo "FAIL: $what: ${n:-no} untied first parts recognized for ${tasks:-?} untied tasks"
    return 1
  fi
}

for T in 2 4 8; do
  for line in "${cases[@]}"; do
    read -r name envset reps <<<"$line"
    envs=(OMP_NUM_THREADS=$T); [ "$envset" != - ] && envs+=("$envset")
    for ((k = 0; k < reps; k++)); do
      out="$work/$name-$T-$k"; rm -rf "$out"
      what="$name T=$T run $k"
      if ! env "${envs[@]}" "$whatif" run -q --mode both --metric cputime \
             -o "$out" -- "$work/shapes" "$name" >/dev/null 2>"$out.err"; then
        ko "FAIL: $what: whatif run failed: $(grep -v '^whatif-' "$out.err" | head -3)"
        continue
      fi
      if [ ! -s "$out/profile.csv" ] || ! cmp -s "$out/profile.csv" "$out/online/profile.csv"; then
        ko "FAIL: $what: no profile, or the on-the-fly and offline profiles differ"
        continue
      fi
      # the trace applied by three threads (one per stream, up to 3; too
      # small for them by default) gives the same profile
      if ! "$whatif" analyze -q -j 3 -o "$out/j3" "$out/trace" 2>/dev/null ||
         ! cmp -s "$out/profile.csv" "$out/j3/profile.csv"; then
        ko "FAIL: $what: whatif analyze -j 3 gives another profile"
        continue
      fi
      # every record reached the trace (a record the writer refuses, such
      # as a wait that ends before it starts, is counted and said)
      if grep -q 'could not be written' "$out.err"; then
        ko "FAIL: $what: $(grep 'could not be written' "$out.err")"
        continue
      fi
      # the runtime's own code inside the fragments (task creation,
      # stealing) grows with oversubscription: 8 threads on a 2-core
      # machine beside other work once put taskloop_rec's span 2.16 ms
      # over the program's own 20.8 ms
      slack=$((T > 4 ? 3000000 : 1500000)) pct=3
      # nest_deep runs 2^8 threads whatever T, in 254 inner region
      # instances, whose teams' runtime code counts as work (docs/limits.md:
      # 30-60 us each, the largest in a thread's first fragment): its work
      # came 7.4-15.2 ms over the program's own 175 ms in 20 runs on the
      # AMD EPYC VM, alone and beside the suite, before 5c96338 as after.  The
      # bound, as before for the span (6% + 3 ms), and 40 us more for each
      # inner instance for the work.
      work_extra=0
      [ "$name" = nest_deep ] && { slack=3000000; pct=6; work_extra=$((254 * 40000)); }
      if ! { check_invariants "$out" "$what" && check_counts "$out" "$out.err" "$what" &&
             check_queries "$out" "$out.err" "$what" &&
             { [ "${name#untied}" = "$name" ] || check_first_parts "$out" "$out.err" "$what" $T; }; }; then
        fail=$((fail + 1))
        continue
      fi
      if first=$(check_expect "$out" "$out.err" "$what" $pct $slack $work_extra); then ok; continue; fi
      # Work and span against the program's own timing are the only
      # checks noise reaches (a span is a maximum: a fragment the VM
      # stretched, beside the rest of the suite, once put nest_wide's span
      # 0.3 ms past its bound, its usual excess 0.6-1.0 ms): two more
      # runs, both within it, and the case passes on the median.
      again=0
      for j in 1 2; do
        env "${envs[@]}" "$whatif" run -q --metric cputime -o "$out-again$j" -- \
          "$work/shapes" "$name" >/dev/null 2>"$out-again$j.err" &&
          check_expect "$out-again$j" "$out-again$j.err" "$what (again, $j)" $pct $slack $work_extra &&
          again=$((again + 1))
      done
      if [ $again -eq 2 ]; then
        echo "note: $what: outside the bound once, within it in two more runs: ${first#FAIL: }" | head -1
        ok
      else
        echo "$first"; fail=$((fail + 1))
      fi
    done
  done
done

# A taskloop without a taskgroup is reported by libomp at an address of
# its own, found again by walking the stack, where the preloaded wrapper's
# frame stands for the program's call site: the row is the program's line.
out="$work/taskloop_nogroup-2-0"
line=$(grep -n 'pragma omp taskloop grainsize(1) nogroup' "$here/e2e/shapes.c" | head -1 | cut -d: -f1)
if grep -q "^[^,]*shapes.c:$line,taskloop," "$out/profile.csv" &&
   ! grep -q 'interpose\|libwhatif\|libomp' "$out/profile.csv"; then ok; else
  ko "FAIL: taskloop_nogroup: the taskloop is not located at shapes.c:$line ($(cut -d, -f1-3 "$out/profile.csv" | tr '\n' ' '))"
fi

# A taskwait that ends a region's body returns into the runtime (a tail
# call): named by the line the compiler passed the runtime, not libomp's.
out="$work/tw_tail"; rm -rf "$out"
OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/shapes" tw_tail >/dev/null 2>"$out.err"
line=$(awk '/^static void tw_tail/ { f = 1 } f && /pragma omp taskwait/ { print NR; exit }' "$here/e2e/shapes.c")
tail_jumps=$(objdump -d "$work/shapes" | grep -c 'jmp .*<__kmpc_omp_taskwait@plt>')
if [ "$tail_jumps" -ge 1 ] &&
   grep -q "^[^,]*shapes.c:$line,taskwait,2," "$out/profile.csv" &&
   ! grep -q 'libomp' "$out/profile.csv"; then ok; else
  ko "FAIL: tw_tail: the taskwait is not located at shapes.c:$line, or is no tail call ($(cut -d, -f1-3 "$out/profile.csv" 2>/dev/null | tr '\n' ' '))"
fi

# The same, built as most projects build: the compiler given a path
# relative to its directory, the program profiled from elsewhere.  The
# ident_t's file is relative to where it was compiled; the row must name
# it as every other row does, relative to where the profile was taken.
mkdir -p "$work/rel/src" && cp "$here/e2e/shapes.c" "$work/rel/src/" &&
  (cd "$work/rel/src" && clang-19 -fopenmp -g -O2 -I"$here/e2e" shapes.c -o ../shapes -lpthread) || exit 1
for from in "$work/rel" /; do
  out="$work/tw_tail_rel$([ "$from" = / ] && echo _root)"; rm -rf "$out"
  (cd "$from" && OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/rel/shapes" tw_tail >/dev/null 2>"$out.err")
  want=src/shapes.c; [ "$from" = / ] && want="$work/rel/src/shapes.c"
  if grep -q "^$want:$line,taskwait,2," "$out/profile.csv"; then ok; else
    ko "FAIL: tw_tail built in its directory, profiled from $from: the taskwait is not named $want:$line ($(cut -d, -f1-3 "$out/profile.csv" 2>/dev/null | tr '\n' ' '))"
  fi
done

# A parallel region that is the whole body of another is tail-called by
# the outer body: it still gets its own line, not the runtime's address.
out="$work/nest_wide-2-0"
inner=$(grep -n 'pragma omp parallel num_threads(3)' "$here/e2e/shapes.c" | head -1 | cut -d: -f1)
if grep -q "^[^,]*shapes.c:$inner,parallel,160," "$out/profile.csv" &&
   ! grep -q 'libomp' "$out/profile.csv"; then ok; else
  ko "FAIL: nest_wide: the inner region is not located at shapes.c:$inner ($(cut -d, -f1-3 "$out/profile.csv" | tr '\n' ' '))"
fi

# A taskwait in a taskgroup that also waits for a task created before it
# is noted (the graph cannot join that task there); one in a chunk that
# waits for its own chunk's task only, and the taskwaits after nowait
# loops of nowait_tasks and in pretask_tw's chunks, are not.
out="$work/tw_outer"; rm -rf "$out"
OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/shapes" tw_outer >/dev/null 2>"$out.err"
lines=$(awk '/^static void tw_outer/ { f = 1 } f && /pragma omp taskwait/ { print NR } /^}/ { f = 0 }' "$here/e2e/shapes.c")
first=$(head -1 <<<"$lines"); second=$(tail -1 <<<"$lines")
if grep -q "shapes.c:$first (taskwait): a taskwait inside a loop chunk" "$out.err" &&
   [ "$(sqlite3 "$out/profile.db" "SELECT count(*) FROM note WHERE note = 'taskwait_outer'")" = 1 ] &&
   ! grep -q "shapes.c:$second (taskwait)" "$out.err" &&
   ! grep -q taskwait_outer "$work"/nowait_tasks-*/run.json "$work"/pretask_tw-*/run.json; then
  ok
else
  ko "FAIL: tw_outer: the taskwait at shapes.c:$first is not noted alone ($(grep -c taskwait_outer "$out/run.json" "$work"/nowait_tasks-*/run.json | tr '\n' ' '))"
fi

# A detached task whose dependent task waits for the event's fulfilment
# (the graph has it wait for the task's code only): noted on the task.
out="$work/detach_deps"; rm -rf "$out"
OMP_NUM_THREADS=2 "$whatif" run -q --mode both -o "$out" -- "$work/shapes" detach_deps >/dev/null 2>"$out.err"
line=$(grep -n 'pragma omp task detach(ev) depend' "$here/e2e/shapes.c" | cut -d: -f1)
if grep -q "shapes.c:$line (task): a task with depend items ended its code before" "$out.err" &&
   [ "$(sqlite3 "$out/profile.db" "SELECT count(*) FROM note WHERE note = 'detach_deps'")" = 1 ] &&
   cmp -s "$out/profile.csv" "$out/online/profile.csv"; then
  ok
else
  ko "FAIL: detach_deps: no detach_deps note at shapes.c:$line ($(grep -v '^whatif-' "$out.err" | head -2))"
fi

# The loop inside a serialized nested region is a lower bound: noted.
out="$work/inner"
OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/shapes" inner_serial >/dev/null 2>"$out.err"
if grep -q 'shapes.c:[0-9]* (loop): ran in a team of one' "$out.err" &&
   grep -q '"note": "one_thread_loop"' "$out/run.json" &&
   [ "$(sqlite3 "$out/profile.db" "SELECT count(*) FROM note WHERE note = 'one_thread_loop'")" = 1 ]; then
  ok
else
  ko "FAIL: inner_serial: no one_thread_loop note ($(head -2 "$out.err"))"
fi

# A program whose main runs one region and nothing else: the serial work
# charged to the program stays far below the 10-20 ms the start-up once
# added (linked in) -- a margin no noise crosses; docs/performance.md
# has the measured median.
clang-19 -fopenmp -g -O2 "$here/e2e/shapes.c" "$(dirname "$(realpath "$whatif")")/../lib/libwhatif.a" \
  -Wl,-u,ompt_start_tool -lsqlite3 -ldw -lelf -lm -lpthread -o "$work/shapes_linked" || exit 1
# Started by its first construct or by an API call (omp_get_max_threads),
# preloaded or linked in: the least of three runs under 250 us (measured
# 8-27 us on an Intel Xeon VM, up to 83-128 us beside two busy processes;
# 75-125 us on an AMD EPYC VM unloaded, the same before and after the
# 2026-12-05 changes, and 100-185 us beside the other tests, which the
# earlier 100 us bound failed; the runtime's start-up, 120-220 us
# unloaded, once counted on top, and the tool's own 10-20 ms before that).
# Noise only adds work, so the least run is the estimate.
for how in preloaded linked; do
  for case in startup startup_api; do
    runs=()
    for k in 1 2 3; do
      out="$work/$case-$how"; rm -rf "$out"
      if [ $how = preloaded ]; then
        OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/shapes" $case >/dev/null 2>&1
      else
        OMP_NUM_THREADS=2 WHATIF_OUT="$out" "$work/shapes_linked" $case >/dev/null 2>&1
      fi
      runs+=("$(awk -F, '$1 == "program" && NR > 1 { print $7 }' "$out/profile.csv" 2>/dev/null)")
    done
    serial=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 1p)
    if [ -n "$serial" ] && [ "$serial" -lt 250000 ]; then ok; else
      ko "FAIL: $case ($how): the program's serial work is ${runs[*]} ns"; fi
  done
done

# Two regions whose runtime calls the compiler merged into one are told
# apart by the line the compiler passed the runtime (ident_t).
# Also run from the sources' directory, where locations are named
# relative to it and the compiler's ident_t holds the absolute path.
lines=($(grep -n 'pragma omp parallel reduction(+ : s)' "$here/e2e/shapes.c" | cut -d: -f1))
work_abs=$(cd "$work" && pwd)
for from in . "$here/e2e"; do
  for b in a b; do
    want=${lines[0]}; [ $b = b ] && want=${lines[1]}
    out="$work_abs/merged-$b"; rm -rf "$out"
    (cd "$from" && OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work_abs/shapes" merged_$b >/dev/null 2>"$out.err")
    if grep -q "^[^,]*shapes.c:$want,parallel,1," "$out/profile.csv" 2>/dev/null; then ok; else
      ko "FAIL: merged_$b (run from $from): the region is not located at shapes.c:$want ($(grep parallel "$out/profile.csv" 2>/dev/null | cut -d, -f1))"; fi
  done
done

# The runtime's own time is not work: handing out a dynamic chunk costs
# the runtime 0.1-0.3 us, far more than these chunks' code, and once made
# the loop's work 60-70% of the process's CPU time (more than the whole
# plain run's); it is now a few percent.  A third leaves room for noise.
for T in 2 8; do
  out="$work/tiny-$T"; rm -rf "$out"
  OMP_NUM_THREADS=$T "$whatif" run -q -o "$out" -- "$work/shapes" tiny_chunks >/dev/null 2>"$out.err"
  cpu=$(sed -n 's/^whatif-cpu ns=//p' "$out.err")
  w=$(awk -F, '$1 == "program" && NR > 1 { print $4 }' "$out/profile.csv" 2>/dev/null)
  if [ -n "$cpu" ] && [ -n "$w" ] && [ "$((w * 3))" -lt "$cpu" ]; then ok; else
    ko "FAIL: tiny_chunks T=$T: work ${w:-?} ns of ${cpu:-?} ns of CPU"; fi
done

# Likewise creating a task: the runtime allocates it, the program's code
# copies its data in, the runtime queues it, and the tool's wrappers run
# around both calls.  The single's own code between two of its 10^6
# creations is a loop step; its work was 27-39% of task_create_cost
# (56-83 ns a task), the wrappers' code between the allocation and the
# queueing included, and is 6-14% since the allocation's span goes on
# into the queueing (tool_alloc_leave).  A run above a fifth gets two
# more, both of which must be under it.
line=$(grep -n 'pragma omp single' "$here/e2e/shapes.c" | awk -F: -v f="$(grep -n '"task_flood"' "$here/e2e/shapes.c" | cut -d: -f1)" '$1 > f { print $1; exit }')
flood_share() { # OUT: the single's work over task_create_cost, in %, of 10^6 tasks
  local w c
  w=$(grep "shapes.c:$line,single," "$1/profile.csv" 2>/dev/null | cut -d, -f4)
  c=$(sed -n 's/.*"task_create_cost": \([0-9]*\).*/\1/p' "$1/run.json" 2>/dev/null)
  [ -n "$w" ] && [ -n "$c" ] && [ "$c" -gt 0 ] && echo $((w / 10000 / c))
}
flood_run() { # prints the share of one run at 2 threads ("?": no profile)
  rm -rf "$work/flood"
  OMP_NUM_THREADS=2 "$whatif" run -q -o "$work/flood" -- "$work/shapes" task_flood >/dev/null 2>&1
  flood_share "$work/flood" || echo "?"
}
first=$(flood_run); shares=$first
if [ "$first" != "?" ] && [ "$first" -ge 20 ]; then
  shares="$first, then $(flood_run) and $(flood_run)"
  case $shares in *\?*) ;; *)
    read -r a b <<<"$(echo "$shares" | sed 's/.*then \([0-9]*\) and \([0-9]*\)/\1 \2/')"
    [ "$a" -lt 20 ] && [ "$b" -lt 20 ] &&
      { echo "note: task_flood: the single's work per task was $shares% of task_create_cost"; first=0; } ;;
  esac
fi
if [ "$first" != "?" ] && [ "$first" -lt 20 ]; then ok; else
  ko "FAIL: task_flood T=2: the single at shapes.c:$line worked $shares% of task_create_cost per task (under 20% wanted)"; fi

# ... but where the task's data is large (or, in C++, has destructors,
# and so copy constructors), copying it is the creator's work: 20,000
# tasks of 96 KB of firstprivate data.  The single's work was 2.3-7x the
# time the program measured for the same copies (page faults included
# there), 0.7-0.8x when the copy counted as the runtime's.
out="$work/task-copy"; rm -rf "$out"
OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/shapes" task_copy >/dev/null 2>"$out.err"
copy=$(sed -n 's/^whatif-copy ns=//p' "$out.err")
line=$(awk '/"task_copy"/ { f = 1 } f && /pragma omp single/ { print NR; exit }' "$here/e2e/shapes.c")
w=$(grep "shapes.c:$line,single," "$out/profile.csv" 2>/dev/null | cut -d, -f4)
if [ -n "$copy" ] && [ -n "$w" ] && [ "$w" -ge "$copy" ]; then ok; else
  ko "FAIL: task_copy T=2: the single at shapes.c:$line worked ${w:-?} ns, its tasks' copies took ${copy:-?} ns"; fi

# The same in C++ (tests/e2e/task_copy.cc): a std::vector of 32 KB taken
# by value, copied by its copy constructor (it has a destructor, so the
# allocation's span never stays open): the single's work was 6x the
# program's own timing of the copies, 0.65x when the copy counted as the
# runtime's.  And an object whose copy constructor reads 32 KB but whose
# destructor is trivial, which only the measured gap between allocation
# and queueing tells apart (ALLOC_GAP_MAX): 1.1-1.2x, 0.08x without it.
# And an if() expression that reads 32 KB only where it makes the task
# undeferred: the queued half measures a short gap, the undeferred half
# marks the construct (alloc_unqueued) for good.
if clang++-19 -fopenmp -g -O2 "$here/e2e/task_copy.cc" -o "$work/task_copy"; then
  for mode in vector:100 ctor:50 ifexpr:50; do
    name=${mode%%:*} want=${mode##*:}
    out="$work/task-copy-$name"; rm -rf "$out"
    OMP_NUM_THREADS=2 "$whatif" run -q -o "$out" -- "$work/task_copy" $name >/dev/null 2>"$out.err"
    copy=$(sed -n 's/^whatif-copy ns=//p' "$out.err")
    line=$(awk -v f="${name}_tasks()" 'index($0, "static void " f) { g = 1 } g && /pragma omp single/ { print NR; exit }' "$here/e2e/task_copy.cc")
    w=$(grep "task_copy.cc:$line,single," "$out/profile.csv" 2>/dev/null | cut -d, -f4)
    if [ -n "$copy" ] && [ -n "$w" ] && [ "$((w * 100))" -ge "$((copy * want))" ]; then ok; else
      ko "FAIL: task_copy.cc $name T=2: the single at task_copy.cc:$line worked ${w:-?} ns, its tasks' copies took ${copy:-?} ns (at least $want% wanted)"; fi
  done
else
  ko "FAIL: task_copy.cc does not compile with clang++-19"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
