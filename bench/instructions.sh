#!/usr/bin/env bash
# instructions.sh - what the profiler costs per task, loop chunk or
# barrier, in instructions executed: counted by valgrind's callgrind, so
# the same build gives the same count on any run.  Timings on a shared
# machine move by 3-40% between runs; an instruction count shows a change
# to a callback's path of 1% (it does not show cache misses or contention:
# bench/overhead.sh and bench/real.sh time those).
#
#   bench/instructions.sh [OUT_DIR]     (default bench/results)
#   BUILD=DIR: the build to measure (default build)
#
# Each workload runs at two sizes under each configuration (empty: an
# OMPT tool that registers the callbacks and reads a clock; online;
# online-whatif: on the fly with the six default what-if factors, as a
# program carrying whatif.h annotations gets them; offline); the difference between the sizes over the difference of their
# instance counts is the cost of one instance, start-up and finish left
# out.  Counts are split by where they ran: the profiler, the OpenMP
# runtime, the rest (program, C library, kernel entry stubs).  Writes
# instructions.csv and prints it as a table.  Needs valgrind (apt-get
# install valgrind); takes about a minute.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/bench/results}"
build="${BUILD:-$root/build}"
case $build in /*) ;; *) build="$PWD/$build" ;; esac
# One thread: valgrind runs a program's threads one at a time, and a
# second thread's idle spinning in the runtime would count differently on
# every run.
export OMP_NUM_THREADS=1
[ -f "$build/lib/libwhatif.so" ] || { echo "instructions.sh: build first (./setup.sh)" >&2; exit 1; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# Debian 12's valgrind cannot read clang-19's DWARF 5 line tables: the
# programs are built with DWARF 4 and the profiler measured without its
# debug sections (its symbol table names the functions all the same).
cc="clang-19 -O2 -gdwarf-4 -fopenmp"
$cc -shared -fPIC "$root/bench/empty_tool.c" -o "$work/libempty.so" || exit 1
$cc "$root/bench/micro.c" -o "$work/micro" || exit 1
objcopy --strip-debug "$build/lib/libwhatif.so" "$work/libwhatif.so" || exit 1

# The metric the counts stand for on every machine: thread CPU time (the
# default without a PMU).  A PMU metric's reads are the kernel's (read(2)
# under valgrind, which cannot run rdpmc), not what a real run pays.
metric=WHATIF_METRIC=cputime

# micro runs a warm-up of reps/10+1 instances, then 5 batches of reps
micro_instances() { echo $(( $1 / 10 + 1 + 5 * $1 )); }

# name|command at the small size|at the large size|instances of each
workloads=(
  "fib tree: a task|$work/micro fibtree 4|$work/micro fibtree 16|$(( $(micro_instances 4) * 464 )) $(( $(micro_instances 16) * 464 ))"
  "task (single producer)|$work/micro task 400|$work/micro task 1600|$(micro_instances 400) $(micro_instances 1600)"
  "task + taskwait|$work/micro taskwait 400|$work/micro taskwait 1600|$(micro_instances 400) $(micro_instances 1600)"
  "taskgroup|$work/micro taskgroup 400|$work/micro taskgroup 1600|$(micro_instances 400) $(micro_instances 1600)"
  "for static|$work/micro static 100|$work/micro static 400|$(micro_instances 100) $(micro_instances 400)"
  "barrier|$work/micro barrier 200|$work/micro barrier 800|$(micro_instances 200) $(micro_instances 800)"
)

# count CONFIG CMD...: "profiler runtime rest" instructions of one run
count() {
  local config=$1; shift
  local envs=()
  case $config in
    empty) envs=(OMP_TOOL_LIBRARIES="$work/libempty.so") ;;
    online|offline)
      envs=(LD_PRELOAD="$work/libwhatif.so" WHATIF_PRELOAD=1
            WHATIF_MODE=$config WHATIF_OUT="$work/out" $metric) ;;
    online-whatif)
      envs=(LD_PRELOAD="$work/libwhatif.so" WHATIF_PRELOAD=1
            WHATIF_MODE=online WHATIF_FACTORS=2,4,8,16,64,inf
            WHATIF_OUT="$work/out" $metric) ;;
  esac
  rm -rf "$work/out" "$work/cg.out"
  env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$@" >/dev/null 2>"$work/err" || { echo "instructions.sh: $* failed under $config:" >&2; tail -3 "$work/err" >&2; exit 1; }
  callgrind_annotate --threshold=100 "$work/cg.out" 2>/dev/null | awk '
    /^ *[0-9,]+ .*\]$/ { # a function: "count (share) file:function [object]"
      n = $1; gsub(",", "", n)
      if (index($0, "[" W "]")) p += n
      else if ($0 ~ /libomp/) r += n
      else o += n
    }
    END { printf "%d %d %d\n", p, r, o }' W="$work/libwhatif.so"
}

csv="$out/instructions.csv"
echo "workload,config,profiler_per_instance,runtime_per_instance,rest_per_instance,total_per_instance" >"$csv"
for w in "${workloads[@]}"; do
  IFS='|' read -r name small large counts <<<"$w"
  read -r n1 n2 <<<"$counts"
  for config in empty online online-whatif offline; do
    read -r p1 r1 o1 < <(count $config $small) || exit 1
    read -r p2 r2 o2 < <(count $config $large) || exit 1
    awk -v name="$name" -v c=$config -v d=$(( n2 - n1 )) \
        -v p=$(( p2 - p1 )) -v r=$(( r2 - r1 )) -v o=$(( o2 - o1 )) \
        'BEGIN { printf "\"%s\",%s,%.0f,%.0f,%.0f,%.0f\n", name, c, p / d, r / d, o / d, (p + r + o) / d }' >>"$csv"
  done
done
{
  echo "| workload | config | profiler | runtime | rest | total (instructions per instance) |"
  echo "|---|---|---:|---:|---:|---:|"
  tail -n +2 "$csv" | sed 's/"//g' | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
} | tee "$out/instructions.md"
