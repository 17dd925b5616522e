#!/usr/bin/env bash
# e2e_context.sh - --context N names a construct by its call path
# (tests/e2e/context.c): a header loop inlined into two callers (static
# and dynamic chunks) and a
# function of tasks called from two places become one row per call site,
# each holding the work the program measured under that site (2% + 0.5
# ms), in both modes alike; N sites at most; the directive that encloses a
# construct is a nesting, never a site; a recursion's rows stay bounded;
# without --context one row as before; bad depths are refused.
# Usage: e2e_context.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
mkdir -p "$work" && cd "$work" || exit 1
src="$here/e2e/context.c"
clang-19 -fopenmp -g -O2 -I"$here/e2e" "$src" -o context || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
line_of() { grep -n "/\* $2 \*/" "$1" | head -1 | cut -d: -f1; }
K="context_kern.h:$(line_of "$here/e2e/context_kern.h" KERN)"
C() { echo "context.c:$(line_of "$src" "$1")"; }
# work DIR DIRECTIVE REGEX -> the work of the one row matching REGEX
work_of() {
  awk -F, -v d="$2" -v re="$3" '$2 == d && $1 ~ re { n++; w = $4 } END { if (n == 1) print w }' "$1/profile.csv"
}
given() { sed -n "s/^whatif-ctx $2 //p" "$1.err"; }
near() { awk -v g="${1:-0}" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g > 0 && d <= w * 0.02 + 500000) }'; }
for c in 0 1 2; do
  rm -rf "c$c"
  if ! OMP_NUM_THREADS=2 "$whatif" run --metric cputime --mode both --context $c -o "c$c" -- ./context >/dev/null 2>"c$c.err"; then
    ko "--context $c: whatif run failed: $(head -2 "c$c.err")"; continue
  fi
  if cmp -s "c$c/profile.csv" "c$c/online/profile.csv"; then ok; else
    ko "--context $c: the on-the-fly and offline profiles differ"; fi
  check_invariants "c$c" "--context $c" && ok || fail=$((fail + 1))
done
# without contexts: the header's loop is one row, all its callers' work
w=$(work_of c0 loop "$K\$"); a=$(given c0 SITE_A); b=$(given c0 SITE_B)
if near "$w" $((a + b)); then ok; else ko "--context 0: one loop row of ${w:-?}, the program ran $((a + b))"; fi
if ! grep -q ' < ' c0/profile.csv && ! grep -q '"context"' c0/run.json; then ok; else
  ko "--context 0: a context in the names or run.json"; fi
# one site: a row per caller, each with its caller's work
for s in SITE_A SITE_B; do
  w=$(work_of c1 loop "$K < [^ ]*$(C $s)\$"); n=$(given c1 $s)
  if near "$w" "$n"; then ok; else ko "--context 1: loop from $s: ${w:-no row}, the program ran $n"; fi
done
D="context_kern.h:$(line_of "$here/e2e/context_kern.h" DKERN)"
for s in SITE_C SITE_D; do
  w=$(work_of c1 loop "$D < [^ ]*$(C $s)\$"); n=$(given c1 $s)
  if near "$w" "$n"; then ok; else ko "--context 1: dynamic loop from $s: ${w:-no row}, the program ran $n"; fi
done
for s in TASKS_A TASKS_B; do
  w=$(work_of c1 task "$(C TASK) < [^ ]*$(C $s)\$"); n=$(given c1 $s)
  if near "$w" "$n"; then ok; else ko "--context 1: tasks from $s: ${w:-no row}, the program ran $n"; fi
  # the task's enclosing parallel and single are not call sites
  if [ -n "$(work_of c1 parallel "$(C TASKS_PAR) < [^ ]*$(C $s)\$")" ]; then ok; else
    ko "--context 1: no parallel row called from $s"; fi
done
if ! grep -q "$(C TASKS_PAR),task\|$(C TASK) < [^,]*$(C TASKS_PAR)," c1/profile.csv; then ok; else
  ko "--context 1: a directive's own line taken as a call site"; fi
if grep -q '"context": 1' c1/run.json; then ok; else ko "--context 1: run.json has no context"; fi
# two sites: the callers' caller (main) too, never three
if [ -n "$(work_of c2 loop "$K < [^ ]*$(C SITE_A) < [^ ]*context.c:[0-9]*\$")" ]; then ok; else
  ko "--context 2: the loop's row from SITE_A does not name main's call"; fi
if ! awk -F, 'NR > 1 && split($1, s, " < ") > 3 { bad = 1 } END { exit !bad }' c2/profile.csv; then ok; else
  ko "--context 2: a name with more than two sites"; fi
# a recursion of 2^6 tasks: with one site, rows by caller (main, the two
# recursive calls), not by depth
n=$(awk -F, -v re="$(C REC)( |\$)" '$2 == "task" && $1 ~ re' c1/profile.csv | wc -l)
if [ "$n" -ge 1 ] && [ "$n" -le 3 ]; then ok; else ko "--context 1: $n rows of the recursive task"; fi
# rec()'s taskwait is its last statement: at -O2 a tail call, named by its
# ident_t; its paths are those of the build without tail calls
clang-19 -fopenmp -g -O2 -fno-optimize-sibling-calls -I"$here/e2e" "$src" -o context_nt || exit 1
objdump -d context > context.dis # (grep -q on a pipe may end objdump early: SIGPIPE)
if ! grep -q "jmp.*__kmpc_omp_taskwait" context.dis; then
  ko "the test's premise: no tail call to __kmpc_omp_taskwait at -O2"; fi
OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-report --context 3 -o t3 -- ./context >/dev/null 2>&1
OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-report --context 3 -o n3 -- ./context_nt >/dev/null 2>&1
tw() { awk -F, '$2 == "taskwait" { print $1, $3 }' "$1/profile.csv" | sort; }
if [ -n "$(tw t3)" ] && [ "$(tw t3)" = "$(tw n3)" ]; then ok; else
  ko "tail-called taskwait: paths $(tw t3 | tr '\n' ';') against $(tw n3 | tr '\n' ';')"; fi
# names are normalized paths: no ./, //, /../
if ! cut -d, -f1 c2/profile.csv t3/profile.csv | grep -q '\(^\|[ /]\)\./\|//\|/\.\./'; then ok; else
  ko "unnormalized paths: $(cut -d, -f1 c2/profile.csv | grep '\./\|//' | head -2)"; fi
# bad depths: refused by whatif run; by the tool, the program runs unprofiled
for bad in 17 -1 x ""; do
  "$whatif" run --metric cputime -o bad --context "$bad" -- ./context >/dev/null 2>bad.err
  if [ $? -eq 2 ] && grep -q -- "--context" bad.err; then ok; else ko "--context '$bad' accepted"; fi
done
lib="$(dirname "$whatif")/../lib/libwhatif.so"
if WHATIF_CONTEXT=many LD_PRELOAD="$lib" ./context >/dev/null 2>env.err &&
   grep -q "WHATIF_CONTEXT=many: use 0" env.err && grep -q "whatif-ctx SITE_B" env.err; then ok; else
  ko "WHATIF_CONTEXT=many: $(head -1 env.err)"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
