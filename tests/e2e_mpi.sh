#!/usr/bin/env bash
# e2e_mpi.sh - MPI + OpenMP under Open MPI's mpirun (4 ranks x 2 threads,
# --oversubscribe): every rank profiles into its own rank-NNNNN/ (its
# run.json names rank, ranks, host, pid; nothing else is written outside
# them), on the fly and offline; each rank's program work and span are
# within 3% + 1 ms of what apps/hybrid.c measured of itself (MPI calls
# included); whatif analyze puts the ranks side by side and names as the
# longest span and the lowest parallelism the ranks that measured so
# themselves (the last rank, with three times the serial work, unless MPI's
# polling made another as long); whatif report
# writes the ranks' page; a run with fewer ranks clears the extra ones;
# MPICH's launcher (mpiexec.hydra) and Slurm's variables find the rank.
# Usage: e2e_mpi.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  echo "FAIL: no mpirun/mpicc: install openmpi-bin and libopenmpi-dev (./setup.sh --test does)"; exit 1
fi
OMPI_CC=clang-19 mpicc -fopenmp -g -O2 "$root/apps/hybrid.c" -o hybrid || exit 1
asroot=(); [ "$(id -u)" -eq 0 ] && asroot=(--allow-run-as-root)
mpi() { mpirun "${asroot[@]}" --oversubscribe -np "$1" -x OMP_NUM_THREADS=2 "${@:2}"; }
# near_extreme ERRFILE span|parallelism: the ranks whose own measure
# ("hybrid: rank R work W span S") is within 3% of the longest span or of
# the lowest parallelism.  The last rank's serial phase is the longest,
# but MPI calls count as serial work and Open MPI polls while it waits: on
# a loaded machine rank 0, the root of the program's reduction, can spend
# as long waiting for the last rank, and whatif must name what the ranks
# measured, not what the program meant.
near_extreme() {
  awk -v k="$2" '/^hybrid: rank [0-9]+ work [0-9]+ span [0-9]+$/ {
      v[$3] = k == "span" ? $7 : $5 / $7 }
    END { for (r in v) if (x == "" || (k == "span" ? v[r] > x : v[r] < x)) x = v[r]
          for (r in v) if (k == "span" ? v[r] >= 0.97 * x : v[r] <= 1.03 * x) printf "%s ", r }' "$1"
}
in_list() { [ -n "$1" ] && case " $2 " in *" $1 "*) true ;; *) false ;; esac; }
for mode in online offline; do
  rm -rf "$mode"
  if ! mpi 4 "$whatif" run --metric cputime -q --mode $mode -o $mode -- ./hybrid >$mode.out 2>$mode.err; then
    ko "$mode: mpirun failed: $(grep -v '^hybrid' $mode.err | head -3)"; continue
  fi
  n=0
  for r in 0 1 2 3; do
    d=$mode/rank-0000$r
    if [ -s $d/profile.csv ] && grep -q "\"rank\": $r," $d/run.json && grep -q '"ranks": 4,' $d/run.json &&
       grep -q '"host": "' $d/run.json && grep -q '"pid": [0-9]' $d/run.json; then n=$((n + 1)); fi
    read -r w s < <(sed -n "s/^hybrid: rank $r work \([0-9]*\) span \([0-9]*\)$/\1 \2/p" $mode.err)
    read -r gw gs < <(awk -F, '$1 == "program" { print $4, $5 }' $d/profile.csv 2>/dev/null)
    if awk -v a="${gw:-0}" -v b="${w:-0}" -v c="${gs:-0}" -v d="${s:-0}" 'function near(x, y) { e = x - y; if (e < 0) e = -e; return y > 0 && e <= 0.03 * y + 1e6 } BEGIN { exit !(near(a, b) && near(c, d)) }'; then ok; else
      ko "$mode rank $r: work ${gw:-?} span ${gs:-?}, the rank measured $w and $s"; fi
  done
  [ $n -eq 4 ] && ok || ko "$mode: $n of 4 ranks with a profile naming them"
  others=$(ls -A $mode | grep -v '^rank-0000[0-3]$' | grep -v '^\.whatif.lock$' | tr '\n' ' ')
  [ -z "$others" ] && ok || ko "$mode: files outside the ranks' directories: $others"
  "$whatif" analyze $mode >/dev/null 2>$mode.an
  longest=$(sed -n 's/^whatif: rank \([0-9]*\) has the longest OpenMP span.*/\1/p' $mode.an)
  if in_list "$longest" "$(near_extreme $mode.err span)" && [ "$(($(wc -l <$mode/ranks.csv) - 1))" = 4 ] &&
     awk -F, '$2 == "loop" && $3 == 4' $mode/rank_locations.csv | grep -q .; then ok; else
    ko "$mode: whatif analyze of the ranks: $(head -3 $mode.an) (the ranks measured the longest: $(near_extreme $mode.err span))"; fi
  low=$(awk -F, 'NR > 1 && (m == "" || $7 < m) { m = $7; r = $1 } END { print r }' $mode/ranks.csv)
  in_list "$low" "$(near_extreme $mode.err parallelism)" && ok \
    || ko "$mode: the lowest parallelism is rank $low's, the ranks measured $(near_extreme $mode.err parallelism)"
