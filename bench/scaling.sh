#!/usr/bin/env bash
# scaling.sh - how whatif's cost grows with threads: real programs run with
# 1, 2, 4, ... threads (up to the CPUs), each plain, with an empty OMPT
# tool, and under `whatif run` on the fly and offline, interleaved; then
# the offline analysis of the trace recorded with the most threads, with
# -j 1, 2, 4, ... analysis threads; then the graph builder alone
# (build/bin/fold).  Wall times, median of REPEATS rounds.
#
#   bench/scaling.sh BOTS_BUILD_DIR [OUT_DIR] [REPEATS] [MAX_THREADS]
#                    (defaults: bench/results, 3, the CPUs this may use)
#
# BOTS_BUILD_DIR is a BOTS tree already built (bench/real.sh builds one:
# set BOTS_BUILD_DIR there).  EMPTY_TOOL names a built bench/empty_tool.c
# (else it is built with clang-19 when there is one, and the column left
# empty when not), so that the script runs where no compiler is.  Writes
# scaling.csv, scaling-analysis.csv and scaling.md into OUT_DIR.  Not part
# of the test suite: its numbers mean something only on a machine with as
# many cores as threads (about 5 minutes on 16 cores).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bots="${1:?usage: bench/scaling.sh BOTS_BUILD_DIR [OUT_DIR] [REPEATS] [MAX_THREADS]}"
out="${2:-$root/bench/results}"
reps="${3:-3}"
maxt="${4:-$(nproc)}"
whatif="$root/build/bin/whatif"
fold="$root/build/bin/fold"
[ -x "$whatif" ] || { echo "scaling.sh: build first (./setup.sh)" >&2; exit 1; }
[ -d "$bots/bin" ] || { echo "scaling.sh: $bots/bin: no BOTS build there" >&2; exit 1; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
empty="${EMPTY_TOOL:-}"
if [ -z "$empty" ] && command -v clang-19 >/dev/null; then
  clang-19 -O2 -fopenmp -shared -fPIC "$root/bench/empty_tool.c" \
    -o "$work/libempty.so" && empty="$work/libempty.so"
fi

counts=()
for ((t = 1; t < maxt; t *= 2)); do counts+=("$t"); done
counts+=("$maxt")

# name, binary, arguments: about a second on one thread
programs=(
  "fib|fib.clang.omp-tasks|-n 30"
  "nqueens|nqueens.clang.omp-tasks|-n 11"
  "uts|uts.clang.omp-tasks|-f inputs/uts/test.input"
  "health|health.clang.omp-tasks|-f inputs/health/small.input"
  "sparselu-for|sparselu.clang.for-omp-tasks|-n 80 -m 50"
)

now_ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
json() { sed -n "s/^  \"$2\": \\([0-9.]*\\),*$/\\1/p" "$1" 2>/dev/null | head -1; }

# run CONFIG BINARY ARGS...: prints the wall milliseconds
run() {
  local config=$1; shift
  local s rc
  rm -rf "$work/out-$config"
  s=$(now_ms)
  case $config in
    none) timeout 300 "$@" >/dev/null 2>"$work/err" ;;
    empty) OMP_TOOL_LIBRARIES="$empty" timeout 300 "$@" >/dev/null 2>"$work/err" ;;
    online|offline)
      timeout 300 "$whatif" run -q --mode $config -o "$work/out-$config" \
        -- "$@" >/dev/null 2>"$work/err" ;;
  esac
  rc=$?
  [ $rc -eq 0 ] || echo "scaling.sh: $config $*: exit $rc: $(grep -v '^whatif: note' "$work/err" | head -2)" >&2
  echo $(($(now_ms) - s))
}

