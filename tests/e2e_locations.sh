#!/usr/bin/env bash
# e2e_locations.sh - directive rows name file:line for PIE and non-PIE
# executables built with -g, and binary+0xOFFSET with one warning without
# debug information.  Usage: e2e_locations.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/apps/primes.c"
mkdir -p "$work"
pass=0 fail=0
loop_line=$(grep -n 'pragma omp for' "$src" | cut -d: -f1)
par_line=$(grep -n 'pragma omp parallel' "$src" | head -1 | cut -d: -f1)
check_rows() { # name outdir loop-where parallel-where
  if grep -q "^$3,loop,1," "$2/profile.csv" && grep -q "^$4,parallel,1," "$2/profile.csv"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $1: rows:"; cat "$2/profile.csv"; fail=$((fail + 1))
  fi
}
for kind in pie nopie; do
  flags=""; [ $kind = nopie ] && flags="-no-pie -fno-pie"
  clang-19 -fopenmp -g -O2 $flags "$src" -o "$work/primes-$kind" || exit 1
  (cd "$work" && OMP_NUM_THREADS=2 "$whatif" run -q -o "out-$kind" -- "./primes-$kind" 20000 >/dev/null 2>"err-$kind")
  check_rows "$kind" "$work/out-$kind" "[^,]*primes.c:$loop_line" "[^,]*primes.c:$par_line"
done
clang-19 -fopenmp -O2 "$src" -o "$work/primes-nodebug" || exit 1
(cd "$work" && OMP_NUM_THREADS=2 "$whatif" run -q -o out-nodebug -- ./primes-nodebug 20000 >/dev/null 2>err-nodebug)
check_rows nodebug "$work/out-nodebug" "primes-nodebug+0x[0-9a-f]*" "primes-nodebug+0x[0-9a-f]*"
if [ "$(grep -c 'no debug information' "$work/err-nodebug")" -eq 1 ]; then pass=$((pass + 1)); else echo "FAIL: no single warning: $(cat "$work/err-nodebug")"; fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
