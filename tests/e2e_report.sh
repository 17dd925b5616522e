#!/usr/bin/env bash
# e2e_report.sh - `whatif report` in a real browser: the report of
# apps/smooth.c (a what-if region, opportunities, timed runs at 1 and 2
# threads) is loaded by headless Chromium with every host unresolvable
# and no proxy reachable (no network), and the rendered DOM is checked
# against the run's own files: the program's work, span and parallelism
# (profile.csv), every row's location and work, the what-if table
# (whatif.csv), the speedup bounds from W and S and the measured speedup
# (timings.csv), the source excerpt of the region; a screenshot is saved
# (report.png).  The page names nothing outside itself.  A profile of
# 10^4 locations renders its first 200 rows and keeps all in its data.
# Usage: e2e_report.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "FAIL: no chromium: the report test needs it (./setup.sh --test installs it)"; exit 1
fi
# no network: every name unresolvable, every proxy refused
# (a profile directory of its own per browser: one still shutting down
# holds its profile's lock, and the next would hand its page to it)
dom() {
  local profile; profile=$(mktemp -d "$work/chrome.XXXXXX")
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="127.0.0.1:9" \
    --user-data-dir="$profile" --dump-dom "file://$1" 2>/dev/null
}
clang-19 -fopenmp -g -O2 -I"$root/include" "$root/apps/smooth.c" -o smooth -lm || exit 1
rm -rf run "$work"/chrome.*
if ! OMP_NUM_THREADS=2 "$whatif" run -q --mode offline --opportunities --threads 1,2 -o run -- ./smooth >/dev/null 2>run.err; then
  echo "FAIL: whatif run: $(head -3 run.err)"; exit 1
fi
[ -s run/report.html ] && ok || ko "whatif run wrote no report.html"
# the same page from whatif report
"$whatif" report -q -o again.html run && cmp -s again.html run/report.html && ok || ko "whatif report differs from whatif run's report"
# nothing outside the page: no URL, no external script, style or font
if ! grep -Eiq "https?:|(src|href)=[\"']?//|url\(|@import" run/report.html; then ok; else
  ko "the page names something outside itself: $(grep -Eio "https?:[^\"' ]*|url\([^)]*\)" run/report.html | head -3)"; fi
dom "$work/run/report.html" > dom.html
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
  --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="127.0.0.1:9" \
  --user-data-dir="$(mktemp -d "$work/chrome.XXXXXX")" --window-size=1200,3200 \
  --screenshot="$work/report.png" "file://$work/run/report.html" >/dev/null 2>&1
if [ "$(head -c 4 report.png 2>/dev/null | tail -c 3)" = PNG ] && [ "$(stat -c %s report.png)" -gt 20000 ]; then ok; else
  ko "no screenshot (report.png)"; fi
# the rendered DOM against the run's files
python3 - "$work" "$root" <<'PY' || fail=$((fail + 1))
import csv, html.parser, re, sys
work, root = sys.argv[1], sys.argv[2]
bad = []

class Dom(html.parser.HTMLParser):
    """Texts by element id, and the cells of every table by its id (or the
    id of the tbody holding the rows)."""
    def __init__(self):
        super().__init__()
        self.ids, self.tables, self.stack, self.body = {}, {}, [], {}
        self.table = None; self.row = None; self.cell = None; self.idtext = None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == 'body': self.body = a
        if tag in ('table', 'tbody') and a.get('id'):
            self.table = a['id']; self.tables[self.table] = []
        if tag == 'tr' and self.table: self.row = []; self.tables[self.table].append(self.row)
        if tag in ('td', 'th') and self.row is not None: self.cell = ''
        if a.get('id') and tag not in ('table', 'tbody'): self.idtext = a['id']; self.ids[a['id']] = ''
    def handle_endtag(self, tag):
        if tag in ('td', 'th') and self.cell is not None: self.row.append(self.cell.strip()); self.cell = None
        if tag == 'tr': self.row = None
        if tag == 'table': self.table = None
        if tag in ('span', 'dd', 'p') : self.idtext = None
    def handle_data(self, d):
        if self.cell is not None: self.cell += d
        if self.idtext: self.ids[self.idtext] += d

d = Dom(); d.feed(open(work + '/dom.html').read())
if d.body.get('data-ready') != '1': bad.append('the script did not run (no data-ready)')
prof = list(csv.reader(open(work + '/run/profile.csv')))
hdr, rows = prof[0], prof[1:]
p = dict(zip(hdr, rows[0]))
for k, idn in (('parallelism', 'program-parallelism'), ('work', 'program-work'), ('span', 'program-span')):
    if d.ids.get(idn, '').strip() != p[k]: bad.append('%s: page %r, profile.csv %r' % (idn, d.ids.get(idn), p[k]))
shown = d.tables.get('rows', [])
if len(shown) != min(len(rows), 201): bad.append('profile table: %d rows, profile.csv %d' % (len(shown), len(rows)))
want = sorted((r[0], r[1], r[3]) for r in rows)
got = sorted((r[0], r[1], r[3]) for r in shown)
if want != got: bad.append('profile table rows differ from profile.csv: %s' % [x for x in got if x not in want][:3])
# what-if: the "all" scenario at the largest factor
wi = [r for r in csv.reader(open(work + '/run/whatif.csv')) if r[0] == 'all' and r[2] == 'program']
wt = {r[1]: r for r in d.tables.get('whatif-table', [])[1:]}
if not wi or 'all' not in wt or wt['all'][4] != wi[-1][6]:
    bad.append('what-if table: all at the largest factor %s, whatif.csv %s' % (wt.get('all', ['?'] * 5)[4], wi[-1][6] if wi else '?'))