done
"$whatif" report -q online &&
  in_list "$(sed -n 's/.*id="longest">\([0-9]*\)<.*/\1/p' online/report.html | head -1)" "$(near_extreme online.err span)" && grep -q 'href="rank-00002/report.html"' online/report.html && ok || ko "whatif report of the ranks"
# a rank without its profile: left out, said
cp -r offline partial && rm -rf partial/rank-00001
"$whatif" analyze -q partial >/dev/null 2>partial.err
if grep -q "the run had 4 ranks; the profiles of 3 are here" partial.err && [ "$(($(wc -l <partial/ranks.csv) - 1))" = 3 ]; then ok; else
  ko "a missing rank: $(cat partial.err)"; fi
# --threads cannot time a rank alone: refused at once
mpi 2 "$whatif" run --metric cputime -q --threads 1,2 -o thr -- ./hybrid >/dev/null 2>thr.err
grep -q "threads times the program alone" thr.err && ok || ko "--threads under mpirun: $(head -2 thr.err)"
# fewer ranks into the same directory: the extra ones go
mpi 2 "$whatif" run --metric cputime -q -o online -- ./hybrid >/dev/null 2>&1
if [ -d online/rank-00001 ] && [ ! -e online/rank-00002 ] && [ ! -e online/rank-00003 ] && [ ! -e online/ranks.csv ]; then ok; else
  ko "a 2-rank run left: $(ls online | tr '\n' ' ')"; fi
# MPICH's launcher (hydra: PMI_RANK, PMI_SIZE), with a program without MPI
if ! command -v mpiexec.hydra >/dev/null; then
  ko "no mpiexec.hydra: install mpich (./setup.sh --test does)"
else
  clang-19 -fopenmp -g -O2 "$root/apps/primes.c" -o primes || exit 1
  rm -rf hydra
  OMP_NUM_THREADS=2 mpiexec.hydra -n 3 "$whatif" run --metric cputime -q -o hydra -- ./primes 200000 >/dev/null 2>&1
  if [ "$(ls hydra | tr '\n' ' ')" = "rank-00000 rank-00001 rank-00002 " ] &&
     grep -q '"rank": 2,' hydra/rank-00002/run.json && grep -q '"ranks": 3,' hydra/rank-00002/run.json; then ok; else
    ko "hydra: $(ls hydra 2>&1 | tr '\n' ' ')"; fi
fi
# Slurm's srun sets SLURM_PROCID and SLURM_NTASKS (no Slurm here: set by hand)
rm -rf slurm
[ -x primes ] || clang-19 -fopenmp -g -O2 "$root/apps/primes.c" -o primes || exit 1
SLURM_PROCID=1 SLURM_NTASKS=2 OMP_NUM_THREADS=2 "$whatif" run --metric cputime -q -o slurm -- ./primes 200000 >/dev/null 2>&1
if [ -d slurm/rank-00001 ] && grep -q '"rank": 1,' slurm/rank-00001/run.json; then ok; else ko "SLURM_PROCID: $(ls slurm 2>&1)"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
