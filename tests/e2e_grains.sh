#!/usr/bin/env bash
# e2e_grains.sh - the grains and mean_grain_work columns and the
# fine_grains note (tests/e2e/grains.c counts and times what it creates).
# At 2 and 4 threads, --mode both (the two profiles identical): every row
# of a task or loop counts exactly the tasks or chunks that ran (fib's two
# task directives, undeferred tasks, dynamic and rebuilt static chunks);
# coarse tasks' and dynamic chunks' mean own work is what the program
# measured of them (5% + 2 us); empty tasks are noted as finer than their
# creation cost, coarse ones never; a loop whose span hangs on one chunk
# 8 times the others is noted (span_outlier).
# Usage: e2e_grains.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
mkdir -p "$work" && cd "$work" || exit 1
src="$here/e2e/grains.c"
clang-19 -fopenmp -g -O2 -I"$here/e2e" "$src" -o grains || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
line_of() { grep -n "/\* $1 \*/" "$src" | head -1 | cut -d: -f1; }
# row DIR TAG -> "grains mean_grain_work" of the row at TAG's line
row() {
  local l; l=$(line_of "$2")
  awk -F, -v l="grains.c:$l" 'substr($1, length($1) - length(l) + 1) == l && $2 != "parallel" { print $9, $10 }' "$1/profile.csv"
}
given() { sed -n "s/^whatif-grains $2 //p" "$1.err"; }
for T in 2 4; do
  for c in fib empty coarse loops outlier; do
    out="$c-$T"; rm -rf "$out"
    args=$c; [ $c = fib ] && args="fib 18"
    if ! OMP_NUM_THREADS=$T "$whatif" run --metric cputime --mode both -o "$out" -- ./grains $args >/dev/null 2>"$out.err"; then
      ko "$c T=$T: whatif run failed: $(head -2 "$out.err")"; continue
    fi
    if cmp -s "$out/profile.csv" "$out/online/profile.csv"; then ok; else
      ko "$c T=$T: the on-the-fly and offline profiles differ"; fi
    check_invariants "$out" "$c T=$T" && ok || fail=$((fail + 1))
  done
  for tag in FIB_A FIB_B; do
    read -r g _ < <(row fib-$T $tag); read -r n < <(given fib-$T $tag)
    if [ "${g:-}" = "$n" ]; then ok; else ko "fib T=$T: $tag grains ${g:-?}, the program created $n"; fi
  done
  read -r g _ < <(row empty-$T EMPTY); read -r n < <(given empty-$T EMPTY)
  if [ "${g:-}" = "$n" ]; then ok; else ko "empty T=$T: grains ${g:-?}, created $n"; fi
  if grep -q "grains.c:$(line_of EMPTY) (task): its tasks hold .* less than the runtime spends creating one" empty-$T.err &&
     grep -q '"note": "fine_grains"' empty-$T/run.json &&
     [ "$(sqlite3 empty-$T/profile.db "SELECT count(*) FROM note WHERE note = 'fine_grains'")" = 1 ] &&
     grep -q '"task_create_cost": [0-9]' empty-$T/run.json; then ok; else
    ko "empty T=$T: no fine_grains note ($(grep -c note empty-$T.err) on stderr)"; fi
  read -r g m < <(row coarse-$T COARSE); read -r n ns < <(given coarse-$T COARSE)
  if [ "${g:-}" = "$n" ] && awk -v m="${m:-0}" -v w="$((ns / n))" 'BEGIN { d = m - w; if (d < 0) d = -d; exit !(d <= w * 0.05 + 2000) }'; then ok; else
    ko "coarse T=$T: grains ${g:-?} mean ${m:-?}, the program ran $n of $((ns / n)) ns"; fi
  if ! grep -q 'fine_grains\|span_outlier' coarse-$T/run.json; then ok; else
    ko "coarse T=$T: coarse tasks noted as fine or as an outlier"; fi
  if grep -q "grains.c:$(line_of OUTLIER) (loop): one of its grains holds" outlier-$T.err &&
     grep -q '"note": "span_outlier"' outlier-$T/run.json; then ok; else
    ko "outlier T=$T: no span_outlier note on the loop"; fi
  read -r g _ < <(row coarse-$T UNDEFERRED); read -r n < <(given coarse-$T UNDEFERRED)
  if [ "${g:-}" = "$n" ]; then ok; else ko "coarse T=$T: undeferred grains ${g:-?}, created $n"; fi
  read -r g m < <(row loops-$T DYNAMIC); read -r n ns < <(given loops-$T DYNAMIC)
  if [ "${g:-}" = "$n" ] && awk -v m="${m:-0}" -v w="$((ns / n))" 'BEGIN { d = m - w; if (d < 0) d = -d; exit !(d <= w * 0.05 + 2000) }'; then ok; else
    ko "loops T=$T: dynamic grains ${g:-?} mean ${m:-?}, the program ran $n chunks of $((ns / n)) ns"; fi
  read -r g _ < <(row loops-$T STATIC); read -r n < <(given loops-$T STATIC)
  if [ "${g:-}" = "$n" ]; then ok; else ko "loops T=$T: static grains ${g:-?}, the schedule has $n chunks"; fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
