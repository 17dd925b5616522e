#!/usr/bin/env bash
# e2e_diff.sh - `whatif diff A B`: rows paired by location, and by line
# order within their file when code was added above them (apps/primes.c
# with three lines inserted: every row "moved", none alone); the
# before/after pair apps/smooth.c (A: the region, offline; B: the region
# parallelized): the shared loop "same", the region only in A, the new
# loop only in B and taken as the code that replaced the region, and A's
# prediction at the factor B achieved, with B's own serial code put in,
# within 10% of B's parallelism (median of 3 pairs, as e2e_whatif).
# Usage: e2e_diff.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
# moved lines
# (one source file, edited between the two builds, as a user does)
mkdir -p src && cp "$root/apps/primes.c" src/primes.c
clang-19 -fopenmp -g -O2 src/primes.c -o p1 || exit 1
inc=$(grep -n '^#include' src/primes.c | tail -1 | cut -d: -f1)
awk -v at="$inc" '{ print } NR == at { print "/* one */"; print "/* two */"; print "/* three */" }' "$root/apps/primes.c" > src/primes.c
clang-19 -fopenmp -g -O2 src/primes.c -o p2 || exit 1
OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o r1 -- ./p1 2000000 >/dev/null 2>&1
OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o r2 -- ./p2 2000000 >/dev/null 2>&1
"$whatif" diff -q -o moved r1 r2 2>moved.err || ko "diff of the moved pair failed: $(cat moved.err)"
if awk -F, 'NR > 2 { n++; if ($4 != "moved") bad = 1; split($1, a, ":"); split($2, b, ":"); if (b[2] - a[2] != 3) bad = 1 } END { exit !(n >= 2 && !bad) }' moved/diff.csv; then ok; else
  ko "moved lines: $(cat moved/diff.csv)"; fi
# a loop deleted between A and B, the rest moved: pairs keep the loops'
# chunk counts (a static loop is not paired with a dynamic one)
cat > m.c <<'C'
#include <stdio.h>
static double a[400000];
int main(void)
{
#pragma omp parallel for /* L1 */
    for (int i = 0; i < 400000; i++) a[i] += 1;
#pragma omp parallel for schedule(dynamic, 100) /* L2 */
    for (int i = 0; i < 400000; i++) a[i] += 2;
#pragma omp parallel for /* L3 */
    for (int i = 0; i < 400000; i++) a[i] += 3;
#pragma omp parallel for schedule(dynamic, 100) /* L4 */
    for (int i = 0; i < 400000; i++) a[i] += 4;
#pragma omp parallel for /* L5 */
    for (int i = 0; i < 400000; i++) a[i] += 5;
    printf("%g\n", a[7]);
    return 0;
}
C
mkdir -p del && cp m.c del/m.c
clang-19 -fopenmp -g -O2 del/m.c -o m1 || exit 1
{ printf '/* one */\n/* two */\n'; grep -v 'L3\|a\[i\] += 3' m.c; } > del/m.c
clang-19 -fopenmp -g -O2 del/m.c -o m2 || exit 1
OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o d1 -- ./m1 >/dev/null 2>&1
OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o d2 -- ./m2 >/dev/null 2>&1
"$whatif" diff -q -o deleted d1 d2 2>/dev/null
l() { grep -n "/\* $1 \*/" "$2" | cut -d: -f1; }
want="m.c:$(l L1 m.c)>m.c:$(l L1 del/m.c) m.c:$(l L2 m.c)>m.c:$(l L2 del/m.c) m.c:$(l L4 m.c)>m.c:$(l L4 del/m.c) m.c:$(l L5 m.c)>m.c:$(l L5 del/m.c) m.c:$(l L3 m.c)>"
got=$(awk -F, '$3 == "loop" { n = split($1, a, "/"); m = split($2, b, "/"); print a[n] ">" b[m] }' deleted/diff.csv | sort | tr '\n' ' ')
want=$(printf '%s\n' $want | sort | tr '\n' ' ')
[ "$got" = "$want" ] && ok || ko "a deleted loop: pairs $got, expected $want"
# before/after
clang-19 -fopenmp -g -O2 -I"$root/include" "$root/apps/smooth.c" -o before -lm || exit 1
clang-19 -fopenmp -g -O2 -I"$root/include" -DPARALLEL_PREPARE "$root/apps/smooth.c" -o after -lm || exit 1
ratios=()
for k in 1 2 3; do
  OMP_NUM_THREADS=2 "$whatif" run -q --no-report --mode offline -o A -- ./before >/dev/null 2>&1
  OMP_NUM_THREADS=2 "$whatif" run -q --no-report -o B -- ./after >/dev/null 2>&1
  "$whatif" diff -o D A B 2>D.err || { ko "diff failed: $(cat D.err)"; continue; }
  pred=$(sed -n 's/.*with [a-z ]*, the prediction is \([0-9.]*\)$/\1/p' D.err)
  [ -n "$pred" ] || pred=$(sed -n 's/.*predicted program parallelism \([0-9.]*\);.*/\1/p' D.err)
  got=$(sed -n 's/.*; B achieved \([0-9.]*\)$/\1/p' D.err)
  ratios+=("$(awk -v p="${pred:-0}" -v g="${got:-0}" 'BEGIN { printf "%.4f", (g > 0 ? p / g : 0) }')")
done
med=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
echo "before/after: predicted/achieved ${ratios[*]} (median $med)"
if awk -v r="${med:-0}" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }'; then ok; else ko "prediction/achieved median $med"; fi
line_of() { grep -n "$1" "$root/apps/smooth.c" | head -1 | cut -d: -f1; }
sm="smooth.c"
csv=D/diff.csv
grep -q "^program,program,program,same," $csv && ok || ko "program row: $(sed -n 2p $csv)"
if awk -F, -v l=":$(grep -n 'omp parallel for' "$root/apps/smooth.c" | tail -1 | cut -d: -f1)\$" '$3 == "loop" && $1 ~ l && $4 == "same"' $csv | grep -q .; then ok; else ko "the smoothing loop not paired: $(cat $csv)"; fi
if awk -F, -v l=":$(line_of __WHATIF_BEGIN__)\$" '$3 == "region" && $1 ~ l && $4 == "only_a"' $csv | grep -q .; then ok; else ko "the region not only in A"; fi
if awk -F, -v l=":$(grep -n 'omp parallel for' "$root/apps/smooth.c" | head -1 | cut -d: -f1)\$" '$3 == "loop" && $2 ~ l && $4 == "only_b"' $csv | grep -q .; then ok; else ko "the new loop not only in B"; fi
grep -q "sped up .*B's loop [^ ]*$sm:$(grep -n 'omp parallel for' "$root/apps/smooth.c" | head -1 | cut -d: -f1)" D.err && ok || ko "the check does not name B's new loop: $(cat D.err)"
if grep -q 'id="diff-checks"' D/diff.html && ! grep -Eiq "https?:|url\(" D/diff.html; then ok; else ko "diff.html"; fi
# errors
"$whatif" diff A >/dev/null 2>&1; [ $? -eq 2 ] && ok || ko "diff with one run accepted"
"$whatif" diff A nowhere >/dev/null 2>err.txt; rc=$?
[ $rc -eq 1 ] && grep -q "nowhere/profile.db" err.txt && ok || ko "diff with a missing run: rc $rc $(cat err.txt)"
"$whatif" diff --help | grep -q "usage: whatif diff" && ok || ko "diff --help"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
