#!/usr/bin/env bash
# e2e_regions.sh - what-if regions as rows of profile.csv, and the
# program's serial code by the events around it (serial_fragments.csv), on
# tests/e2e/regions.c, which times its own fragments.  At 2 and 4 threads,
# one --mode both run each (the on-the-fly and offline files identical):
# a serial region's row has the work and span the program measured of it,
# a region around a parallel loop the loop's work and its longest chunk as
# span (within 3% + 0.3 ms); each serial phase of the program is a row
# named by its events with its measured work on the critical path; the
# rows together hold exactly the program row's critical work; profile.db
# and the summary show them.
# Usage: e2e_regions.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
mkdir -p "$work" && cd "$work" || exit 1
src="$here/e2e/regions.c"
clang-19 -fopenmp -g -O2 -I"$here/e2e" -I"$here/../include" "$src" -o regions || exit 1
line_of() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
L_SERIAL=$(line_of 'SERIAL_REGION \*/')
L_LOOPREG=$(line_of 'LOOP_REGION \*/')
L_PAR=$(line_of 'parallel /\* PAR \*/')
L_LOOP=$(line_of 'LOOP \*/')
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
near() { # got want: within 3% + 0.3 ms
  awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w != "" && d <= w * 0.03 + 300000) }'
}
# region_row DIR LINE -> "instances work span critical"
region_row() {
  awk -F, -v l="regions.c:$2" '$2 == "region" && index($1, l) && substr($1, length($1) - length(l) + 1) == l { print $3, $4, $5, $7 }' "$1/profile.csv"
}
# serial_row DIR FROM TO -> critical work of the fragments between
serial_row() {
  awk -F, -v f="$2" -v t="$3" 'NR > 1 && $1 ~ f && $2 ~ t { print $5 }' "$1/serial_fragments.csv"
}
for T in 2 4; do
  out="both-$T"
  rm -rf "$out"
  if ! OMP_NUM_THREADS=$T "$whatif" run --mode both --metric cputime -o "$out" -- ./regions >/dev/null 2>"$out.err"; then
    ko "T=$T: whatif run failed: $(head -3 "$out.err")"; continue
  fi
  for f in profile.csv serial_fragments.csv; do
    if [ -s "$out/$f" ] && cmp -s "$out/$f" "$out/online/$f"; then ok; else
      ko "T=$T: $f missing, or the on-the-fly and offline ones differ"; fi
  done
  check_invariants "$out" "T=$T" && ok || fail=$((fail + 1))
  m() { sed -n "s/^whatif-$1 //p" "$out.err"; }
  read -r _ sw ss < <(m region | grep '^serial ')
  read -r _ lw ls < <(m region | grep '^loop ')
  read -r ri rw rs rc < <(region_row "$out" "$L_SERIAL")
  if [ "${ri:-}" = 1 ] && near "${rw:-}" "$sw" && near "${rs:-}" "$ss" && near "${rc:-}" "$ss"; then ok; else
    ko "T=$T: serial region row: instances ${ri:-?} work ${rw:-?} span ${rs:-?} critical ${rc:-?}, the program measured $sw"; fi
  read -r ri rw rs rc < <(region_row "$out" "$L_LOOPREG")
  if [ "${ri:-}" = 1 ] && near "${rw:-}" "$lw" && near "${rs:-}" "$ls"; then ok; else
    ko "T=$T: loop region row: instances ${ri:-?} work ${rw:-?} span ${rs:-?}, the program measured work $lw span $ls"; fi
  # each serial phase, named by the events around it
  declare -A want=(
    [start]="^program start\$|^start of region .*regions.c:$L_SERIAL\$"
    [serial]="^start of region .*regions.c:$L_SERIAL\$|^end of region .*regions.c:$L_SERIAL\$"
    [before_par]="^end of region .*regions.c:$L_SERIAL\$|^start of parallel .*regions.c:$L_PAR\$"
    [before_loop]="^end of parallel .*regions.c:$L_PAR\$|^start of region .*regions.c:$L_LOOPREG\$"
    [end]="^end of region .*regions.c:$L_LOOPREG\$|^program end\$"
  )
  for name in start serial before_par before_loop end; do
    from=${want[$name]%%|*} to=${want[$name]#*|}
    got=$(serial_row "$out" "$from" "$to")
    meas=$(m frag | awk -v n="$name" '$1 == n { print $2 }')
    if near "$got" "$meas"; then ok; else
      ko "T=$T: serial fragment $name ($from -> $to): critical ${got:-none}, the program measured $meas"; fi
  done
  unset want
  # the loop inside its region: the events of its own parallel region
  if [ -n "$(serial_row "$out" "^start of region .*regions.c:$L_LOOPREG\$" "^start of parallel .*regions.c:$L_LOOP\$")" ]; then ok; else
    ko "T=$T: no fragment from the loop region's start to its parallel region"; fi
  n=$(sqlite3 "$out/profile.db" "SELECT count(*) FROM critical_serial")
  if [ "$n" = "$(($(wc -l < "$out/serial_fragments.csv") - 1))" ] &&
     [ "$(sqlite3 "$out/profile.db" "SELECT from_event FROM critical_serial LIMIT 1")" = \
       "$(awk -F, 'NR == 2 { print $1 }' "$out/serial_fragments.csv")" ]; then ok; else
    ko "T=$T: profile.db critical_serial: $n rows"; fi
  if grep -q "serial code on the critical path" "$out.err" && grep -q "start of region .*regions.c:$L_SERIAL -> end of region" "$out.err"; then ok; else
    ko "T=$T: the summary names no serial fragment"; fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