if len(d.tables.get('whatif-table', [])) < 3: bad.append('what-if table: no opportunities')
# speedup bounds and the measured speedup
W, S = float(p['work']), float(p['span'])
sp = {r[0]: r for r in d.tables.get('speedup-table', [])[1:]}
tm = {r[0]: r for r in csv.reader(open(work + '/run/timings.csv'))}
for P in (1, 2, 16, 256):
    lo, hi = '%.2f' % (W / ((W - S) / P + S)), '%.2f' % min(P, W / S)
    r = sp.get(str(P))
    if not r or r[1] != lo or r[2] != hi: bad.append('speedup at %d: %s, expected %s..%s' % (P, r, lo, hi))
# (the page's 2 decimals of T1/T2 against timings.csv's times: rounding aside)
want_s = float(tm['1'][1]) / float(tm['2'][1])
# (by its header: a burdened column comes before it when the run measured
# what creating a task or handing out a chunk costs)
head = (d.tables.get('speedup-table') or [[]])[0]
mcol = head.index('measured') if 'measured' in head else 3
try:
    got_s = float(sp.get('2', [''] * (mcol + 1))[mcol])
except (ValueError, IndexError):
    got_s = -1
if abs(got_s - want_s) > 0.006: bad.append('measured speedup at 2: page %s, timings.csv %.4f' % (sp.get('2'), want_s))
# the region's source line, highlighted
line = open(root + '/apps/smooth.c').read().split('\n')
src = open(work + '/dom.html').read()
m = re.search(r'smooth\.c:(\d+)', rows[1][0])
if not m or ('<b>%5d  ' % int(m.group(1))) not in src: bad.append('no highlighted source line of %s' % rows[1][0])
for b in bad: print('FAIL: report: ' + b)
print('report: %d checks failed' % len(bad)) if bad else None
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] && ok
# 10^4 locations: the first 200 rows shown, all of them in the page's data
rm -rf big && mkdir big && cp run/profile.db big/
sqlite3 big/profile.db "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
  INSERT INTO location SELECT 100000 + i, 'gen/file' || (i % 97) || '.c:' || i, 'task' FROM n;
  INSERT INTO profile SELECT 0, id, 1, 1000 + id, 10 + id % 7, (1000.0 + id) / (10 + id % 7), id % 13, 0.001, 1, 1000 + id, 1000 + id, 1000 + id, 1000 + id FROM location WHERE id > 100000;" || ko "could not build the 10^4-location database"
t0=$(date +%s%N)
"$whatif" report -q big || ko "whatif report of 10^4 locations failed"
t1=$(date +%s%N)
dom "$work/big/report.html" > big-dom.html
n=$(grep -o '<tr>' big-dom.html | wc -l)
rc=$(sed -n 's/.*id="row-count">\([^<]*\)<.*/\1/p' big-dom.html | head -1)
ms=$(sed -n 's/.*data-render-ms="\([^"]*\)".*/\1/p' big-dom.html | head -1)
total=$(($(wc -l < run/profile.csv) - 1 + 10000))
if [ "$rc" = "201 of $total" ] && grep -q 'data-ready="1"' big-dom.html; then ok; else ko "10^4 locations: row count '$rc', expected '201 of $total'"; fi
echo "10^4 locations: report written in $(( (t1 - t0) / 1000000 )) ms, $(stat -c %s big/report.html) bytes, table rendered in ${ms:-?} ms"
# sorting by mean_grain_work sorts by the mean (a click, in the browser)
sed 's|</body>|<script>document.querySelectorAll("#profile th.s")[9].click();</script></body>|' run/report.html > sorted.html
dom "$work/sorted.html" > sorted-dom.html
python3 - "$work/sorted-dom.html" <<'PY' && ok || ko "sorted by mean_grain_work: not by the mean"
import re, sys
body = open(sys.argv[1]).read().split('id="rows">', 1)[1].split('</tbody>', 1)[0]
rows = re.findall(r'<tr>(.*?)</tr>', body)[1:]
means = [float(re.findall(r'<td[^>]*>([^<]*)</td>', r)[-1]) for r in rows]
sys.exit(0 if means and means == sorted(means, reverse=True) else 1)
PY
# analyzing again replaces the results whole: no earlier opportunities,
# the factors asked for in the metadata, a new report
"$whatif" analyze -q --factors 3,inf run >/dev/null 2>&1
if [ ! -e run/opportunities.csv ] && grep -q '"factors": "3,inf"' run/run.json && [ -s run/report.html ] &&
   ! grep -q "opportunity" run/report.html; then ok; else ko "whatif analyze left earlier results"; fi
# errors and options
"$whatif" report nowhere >/dev/null 2>err.txt; rc=$?
if [ $rc -eq 1 ] && grep -q "profile.db" err.txt; then ok; else ko "report of a directory without a profile: rc $rc: $(cat err.txt)"; fi
"$whatif" report >/dev/null 2>&1; [ $? -eq 2 ] && ok || ko "report without a directory accepted"
"$whatif" report --help | grep -q "usage: whatif report" && ok || ko "whatif report --help"
for bad in 0 2,2 1,,2 x 2, 5000; do
  "$whatif" run -o bad --threads "$bad" -- ./smooth >/dev/null 2>err.txt
  if [ $? -eq 2 ] && grep -q -- "--threads" err.txt; then ok; else ko "--threads '$bad' accepted"; fi
done
rm -rf norep
OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o norep -- ./smooth >/dev/null 2>&1
[ -s norep/profile.csv ] && [ ! -e norep/report.html ] && ok || ko "--no-report wrote a report (or no profile)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
