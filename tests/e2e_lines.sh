#!/usr/bin/env bash
# e2e_lines.sh - critical_lines.csv: the sampled source lines of the
# critical path (tests/e2e/hotspot.c: a function called from two places
# holds most of the serial code).  In both modes (one run, --mode both:
# the two files identical) the hot function's line leads with the critical
# work the program measured of it within 5%, the cold one follows within
# 5%; the summary names the hot line; --no-sample writes no such file and
# a bad --sample-rate is refused.
# Usage: e2e_lines.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
src="$here/e2e/hotspot.c"
clang-19 -fopenmp -g -O2 -I"$here/e2e" "$src" -o hotspot || exit 1
hot_line=$(grep -n 'HOT_LINE \*/' "$src" | cut -d: -f1)
cold_line=$(grep -n 'COLD_LINE \*/' "$src" | cut -d: -f1)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
within() { awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { exit !(g != "" && w > 0 && g >= w * (1 - t) && g <= w * (1 + t)) }'; }

OMP_NUM_THREADS=2 "$whatif" run --metric cputime --mode both -o both -- ./hotspot >/dev/null 2>both.err
hot=$(sed -n 's/^whatif-hot ns=//p' both.err)
cold=$(sed -n 's/^whatif-cold ns=//p' both.err)
for dir in both both/online; do
  csv=$dir/critical_lines.csv
  read -r l1 f1 c1 < <(awk -F, 'NR == 2 { print $1, $2, $4 }' "$csv" 2>/dev/null)
  read -r l2 f2 c2 < <(awk -F, 'NR == 3 { print $1, $2, $4 }' "$csv" 2>/dev/null)
  if [[ "${l1:-}" == *hotspot.c:$hot_line ]] && [ "${f1:-}" = hot ] && within "${c1:-}" "$hot" 0.05; then ok; else
    ko "$dir: first line ${l1:-?} ${f1:-?} critical ${c1:-?}, expected hotspot.c:$hot_line hot ~$hot"; fi
  if [[ "${l2:-}" == *hotspot.c:$cold_line ]] && [ "${f2:-}" = cold ] && within "${c2:-}" "$cold" 0.05; then ok; else
    ko "$dir: second line ${l2:-?} ${f2:-?} critical ${c2:-?}, expected hotspot.c:$cold_line cold ~$cold"; fi
  # the lines' shares of the critical path never exceed the whole
  if awk -F, 'NR > 1 { s += $5 } END { exit !(s > 0 && s <= 100.01) }' "$csv"; then ok; else
    ko "$dir: critical percents of the lines sum to $(awk -F, 'NR > 1 { s += $5 } END { print s }' "$csv")"; fi
done
if cmp -s both/critical_lines.csv both/online/critical_lines.csv; then ok; else
  ko "the on-the-fly and offline critical_lines.csv differ"; fi
if grep -q "hotspot.c:$hot_line *hot" both.err; then ok; else
  ko "the summary does not name the hot line: $(grep -A3 'source line' both.err)"; fi
if grep -q '"sample_rate_hz": 1000,' both/run.json && grep -q '"samples": [1-9]' both/run.json; then ok; else
  ko "run.json: $(grep sample both/run.json)"; fi
if [ "$(sqlite3 both/profile.db "SELECT function FROM critical_line LIMIT 1")" = hot ]; then ok; else
  ko "profile.db: critical_line view"; fi
# lines are no directives: profile.csv holds none of them
if ! grep -q ',line' both/profile.csv; then ok; else ko "a line row in profile.csv"; fi

OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-sample -o nosample -- ./hotspot >/dev/null 2>&1
if [ -s nosample/profile.csv ] && [ ! -e nosample/critical_lines.csv ]; then ok; else
  ko "--no-sample: $(ls nosample)"; fi
"$whatif" run --metric cputime -q --sample-rate 0 -o bad -- ./hotspot >/dev/null 2>bad.err
rc=$?
if [ $rc -eq 2 ] && grep -q "sample-rate 0: use 1 to 100000" bad.err; then ok; else
  ko "--sample-rate 0: rc $rc, $(cat bad.err)"; fi
# more threads than cores: sampling off by default, and said; asked for,
# on
over=$(($(nproc) + 1))
OMP_NUM_THREADS=$over "$whatif" run --metric cputime --no-report -o over -- ./hotspot >/dev/null 2>over.err
if grep -q "sampling off: $over threads on $(nproc) cores" over.err && grep -q '"sample_note"' over/run.json &&
   [ ! -e over/critical_lines.csv ]; then ok; else ko "oversubscribed: $(grep -i sampl over.err)"; fi
OMP_NUM_THREADS=$over "$whatif" run --metric cputime -q --no-report --sample-rate 1000 -o overon -- ./hotspot >/dev/null 2>&1
if [ -s overon/critical_lines.csv ] && ! grep -q '"sample_note"' overon/run.json; then ok; else
  ko "oversubscribed with --sample-rate: not sampled"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
