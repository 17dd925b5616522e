#!/usr/bin/env bash
# e2e_grain_graph.sh - `whatif grains`: every task and chunk of an offline
# run as a grain.  Known answers: fib(n) with a task per call above n = 1
# has exactly 2F(n+1)-2 task grains, each naming as parent the grain that
# created it (children counted right), two of them created by the
# program, and per location the grains' own work sums to what profile.csv
# says (grains x mean_grain_work, min_grain_work, max_grain_work, and
# median_grain_work within 1/16); drawn one by one, its graph has a fork
# and a join per taskwait, is a valid, acyclic GraphML (tests/
# grain_graph_check.py) and the same DOT; with more grains than
# --full-max, the graph is aggregated into groups (a location at a
# depth) whose counts add up.  tests/e2e/grainloops.c: a dynamic loop of
# exactly 100 chunks, and a static loop whose load balance equals the
# one the program measured itself (2%); each chunk's start and end hold
# the wall time the program measured for it, rebuilt static chunks lie
# end to end, and no more grains run at once than threads
# (tests/grain_time_check.py).  At 2 and 3 threads.  Burdened:
# tests/e2e/taskchain.c, 200 nested tasks all on the critical path: the
# burdened span is exactly the span plus 200 x task_create_cost, and its
# grains are one per depth, each with parallel benefit work / that cost;
# the three loops of grainloops.c lie one after the other on the critical
# path: their burdened span is exactly the span plus 3 x the measured
# chunk_dispatch_cost, and each chunk's parallel benefit is its work over
# that cost (their 6 barriers are too few for a barrier cost);
# tests/e2e/barriers.c: 40 explicit barriers, so the burdened span is
# exactly the span plus 41 x barrier_cost, at 2 and 3 threads, and
# barriers that ran tasks are left out of that cost.  tests/e2e/waiting.c:
# tasks waiting at their taskwait while their child runs on the other
# thread; the trace's waits fill the waits the program timed (90%, less 2
# ms a wait for a loaded machine), and the instantaneous parallelism
# leaves them out.
# The report draws every group (colored by the script in the browser),
# lists the low-benefit groups and the imbalanced loop instance.
# Usage: e2e_grain_graph.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
clang-19 -fopenmp -g -O2 "$root/apps/fib.c" -o fib || exit 1
clang-19 -fopenmp -g -O2 -I"$root/tests/e2e" "$root/tests/e2e/grainloops.c" -o loops || exit 1
fibn() { python3 -c "a,b=0,1
for _ in range($1): a,b=b,a+b
print(a)"; }
for T in 2 3; do
  # one by one
  n=11 want=$((2 * $(fibn 12) - 2))
  OMP_NUM_THREADS=$T "$whatif" run --metric cputime -q --no-report --mode offline -o f$T -- ./fib $n 2 >/dev/null 2>&1
  "$whatif" grains -q f$T 2>g.err || ko "T=$T grains failed: $(cat g.err)"
  got=$(($(wc -l < f$T/grains.csv) - 1))
  [ "$got" -eq "$want" ] && ok || ko "T=$T fib($n): $got grains, expected $want"
  bad=$(awk -F, 'NR > 1 { kids[$2]++; said[$1] = $8 } END {
      for (g in said) if (said[g] != kids[g] + 0) { print "grain " g " says " said[g] " children, " kids[g] + 0 " name it"; exit }
      if (kids[0] != 2) print kids[0] " grains of the program, expected 2" }' f$T/grains.csv)
  [ -z "$bad" ] && ok || ko "T=$T fib: $bad"
  # own work per location against the profile's grains x mean
  bad=$(awk -F, 'FNR == 1 { file++; next }
      file == 1 && $9 > 0 { n[$1] = $9; mean[$1] = $10 }
      file == 2 { sum[$3] += $7; cnt[$3]++ }
      END { for (l in n) { if (cnt[l] != n[l]) { print l ": " cnt[l] " grains, profile " n[l]; exit }
                           m = sum[l] / cnt[l]; if (m - mean[l] > 1 || mean[l] - m > 1) { print l ": mean " m ", profile " mean[l]; exit } } }' \
      f$T/profile.csv f$T/grains.csv)
  [ -z "$bad" ] && ok || ko "T=$T fib: $bad"
  # min_grain_work and max_grain_work: the least and most of grains.csv
  bad=$(awk -F, 'FNR == 1 { file++; next }
      file == 1 && $9 > 0 { lo[$1] = $11; hi[$1] = $12 }
      file == 2 { if (!($3 in a) || $7 < a[$3]) a[$3] = $7; if ($7 > b[$3]) b[$3] = $7 }
      END { for (l in lo) if (a[l] != lo[l] || b[l] != hi[l]) { print l ": " a[l] ".." b[l] ", profile " lo[l] ".." hi[l]; exit } }' \
      f$T/profile.csv f$T/grains.csv)
  [ -z "$bad" ] && ok || ko "T=$T fib min/max grain work: $bad"
  # median_grain_work: within 1/16 of the lower median of grains.csv
  bad=$(python3 - f$T/profile.csv f$T/grains.csv <<'PY'
import csv, sys
prof = {r["location"]: r for r in csv.DictReader(open(sys.argv[1])) if int(r["grains"]) > 0}
own = {}
for r in csv.DictReader(open(sys.argv[2])):
    own.setdefault(r["location"], []).append(int(r["work"]))
for loc, r in prof.items():
    w = sorted(own.get(loc, []))
    exact = w[(len(w) + 1) // 2 - 1] if w else -1
    got = int(r["median_grain_work"])
    if exact < 0 or 16 * abs(got - exact) > exact:
        print(f"{loc}: median {got}, grains.csv's {exact}")
        break
PY
)
  [ -z "$bad" ] && ok || ko "T=$T fib median grain work: $bad"
  chk=$(python3 "$root/tests/grain_graph_check.py" f$T)
  scopes=$(( $(fibn 12) - 1 ))
  [ "$chk" = "nodes $((want + 2 * scopes + 2)) edges $((2 * want + scopes + 1)) kinds fork=$scopes,grain=$want,join=$scopes,program=1,program_end=1" ] && ok \
    || ko "T=$T fib graph: $chk (expected $want grains, $scopes fork/join pairs)"
  # aggregated
  "$whatif" grains -q --full-max 100 -o fa$T f$T 2>g.err || ko "T=$T aggregated: $(cat g.err)"
  chk=$(python3 "$root/tests/grain_graph_check.py" fa$T)
  groups=$(($(wc -l < fa$T/grain_groups.csv) - 1))
  sum=$(awk -F, 'NR > 1 { s += $5 } END { print s }' fa$T/grain_groups.csv)
  # the two task lines at depths 1 to n-1, each created from either line
  edges=$(echo "$chk" | sed -n 's/.* edges \([0-9]*\) .*/\1/p')
  [ "$sum" -eq "$want" ] && [ "$groups" -le $((2 * (n - 1))) ] && [ "${chk%% edges*}" = "nodes $((groups + 1))" ] \
    && [ "${chk##* kinds }" = "group=$groups,program=1" ] && [ "$edges" -ge "$groups" ] && [ "$edges" -le $((2 * groups)) ] && ok \
    || ko "T=$T aggregated: $groups groups holding $sum grains, graph $chk"
  "$whatif" grains -q --full --full-max 100 -o fb$T f$T >/dev/null 2>g.err
  [ $? -eq 1 ] && grep -q "more than --full-max 100" g.err && ok || ko "T=$T --full over the limit: $(cat g.err)"
  # loops
  OMP_NUM_THREADS=$T "$whatif" run --metric cputime -q --no-report --mode offline -o l$T -- ./loops >/dev/null 2>l.err
  "$whatif" grains -q l$T 2>g.err || ko "T=$T loops: $(cat g.err)"
  src=grainloops.c
  dyn=$(awk -F, -v l="$src:$(grep -n 'pragma omp parallel for schedule(dynamic' "$root/tests/e2e/$src" | cut -d: -f1)" 'index($2, l) { print $4 }' l$T/instances.csv)
  [ "$dyn" = 100 ] && ok || ko "T=$T dynamic loop: '$dyn' chunks, expected 100"
  st=$(awk -F, -v l="$src:$(grep -n 'pragma omp for schedule(static)' "$root/tests/e2e/$src" | cut -d: -f1)" 'index($2, l) { print $4, $5, $9 }' l$T/instances.csv)
  given=$(sed -n 's/^whatif-balance //p' l.err)
  if awk -v s="$st" -v T=$T -v g="$given" 'BEGIN { split(s, a, " "); exit !(a[1] == T && a[2] == T && a[3] > 0 && (a[3] - g) / g < 0.02 && (g - a[3]) / g < 0.02) }'; then ok; else
    ko "T=$T static loop: chunks threads balance '$st', the program measured $given"; fi
  # burdened: the three loops lie one after the other on the critical
  # path, and every chunk carries the measured cost of handing it out
  span=$(awk -F, 'NR == 2 { print $5 }' l$T/profile.csv)
  ccost=$(sed -n 's/^  "chunk_dispatch_cost": \([0-9]*\),*$/\1/p' l$T/run.json)
  bspan=$(sed -n 's/^  "burdened_span": \([0-9]*\),*$/\1/p' l$T/run.json)
  [ -n "$ccost" ] && [ "$ccost" -gt 0 ] && [ "$bspan" = "$((span + 3 * ccost))" ] && ok \
    || ko "T=$T loops: burdened span '$bspan', expected span $span + 3 x chunk_dispatch_cost '$ccost'"
  if awk -F, -v c="$ccost" 'NR > 1 { n++; if ($11 == "" || ($11 - $7 / c) > 0.01 || ($7 / c - $11) > 0.01) bad = 1 }
      END { exit !(n > 0 && !bad) }' l$T/grains.csv; then ok; else
    ko "T=$T loops: a chunk's parallel benefit other than its work / $ccost"; fi
  # grain times against the program's own wall clock
  out=$(python3 "$root/tests/grain_time_check.py" l$T l.err $T "$root/tests/e2e/$src") && ok || ko "T=$T grain times: $out"
  # fib: every task timed, never more running than threads
  bad=$(awk -F, -v T=$T 'FNR == 1 { file++; next }
      file == 1 && ($12 == "" || $13 == "" || $12 > $13) { print "grain " $1 " timed \"" $12 "\" to \"" $13 "\""; exit }
      file == 2 && $4 > T { print "bin " FNR ": " $4 " running on " T " threads"; exit }' f$T/grains.csv f$T/parallelism.csv)
  [ -z "$bad" ] && ok || ko "T=$T fib times: $bad"
done
# the report draws the groups that whatif grains stored in profile.db
"$whatif" report -q f2 2>r.err || ko "report after grains: $(cat r.err)"
drawn=$(grep -o 'class="grain-group"' f2/report.html | wc -l)
groups=$(sqlite3 f2/profile.db "select count(*) from grain_group")
flag=$(grep -c 'id="grain-flagged"' f2/report.html)
low=$(awk -F, 'NR > 1 && $10 > 0' f2/grain_groups.csv | wc -l)
[ "$drawn" -eq "$groups" ] && [ "$groups" -eq "$(($(wc -l < f2/grain_groups.csv) - 1))" ] && [ "$flag" -eq $((low > 0)) ] && ok \
  || ko "report: $drawn groups drawn of $groups, flagged table $flag with $low low-benefit groups"
"$whatif" report -q l2 && grep -q 'id="grain-imbalance"' l2/report.html && ok || ko "report: no imbalanced loop instance listed"
# the instantaneous parallelism: in the database as in parallelism.csv, charted
bins=$(sqlite3 f2/profile.db "select count(*) from grain_timeline where max_running <= 2")
[ "$bins" -gt 0 ] && [ "$bins" -eq "$(($(wc -l < f2/parallelism.csv) - 1))" ] && grep -q 'id="grain-timeline"' f2/report.html && ok \
  || ko "report: $bins timeline bins in profile.db, $(($(wc -l < f2/parallelism.csv) - 1)) in parallelism.csv, chart $(grep -c 'id="grain-timeline"' f2/report.html)"
if ! grep -Eiq "https?:|url\(" f2/report.html; then ok; else ko "the grain section names something outside the page"; fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ]; then
  prof=$(mktemp -d "$work/chrome.XXXXXX")
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="127.0.0.1:9" \
    --user-data-dir="$prof" --dump-dom "file://$work/f2/report.html" 2>/dev/null > dom.html
  painted=$(grep -o 'class="grain-group"[^>]*fill="rgb([0-9, ]*)"' dom.html | wc -l)
  [ "$painted" -eq "$groups" ] && ok || ko "in the browser, $painted of $groups groups colored by the metric"
  rm -rf "$prof"
fi
# burdened: a chain of 200 nested tasks, every one on the critical path
clang-19 -fopenmp -g -O2 -I"$root/tests/e2e" "$root/tests/e2e/taskchain.c" -o chain || exit 1
OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-report --mode offline -o c -- ./chain 200 >/dev/null 2>&1
num() { sed -n "s/^  \"$1\": \([0-9.]*\),*$/\1/p" c/run.json; }
span=$(awk -F, 'NR == 2 { print $5 }' c/profile.csv)
cost=$(num task_create_cost) bspan=$(num burdened_span)
wspan=$(awk -F, '$1 == "burdened" && $3 == "program" { print $6 }' c/whatif.csv)
[ -n "$cost" ] && [ "$cost" -gt 0 ] && [ "$bspan" = "$((span + 200 * cost))" ] && [ "$wspan" = "$bspan" ] && ok \
  || ko "burdened span $bspan (whatif.csv $wspan), expected span $span + 200 x $cost"
# burdened: K explicit barriers and the region's end, every phase on the
# critical path; barriers that waited for tasks measure nothing
clang-19 -fopenmp -g -O2 -I"$root/tests/e2e" "$root/tests/e2e/barriers.c" -o barriers || exit 1
for T in 2 3; do
  OMP_NUM_THREADS=$T "$whatif" run --metric cputime -q --no-report --mode offline -o b$T -- ./barriers plain 40 >/dev/null 2>&1
  span=$(awk -F, 'NR == 2 { print $5 }' b$T/profile.csv)
  bcost=$(sed -n 's/^  "barrier_cost": \([0-9]*\),*$/\1/p' b$T/run.json)
  bspan=$(sed -n 's/^  "burdened_span": \([0-9]*\),*$/\1/p' b$T/run.json)
  [ -n "$bcost" ] && [ "$bcost" -gt 0 ] && [ "$bspan" = "$((span + 41 * bcost))" ] && ok \
    || ko "T=$T barriers: burdened span '$bspan', expected span $span + 41 x barrier_cost '$bcost'"
  OMP_NUM_THREADS=$T "$whatif" run --metric cputime -q --no-report --mode offline -o bt$T -- ./barriers tasks 40 >/dev/null 2>&1
  [ -s bt$T/run.json ] && ! grep -q '"barrier_cost"' bt$T/run.json && ok \
    || ko "T=$T barriers with tasks inside: $(grep barrier_cost bt$T/run.json || echo no run.json)"
done
# waits: a task waiting at its taskwait for a child on the other thread is
# not running; its waits are the ones the program timed itself
clang-19 -fopenmp -g -O2 -I"$root/tests/e2e" "$root/tests/e2e/waiting.c" -o waiting || exit 1
OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-report --mode offline -o w -- ./waiting 10 >/dev/null 2>w.err
"$whatif" grains -q w 2>g.err || ko "waiting grains: $(cat g.err)"
bad=$("$whatif" dump w/trace 2>/dev/null | python3 -c '
import re, sys
timed = [tuple(map(int, l.split()[1:3])) for l in open(sys.argv[1]) if l.startswith("whatif-wait ")]
waits = [tuple(map(int, m.groups())) for m in (re.search(r" WAIT (\d+)\.\.(\d+)ns", l) for l in sys.stdin) if m]
got = sum(max(0, min(b, e) - max(a, s)) for (a, b) in timed for (s, e) in waits)
want = sum(b - a for (a, b) in timed)
# the trace waits inside the intervals the program timed (clipped, never
# more); on a loaded machine a thread descheduled between the clock read
# of the program and the event of the runtime loses some at the edges
if not timed or got < 0.9 * want - 2e6 * len(timed):
    print(f"the program timed {len(timed)} waits of {want} ns, the trace holds {got} ns of them ({len(waits)} waits)")
' w.err)
mean=$(awk -F, 'NR > 1 { s += $3 * ($2 - $1); w += $2 - $1 } END { if (w) printf "%.3f", s / w }' w/parallelism.csv)
[ -z "$bad" ] && awk -v m="$mean" 'BEGIN { exit !(m > 0 && m < 1.5) }' && ok || ko "waits: $bad; $mean running on average"
"$whatif" grains -q c 2>g.err || ko "chain grains: $(cat g.err)"
if awk -F, -v c="$cost" 'NR > 1 { n++; d[$5]++; if ($11 == "" || ($11 - $7 / c) > 0.01 || ($7 / c - $11) > 0.01) bad = 1 }
    END { for (k = 1; k <= 200; k++) if (d[k] != 1) bad = 1; exit !(n == 200 && !bad) }' c/grains.csv; then ok; else
  ko "chain grains: not one per depth 1..200, or a parallel benefit other than work / $cost"; fi
# errors
OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q --no-report --mode online -o on -- ./loops >/dev/null 2>&1
"$whatif" grains on >/dev/null 2>err.txt; rc=$?
[ $rc -eq 1 ] && grep -q "offline run" err.txt && ok || ko "an online run: rc $rc $(cat err.txt)"
"$whatif" grains --full-max x f2 >/dev/null 2>&1; [ $? -eq 2 ] && ok || ko "--full-max x accepted"
"$whatif" grains --help | grep -q "usage: whatif grains" && ok || ko "grains --help"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
