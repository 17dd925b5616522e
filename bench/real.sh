#!/usr/bin/env bash
# real.sh - whatif on real third-party programs, as a user runs it: the
# wall time of `whatif run -- PROG` (profile written, analysis included)
# over the plain run, next to an empty OMPT tool (the runtime's own cost of
# having a tool), the same tool reading the clock and storing a record
# at every event (the floor of any tool that times every event), and
# reading it only where whatif reads its metric on the task path, the
# runtime calls whatif wraps included (the floor of whatif's way of
# measuring a task program; bench/empty_tool.c).  Configurations run
# interleaved (none, empty, timed, reads, on the fly, offline, then
# again), so that every ratio compares runs of the same moment; the
# median of REPEATS rounds is reported.
#
#   bench/real.sh BOTS_SOURCE_DIR [OUT_DIR] [REPEATS]
#                 (defaults: bench/results, 3)
#
# BOTS_SOURCE_DIR is a checkout of the Barcelona OpenMP Tasks Suite
# (github.com/bsc-pm/bots); it is copied and built here with clang-19
# (set BOTS_BUILD_DIR to keep and reuse the build).  Writes
# real-programs.csv and real-programs.md into OUT_DIR.  Not part of the test
# suite: it takes about ten minutes and its numbers depend on the machine.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:?usage: bench/real.sh BOTS_SOURCE_DIR [OUT_DIR] [REPEATS]}"
out="${2:-$root/bench/results}"
reps="${3:-3}"
threads="${OMP_NUM_THREADS:-2}"
export OMP_NUM_THREADS=$threads
whatif="$root/build/bin/whatif"
[ -x "$whatif" ] || { echo "real.sh: build first (./setup.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "real.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
[ -f "$src/omp-tasks/Makefile" ] || { echo "real.sh: $src is not a BOTS checkout" >&2; exit 1; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bots="${BOTS_BUILD_DIR:-$work/bots}"

# BOTS's configure probes compilers by name; the settings it would write
# are these (clang-19, -O2 -g, final clauses on).
if [ ! -d "$bots/bin" ] || [ -z "$(ls "$bots/bin" 2>/dev/null)" ]; then
  mkdir -p "$bots" && cp -r "$src/." "$bots/" && mkdir -p "$bots/bin" || exit 1
  cat >"$bots/config/make.config" <<'EOF'
LABEL=clang
OMPC=clang-19 -fopenmp
CC=clang-19
OMPLINK=clang-19 -fopenmp
CLINK=clang-19
OPT_FLAGS=-O2 -g
USE_FINAL_CLAUSE=yes
EOF
  echo "real.sh: building BOTS in $bots (a few minutes)" >&2
  (cd "$bots" && make -k >"$bots/build.log" 2>&1)
fi
clang-19 -O2 -fopenmp -shared -fPIC "$root/bench/empty_tool.c" -o "$work/libempty.so" || exit 1
clang-19 -O2 -fopenmp -shared -fPIC -DRECORD "$root/bench/empty_tool.c" -o "$work/libtimed.so" || exit 1
clang-19 -O2 -fopenmp -shared -fPIC -DRECORD -DRECORD_RT "$root/bench/empty_tool.c" -o "$work/libreads.so" || exit 1

# name, binary, arguments: inputs that run 0.3-4 s at 2 threads
programs=(
  "fib|fib.clang.omp-tasks|-n 28"
  "fib-manual|fib.clang.omp-tasks-manual|-n 41"
  "nqueens|nqueens.clang.omp-tasks|-n 11"
  "sort|sort.clang.omp-tasks|-n 8000000"
  "sparselu-for|sparselu.clang.for-omp-tasks|-n 80 -m 50"
  "sparselu-single|sparselu.clang.single-omp-tasks|-n 50 -m 70"
  "health|health.clang.omp-tasks|-f inputs/health/small.input"
  "floorplan|floorplan.clang.omp-tasks-manual-tied|-f inputs/floorplan/input.15"
  "fft|fft.clang.omp-tasks|-n 4194304"
  "strassen|strassen.clang.omp-tasks|-n 2048"
  "alignment|alignment.clang.for-omp-tasks|-f inputs/alignment/prot.20.aa"
  "uts|uts.clang.omp-tasks|-f inputs/uts/test.input"
)

# run CONFIG BINARY ARGS...: prints the wall seconds; stderr to $work/err
run() {
  local config=$1; shift
  rm -rf "$work/out-$config"
  case $config in
    none) /usr/bin/time -f "%e" -o "$work/time" "$@" >/dev/null 2>"$work/err" ;;
    empty|timed) OMP_TOOL_LIBRARIES="$work/lib$config.so" \
             /usr/bin/time -f "%e" -o "$work/time" "$@" >/dev/null 2>"$work/err" ;;
    reads) LD_PRELOAD="$work/libreads.so" OMP_TOOL_LIBRARIES="$work/libreads.so" \
             /usr/bin/time -f "%e" -o "$work/time" "$@" >/dev/null 2>"$work/err" ;;
    online|offline)
      /usr/bin/time -f "%e" -o "$work/time" "$whatif" run -q --mode $config \
        -o "$work/out-$config" -- "$@" >/dev/null 2>"$work/err" ;;
  esac
  local rc=$?
  [ $rc -eq 0 ] || echo "real.sh: $config $*: exit $rc: $(grep -v '^whatif: note' "$work/err" | head -2)" >&2
  tail -1 "$work/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