csv="$out/scaling.csv"
acsv="$out/scaling-analysis.csv"
echo "program,threads,none_ms,empty_x,online_x,offline_x,nodes,online_peak_live_nodes,offline_analyzer_threads" >"$csv"
echo "program,trace_threads,nodes,jobs,analyzer_threads,profile_s,m_nodes_per_s,same_profile" >"$acsv"
cd "$bots" || exit 1
for p in "${programs[@]}"; do
  IFS='|' read -r name bin args <<<"$p"
  [ -x "bin/$bin" ] || { echo "scaling.sh: bin/$bin was not built" >&2; continue; }
  for t in "${counts[@]}"; do
    export OMP_NUM_THREADS=$t
    : >"$work/none" >"$work/empty" >"$work/online" >"$work/offline"
    configs="none online offline"
    [ -n "$empty" ] && configs="none empty online offline"
    for ((r = 0; r < reps; r++)); do
      for c in $configs; do
        # shellcheck disable=SC2086  # args is a word list
        run $c "bin/$bin" $args >>"$work/$c"
        [ $c = online ] && peak=$(json "$work/out-online/run.json" peak_live_nodes)
        [ $c = offline ] && athr=$(json "$work/out-offline/run.json" analyzer_threads)
      done
    done
    nodes=$(json "$work/out-offline/run.json" nodes)
    none=$(median <"$work/none")
    ratio() { [ -s "$work/$1" ] || return 0
              awk -v a="$(median <"$work/$1")" -v b="$none" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
    echo "$name,$t,$none,$(ratio empty),$(ratio online),$(ratio offline),${nodes:-0},${peak:-0},${athr:-0}" >>"$csv"
    tail -1 "$csv" >&2
  done
  # the trace of the most threads, analyzed with 1, 2, 4, ... threads
  trace="$work/out-offline/trace"
  [ -d "$trace" ] || continue
  for j in "${counts[@]}"; do
    : >"$work/prof"
    for ((r = 0; r < reps; r++)); do
      rm -rf "$work/ana"
      "$whatif" analyze -q -j "$j" -o "$work/ana" "$trace" >/dev/null 2>"$work/err" ||
        echo "scaling.sh: analyze -j $j: $(head -1 "$work/err")" >&2
      json "$work/ana/run.json" analyzer_profile_seconds >>"$work/prof"
    done
    athr=$(json "$work/ana/run.json" analyzer_threads)
    [ "$j" = 1 ] && cp "$work/ana/profile.csv" "$work/profile-j1.csv"
    same=no; cmp -s "$work/ana/profile.csv" "$work/profile-j1.csv" && same=yes
    ps=$(median <"$work/prof")
    mnps=$(awk -v n="${nodes:-0}" -v s="$ps" 'BEGIN { printf "%.1f", (s > 0 ? n / s / 1e6 : 0) }')
    echo "$name,$maxt,${nodes:-0},$j,${athr:-0},$ps,$mnps,$same" >>"$acsv"
    tail -1 "$acsv" >&2
  done
done

{
  echo "### whatif run over the plain run, by threads"
  echo
  echo "| program | threads | plain s | empty tool | on the fly | offline | nodes | live nodes at most (on the fly) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 { printf "| %s | %d | %.3f | %s | %.2fx | %.2fx | %d | %d |\n", $1, $2, $3 / 1000, ($4 == "" ? "-" : $4 "x"), $5, $6, $7, $8 }' "$csv"
  echo
  echo "### The offline profile pass of the trace recorded with $maxt threads, by analysis threads"
  echo
  echo "| program | nodes | -j | threads at the end | profile pass s | M nodes/s | same profile as -j 1 |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  awk -F, 'NR > 1 { printf "| %s | %d | %d | %d | %.3f | %.1f | %s |\n", $1, $3, $4, $5, $6, $7, $8 }' "$acsv"
  if [ -x "$fold" ]; then
    echo
    echo "### The graph builder alone (build/bin/fold $maxt 500000)"
    echo
    "$fold" "$maxt" 500000
  fi
} >"$out/scaling.md"
cat "$out/scaling.md"