json() { sed -n "s/^  \"$2\": \\([0-9.]*\\),*$/\\1/p" "$1" 2>/dev/null | head -1; }

csv="$out/real-programs.csv"
echo "program,command,threads,none_s,empty_x,timed_x,reads_x,online_x,offline_x,nodes,trace_bytes_per_node,trace_mb_per_s,analyzer_s,online_peak_live_nodes" >"$csv"
cd "$bots" || exit 1
for p in "${programs[@]}"; do
  IFS='|' read -r name bin args <<<"$p"
  [ -x "bin/$bin" ] || { echo "real.sh: bin/$bin was not built (see $bots/build.log)" >&2; continue; }
  : >"$work/none" >"$work/empty" >"$work/timed" >"$work/reads" >"$work/online" >"$work/offline"
  for ((r = 0; r < reps; r++)); do
    for c in none empty timed reads online offline; do
      # shellcheck disable=SC2086  # args is a word list
      run $c "bin/$bin" $args >>"$work/$c"
      [ $c = online ] && peak=$(json "$work/out-online/run.json" peak_live_nodes)
      if [ $c = offline ]; then
        j="$work/out-offline/run.json"
        nodes=$(json "$j" nodes); bytes=$(json "$j" trace_bytes)
        if [ $r -eq 0 ]; then # the whole analysis, opportunities included
          rm -rf "$work/analysis"
          /usr/bin/time -f "%e" -o "$work/time" "$whatif" analyze -q \
            -o "$work/analysis" "$work/out-offline/trace" >/dev/null 2>&1
          ana=$(tail -1 "$work/time")
        fi
      fi
    done
  done
  none=$(median <"$work/none")
  ratio() { awk -v a="$(median <"$work/$1")" -v b="$none" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
  bpn=$(awk -v b="${bytes:-0}" -v n="${nodes:-0}" 'BEGIN { printf "%.1f", (n > 0 ? b / n : 0) }')
  mbs=$(awk -v b="${bytes:-0}" -v t="$none" 'BEGIN { printf "%.1f", (t > 0 ? b / t / 1e6 : 0) }')
  echo "$name,$bin $args,$threads,$none,$(ratio empty),$(ratio timed),$(ratio reads),$(ratio online),$(ratio offline),${nodes:-0},$bpn,$mbs,$ana,${peak:-0}" >>"$csv"
  tail -1 "$csv" >&2
done

# The table, with geometric means of the ratios.
{
  echo "| program | plain s | empty tool | clock per event | reads as whatif | whatif on the fly | whatif offline | nodes | trace B/node | trace MB/s | analysis s | live nodes at most |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 { printf "| %s | %.2f | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %d | %.1f | %.1f | %.2f | %d |\n", $1, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }' "$csv"
  awk -F, 'NR > 1 { n++; e += log($5); t += log($6); r += log($7); o += log($8); f += log($9);
                    if ($6 > mt) mt = $6; if ($7 > mr) mr = $7; if ($8 > mo) mo = $8; if ($9 > mf) mf = $9 }
           END { if (n) printf "| geometric mean (worst) | | %.2fx | %.2fx (%.2fx) | %.2fx (%.2fx) | %.2fx (%.2fx) | %.2fx (%.2fx) | | | | | |\n",
                       exp(e / n), exp(t / n), mt, exp(r / n), mr, exp(o / n), mo, exp(f / n), mf }' "$csv"
} >"$out/real-programs.md"
cat "$out/real-programs.md"
