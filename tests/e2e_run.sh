#!/usr/bin/env bash
# e2e_run.sh - the run around the program (`whatif run`): child processes
# and forks never touch the profile, an earlier run's results are never
# shown as this run's, two runs into one directory exclude each other,
# signals reach the program, a crash or a kill keeps what was recorded
# (offline), the output directory is checked and made absolute before the
# program starts, the program's stdout is its own, a program built with
# GCC runs on libomp, bad settings are refused, a rebuilt binary is named
# as such, the tool works from a path with a space in it, and neither the
# command nor the tool loads libpfm4 at start-up.
# Usage: e2e_run.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$(realpath "$1"); work=$(realpath -m "$2")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/e2e_lib.sh"
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
clang-19 -fopenmp -g -O1 -I"$here/e2e" "$here/e2e/process.c" -o process || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }
work_of() { awk -F, '$1 == "program" { print $4 }' "$1/profile.csv" 2>/dev/null; }
# The parent's two regions: 2 threads x 10 ms each; a profile that holds a
# child's region too would weigh 10 ms (2 threads x 5 ms) more.  Where the
# program measured its own work (stderr file as $2: the regions and the
# fork, wait or system() between them, which on a loaded VM can weigh
# milliseconds) the profile must hold that within 4 ms.
parent_only() {
  local w e
  w=$(work_of "$1")
  e=$(sed -n 's/^whatif-expect work=\([0-9]*\).*/\1/p' "${2:-/dev/null}" 2>/dev/null | tail -1)
  if [ -n "$e" ]; then
    awk -v w="$w" -v e="$e" 'BEGIN { d = w - e; if (d < 0) d = -d; exit !(w > 35e6 && d < 4e6) }'
  else
    awk -v w="$w" 'BEGIN { exit !(w > 35e6 && w < 48e6) }'
  fi
}
export OMP_NUM_THREADS=2

# 1. children: only the process whatif started is profiled
for what in system fork forkexit forkrace; do
  for mode in online offline; do
    out=o-$what-$mode
    "$whatif" run --metric cputime -q --mode $mode -o $out -- ./process $what >$out.out 2>$out.err
    rc=$?
    # forkrace's parent runs tiny regions until its child is gone: more
    # work of its own, so only the trace's integrity is judged there
    if [ $rc -eq 0 ] && { [ $what = forkrace ] || parent_only $out $out.err; } &&
       ! ls -d $out/child-* >/dev/null 2>&1 &&
       ! grep -qi "error\|corrupt\|reused\|redefined\|incomplete" $out.err &&
       grep -q '"complete": true' $out/run.json; then ok; else
      ko "$what $mode: rc $rc, work $(work_of $out) ($(grep -h '^whatif-expect' $out.err)): $(head -2 $out.err)"; fi
  done
done
"$whatif" run --metric cputime -q --mode offline --children profile -o o-follow -- ./process system >/dev/null 2>o-follow.err
kid=$(ls -d o-follow/child-* 2>/dev/null | head -1)
if parent_only o-follow o-follow.err && [ -n "$kid" ] && [ -s "$kid/profile.csv" ]; then ok; else
  ko "--children profile: $(ls o-follow) $(head -2 o-follow.err)"; fi

# 2. stale results: a run that profiles nothing shows nothing, exits 1
cat >noomp.c <<'EOF'
#include <omp.h>
#include <stdio.h>
int main(void) { printf("%d\n", omp_get_wtime() > 0); return 0; }
EOF
clang-19 -fopenmp noomp.c -o noomp || exit 1
for mode in online offline; do
  "$whatif" run --metric cputime -q --mode $mode -o stale -- ./process >/dev/null 2>&1
  "$whatif" run --metric cputime -q --mode $mode -o stale -- ./noomp >/dev/null 2>stale.err
  rc=$?
  if [ $rc -eq 1 ] && [ ! -e stale/profile.csv ] && [ ! -e stale/trace/thread-0000.wit ] &&
     grep -q "ran no OpenMP construct" stale.err; then ok; else
    ko "stale ($mode): rc $rc, $(ls stale) $(cat stale.err)"; fi
done
#    two runs into one directory, or a run and an analysis
mkdir -p an-src && "$whatif" run --metric cputime -q --mode offline --no-analyze -o an-src -- ./process >/dev/null 2>&1
"$whatif" run --metric cputime -q -o locked -- ./process sleep >/dev/null 2>&1 &
first=$!
sleep 1
prog=$(ps -o pid= --ppid $first | tr -d ' ')
"$whatif" run --metric cputime -q -o locked -- ./process >/dev/null 2>locked.err
rc=$?
if [ $rc -eq 1 ] && grep -q "another whatif run or analyze is writing into this directory" locked.err; then ok; else
  ko "lock: rc $rc, $(cat locked.err)"; fi
"$whatif" analyze -q -o locked an-src >/dev/null 2>locked-an.err
rc=$?
if [ $rc -eq 1 ] && grep -q "another whatif run or analyze" locked-an.err; then ok; else
  ko "lock (analyze): rc $rc, $(cat locked-an.err)"; fi
#    whatif run killed outright: its program still runs and holds the lock
kill -KILL $first; wait $first 2>/dev/null
"$whatif" run --metric cputime -q -o locked -- ./process >/dev/null 2>locked2.err
rc=$?
[ -n "$prog" ] && kill -TERM $prog 2>/dev/null
if [ $rc -eq 1 ] && [ -n "$prog" ] && grep -q "another whatif run or analyze" locked2.err; then ok; else
  ko "lock (orphan): rc $rc, program ${prog:-?}, $(cat locked2.err)"; fi

#    a program that turns the tools interface off itself is told so
PROCESS_WHAT=toolsoff "$whatif" run --metric cputime -q -o toolsoff -- ./process toolsoff >/dev/null 2>toolsoff.err
rc=$?
if [ $rc -eq 1 ] && grep -q "turned the OpenMP tools interface off itself" toolsoff.err; then ok; else
  ko "toolsoff: rc $rc, $(cat toolsoff.err)"; fi
#    a statically linked program: the tool cannot be preloaded, said so
#    (it was told it ran no OpenMP and asked whether it used -fopenmp)
printf 'int main(void) { return 0; }\n' >static.c
if gcc -static static.c -o static_prog 2>static.cc.err; then
  "$whatif" run --metric cputime -q -o static-out -- ./static_prog >/dev/null 2>static.err
  rc=$?
  if [ $rc -eq 1 ] && grep -q "is statically linked, so whatif cannot load its tool" static.err; then ok; else
    ko "static program: rc $rc: $(head -2 static.err)"; fi
else
  ko "gcc -static failed (libc6-dev): $(head -2 static.cc.err)"
fi
#    a wrapper script whose child runs OpenMP: said, and profiled on request
printf '#!/bin/sh\n"%s" child\n' "$PWD/process" >wrapper.sh && chmod +x wrapper.sh
"$whatif" run --metric cputime -q -o wrapped -- ./wrapper.sh >/dev/null 2>wrapped.err
rc=$?
if [ $rc -eq 1 ] && grep -q "but a process it started did: profile such processes with --children profile" wrapped.err; then ok; else
  ko "wrapper: rc $rc, $(cat wrapped.err)"; fi
for mode in online offline; do
  "$whatif" run --metric cputime -q --mode $mode --children profile -o wrapped-$mode -- ./wrapper.sh >/dev/null 2>wrapped-$mode.err
  rc=$?
  kid=$(ls -d wrapped-$mode/child-* 2>/dev/null | head -1)
  if [ $rc -eq 0 ] && [ -n "$kid" ] && [ -s "$kid/profile.csv" ] &&
     grep -q "a child's profile in" wrapped-$mode.err; then ok; else
    ko "wrapper --children profile ($mode): rc $rc, $(cat wrapped-$mode.err)"; fi
done
#    a profile file that cannot be written: said, and the run fails
for mode in online offline; do
  rm -rf nodb-$mode; mkdir -p nodb-$mode/profile.db
  "$whatif" run --metric cputime -q --mode $mode -o nodb-$mode -- ./process >/dev/null 2>nodb-$mode.err
  rc=$?
  if [ $rc -eq 1 ] && grep -q "the profile is incomplete: profile.db could not be written" nodb-$mode.err; then ok; else
    ko "unwritable profile.db ($mode): rc $rc, $(cat nodb-$mode.err)"; fi
done

# 3. signals and crashes: offline, the profile of what was recorded
"$whatif" run --metric cputime -q --mode offline -o term -- ./process sleep >/dev/null 2>term.err &
runner=$!
sleep 1.5
kill -TERM $runner; wait $runner
rc=$?
w=$(work_of term)
if [ $rc -eq 143 ] && grep -q "killed by signal 15" term.err && [ -n "$w" ] &&
   awk -v w="$w" 'BEGIN { exit !(w > 15e6 && w < 28e6) }' &&
   grep -q '"complete": false' term/run.json; then ok; else
  ko "SIGTERM: rc $rc, work ${w:-none}: $(head -3 term.err)"; fi
for what in crash abort overflow; do
  "$whatif" run --metric cputime -q --mode offline -o $what -- ./process $what >/dev/null 2>$what.err
  rc=$?
  w=$(work_of $what)
  if [ $rc -gt 128 ] && [ -n "$w" ] && awk -v w="$w" 'BEGIN { exit !(w > 15e6 && w < 28e6) }' &&
     grep -q '"complete": false' $what/run.json; then ok; else
    ko "$what offline: rc $rc, work ${w:-none}: $(head -3 $what.err)"; fi
  "$whatif" run --metric cputime -q --mode online -o $what-online -- ./process $what >/dev/null 2>$what-online.err
  rc=$?
  if [ $rc -gt 128 ] && grep -q "mode offline keeps what was recorded" $what-online.err; then ok; else
    ko "$what online: rc $rc: $(head -3 $what-online.err)"; fi
done
#    _exit runs no exit handler, C11's quick_exit only at_quick_exit
#    handlers (the tool has one): the profile is written all the same
for what in quickexit cquickexit; do
  for mode in online offline; do
    "$whatif" run --metric cputime -q --mode $mode -o $what-$mode -- ./process $what >/dev/null 2>$what.err
    rc=$?
    w=$(work_of $what-$mode)
    if [ $rc -eq 0 ] && [ -n "$w" ] && awk -v w="$w" 'BEGIN { exit !(w > 15e6 && w < 28e6) }'; then ok; else
      ko "$what ($mode): rc $rc, work ${w:-none}: $(head -2 $what.err)"; fi
  done
done
#    a raw exit_group runs no handler at all: said so, not "said why above"
"$whatif" run --metric cputime -q --mode online -o eg -- ./process exitgroup >/dev/null 2>eg.err
rc=$?
if [ $rc -eq 1 ] && grep -q "ended without running its exit handlers" eg.err &&
   ! grep -q "said why above" eg.err; then ok; else
  ko "exit_group: rc $rc: $(head -3 eg.err)"; fi

#    a program that closes every descriptor it did not open, then opens a
#    file of its own on one of their numbers: the trace goes on in its own
#    files (it was lost: "Bad file descriptor"), the program's file is its
#    own
for mode in offline both; do
  rm -rf cfd-$mode own.txt
  "$whatif" run --metric cputime -q --mode $mode -o cfd-$mode -- ./process closefds >/dev/null 2>cfd.err
  rc=$?
  if [ $rc -eq 0 ] && [ "$(cat own.txt 2>/dev/null)" = mine ] && parent_only cfd-$mode &&
     grep -q '"complete": true' cfd-$mode/run.json; then ok; else
    ko "closefds ($mode): rc $rc, own.txt '$(head -c 40 own.txt 2>/dev/null | tr -cd '[:print:]')': $(head -2 cfd.err)"; fi
done

# 4. the output directory: made with its parents, absolute, checked first
"$whatif" run --metric cputime -q -o deep/a/b -- ./process chdir >/dev/null 2>&1
if parent_only deep/a/b; then ok; else ko "-o deep/a/b with a program that changes directory"; fi
long=$(printf 'd%.0s' $(seq 1 120))
"$whatif" run --metric cputime -q -o "long/$long/$long/$long/$long/$long" -- ./process >/dev/null 2>long.err
db="long/$long/$long/$long/$long/$long/profile.db"
cp "$db" short.db 2>/dev/null # (the sqlite3 shell opens no such path either)
if [ -s "$db" ] && [ "$(sqlite3 short.db 'SELECT count(*) FROM location')" -gt 1 ]; then ok; else
  ko "a 600-character -o: $(head -c 300 long.err)"; fi
: >afile
"$whatif" run --metric cputime -q -o afile -- ./process >afile.out 2>afile.err
rc=$?
if [ $rc -eq 1 ] && [ ! -s afile.out ] && grep -q "cannot create the directory" afile.err; then ok; else
  ko "-o naming a file: rc $rc, program output '$(cat afile.out)'"; fi

#    the tool attached without whatif run, a relative WHATIF_OUT: the
#    program's later change of directory does not move the profile
rm -rf relout
WHATIF_OUT=relout OMP_TOOL_LIBRARIES="$(dirname "$whatif")/../lib/libwhatif.so" \
  ./process chdir >/dev/null 2>relout.err
if [ -s relout/profile.csv ] && [ ! -e /relout ]; then ok; else
  ko "relative WHATIF_OUT, the program changes directory: $(ls relout 2>&1 | head -3)"; fi

#    a command line longer than run.json keeps says it was cut
"$whatif" run --metric cputime -q --no-report -o longcmd -- ./process none $(seq 1 2000) >/dev/null 2>&1
if grep -q '"command": "[^"]*1000 [^"]* \[cut\]"' longcmd/run.json; then ok; else
  ko "a cut command line: $(grep -o '"command": "[^"]*' longcmd/run.json | tail -c 40)"; fi

# 5. the program's stdout is its own; the summary goes to stderr
for mode in online offline; do
  "$whatif" run --metric cputime --mode $mode -o so-$mode -- ./process >so.out 2>so.err
  if [ "$(cat so.out)" = "parent ok" ] && grep -q "^whatif: program: work" so.err; then ok; else
    ko "stdout ($mode): '$(cat so.out)'"; fi
done

#    started with stdout and stdin closed: the tool's files never take
#    descriptors 0-2, so the program's output goes nowhere, not into a
#    trace stream (it once did: offline, its printf landed in thread 0's)
for mode in offline online; do
  rm -rf closed-$mode
  "$whatif" run --metric cputime -q --mode $mode -o closed-$mode -- ./process >&- <&- 2>closed.err
  rc=$?
  if [ $rc -eq 0 ] && [ -s closed-$mode/profile.csv ] &&
     ! grep -rqa "parent ok" closed-$mode; then ok; else
    ko "stdout closed ($mode): rc $rc: $(grep -rla 'parent ok' closed-$mode | head -2) $(head -2 closed.err)"; fi
done

# 7. a program built with GCC runs on libomp
if command -v gcc >/dev/null; then
  gcc -fopenmp -g -O1 -I"$here/e2e" "$here/e2e/process.c" -o process_gcc || exit 1
  "$whatif" run --metric cputime -q -o gcc -- ./process_gcc >/dev/null 2>gcc.err
  if parent_only gcc && grep -q '"runtime_note": "built with GCC' gcc/run.json; then ok; else
    ko "gcc program: $(head -3 gcc.err)"; fi
  # a region whose body is one loop is one GOMP_parallel_loop_* call, whose
  # address libomp gives the primary thread's loop events only: all of
  # the loop's chunks are still one row at the program's line
  gcc -fopenmp -g -O0 -I"$here/e2e" "$here/e2e/gccloop.c" -o gccloop || exit 1
  OMP_NUM_THREADS=4 "$whatif" run --metric cputime -q -o gccloop-out -- ./gccloop >/dev/null 2>gccloop.err
  line=$(grep -n 'pragma omp parallel' "$here/e2e/gccloop.c" | cut -d: -f1)
  nloop=$(grep -c ',loop,' gccloop-out/profile.csv)
  merged=$(objdump -d gccloop | grep -c 'call.*<GOMP_parallel_loop')
  if [ "$merged" -ge 1 ] && [ "$nloop" = 1 ] &&
     grep -q "gccloop.c:$line,loop,1," gccloop-out/profile.csv &&
     ! grep -q 'unknown' gccloop-out/profile.csv gccloop.err; then ok; else
    ko "gcc merged parallel loop: $nloop loop rows: $(cut -d, -f1-4 gccloop-out/profile.csv | tr '\n' ' ')"; fi
  # a thread cancels the region: the others leave the next barrier for the
  # region's end, the cancelled one never reaches it (once no profile:
  # "the graph is incomplete")
  gcc -fopenmp -g -O2 -I"$here/e2e" "$here/e2e/gcccancel.c" -o gcccancel || exit 1
  for T in 2 4; do
    rm -rf gcccancel-out
    # (libomp's cancellable GOMP barrier has hung under the tool, all
    # threads inside the runtime, in nested regions: docs/limits.md)
    OMP_CANCELLATION=true OMP_NUM_THREADS=$T timeout -k 10 120 "$whatif" run --metric cputime -q --mode both -o gcccancel-out -- ./gcccancel >gcccancel.out 2>gcccancel.err
    rc=$?
    if [ $rc = 0 ] && [ "$(cat gcccancel.out)" = ok ] &&
       cmp -s gcccancel-out/profile.csv gcccancel-out/online/profile.csv &&
       check_expect gcccancel-out gcccancel.err "gcc cancel" 3 1500000 >/dev/null; then ok; else
      ko "gcc cancel parallel at $T threads: rc $rc $(grep -v '^whatif-' gcccancel.err | head -2)"; fi
  done
fi

# 7b. a hard pause ends the runtime's tools interface: the profile says
#     it covers the program up to the pause (it once said complete)
clang-19 -fopenmp -g -O1 "$here/e2e/pause.c" -o pause || exit 1
for mode in online offline; do
  rm -rf pause-$mode
  "$whatif" run --metric cputime -q --mode $mode -o pause-$mode -- ./pause >pause.out 2>pause.err
  rc=$?
  if [ $rc = 0 ] && [ "$(cat pause.out)" = "pause 0 1" ] &&
     grep -q '"complete": false' pause-$mode/run.json &&
     grep -q '"incomplete_why": "the program paused the OpenMP runtime hard' pause-$mode/run.json &&
     grep -q '^whatif: warning: the program paused' pause.err; then ok; else
    ko "hard pause ($mode): rc $rc '$(cat pause.out)' $(grep -v '^whatif-' pause.err | head -2)"; fi
done

# 8. settings: refused whole, before the program runs
for f in "2," ",2" "2,,4" "1e309" "0.5" "$(printf '2,%.0s' $(seq 1 130))2"; do
  "$whatif" run --metric cputime -q --factors "$f" -o fac -- ./process >fac.out 2>fac.err
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s fac.out ] && [ "$(wc -l <fac.err)" -eq 1 ]; then ok; else
    ko "--factors '$f': rc $rc $(cat fac.err)"; fi
done
# 9. numbers are JSON numbers
if grep -q '"threads": [0-9]' so-online/run.json; then ok; else ko "run.json threads not a number"; fi

# 6. the binary: a rebuilt one is named as such, not as lacking -g
clang-19 -fopenmp -O1 -I"$here/e2e" "$here/e2e/process.c" -o nodebug || exit 1
"$whatif" run --metric cputime -q --mode offline --no-analyze -o rebuilt -- ./nodebug >/dev/null 2>&1
clang-19 -fopenmp -O1 -g -DREBUILT -I"$here/e2e" "$here/e2e/process.c" -o nodebug || exit 1
"$whatif" analyze -q -o rebuilt rebuilt/trace >/dev/null 2>rebuilt.err
if grep -q "nodebug was rebuilt since the run" rebuilt.err; then ok; else ko "rebuilt binary: $(cat rebuilt.err)"; fi
#    a program found through PATH keeps its lines
mkdir -p bin; cp process bin/
(cd / && PATH="$work/bin:$PATH" "$whatif" run --metric cputime -q -o "$work/viapath" -- process >/dev/null 2>&1)
if grep -q "process.c:[0-9]*,parallel" viapath/profile.csv; then ok; else ko "program found through PATH: $(head -3 viapath/profile.csv)"; fi

# a thread of the program's ends, then the program reads its stdin: the
# profiler closed nothing of the program's (it closed fd 0 at every thread
# end when not sampling), in both modes, sampled or not
for opt in --no-sample --sample-rate=1000; do
  for mode in online offline; do
    out=$(echo hello | "$whatif" run --metric cputime -q --no-report --mode $mode $opt -o stdin -- ./process stdin 2>stdin.err)
    rc=$?
    if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^read hello$"; then ok; else
      ko "stdin after a thread ended ($mode $opt): rc $rc, output: $out"; fi
  done
done

# 10. --repeat: three runs, the one of median program span is the profile,
#     every row's median and range across them in repeat.csv and
#     profile.db, matching the runs' own profiles
"$whatif" run --metric cputime --repeat 3 -o rep -- ./process >/dev/null 2>rep.err
rc=$?
spans=$(for k in 1 2 3; do awk -F, '$1 == "program" { print $5 }' rep/run-$k/profile.csv; done | sort -n | tr '\n' ' ')
read -r smin smed smax <<<"$spans"
read -r runs rmed rmin rmax < <(awk -F, '$1 == "program" { print $3, $7, $8, $9 }' rep/repeat.csv)
chosen=$(sqlite3 rep/profile.db "SELECT directory FROM repeat_run WHERE chosen = 1")
if [ $rc -eq 0 ] && [ "${runs:-}" = 3 ] && [ "${rmed:-}" = "$smed" ] && [ "${rmin:-}" = "$smin" ] &&
   [ "${rmax:-}" = "$smax" ] && cmp -s rep/profile.csv "rep/$chosen/profile.csv" &&
   [ "$(awk -F, '$1 == "program" { print $5 }' rep/profile.csv)" = "$smed" ] &&
   [ "$(sqlite3 rep/profile.db "SELECT count(*) FROM repeat_stat")" = "$(($(wc -l <rep/repeat.csv) - 1))" ] &&
   grep -q "3 runs: program parallelism" rep.err; then ok; else
  ko "--repeat 3: rc $rc, spans $spans, repeat.csv program $runs $rmed [$rmin, $rmax], chosen ${chosen:-?}"; fi
#    a program that fails: said so, its status passed on
"$whatif" run --metric cputime --repeat 2 --mode offline -o repfail -- ./process abort >/dev/null 2>repfail.err
rc=$?
if [ $rc -eq 134 ] && grep -q "run 1 of 2: the program failed (exit status 134)" repfail.err; then ok; else
  ko "--repeat 2 of an aborting program: rc $rc: $(grep 'whatif run' repfail.err | head -2)"; fi
"$whatif" run --metric cputime --no-sample --sample-rate 100 -o bad -- ./process >/dev/null 2>bad.err
rc=$?
if [ $rc -eq 2 ] && grep -q "contradict" bad.err; then ok; else ko "--no-sample --sample-rate: rc $rc"; fi
"$whatif" run --metric cputime --repeat 0 -o rep0 -- ./process >/dev/null 2>rep0.err
rc=$?
if [ $rc -eq 2 ] && grep -q "repeat 0: use 1 to 100" rep0.err; then ok; else ko "--repeat 0: rc $rc"; fi

# the tool installed under a path with a space
root="$work/with space"; mkdir -p "$root/bin" "$root/lib"
cp "$whatif" "$root/bin/"; cp "$(dirname "$whatif")/../lib/libwhatif.so" "$root/lib/"
"$root/bin/whatif" run --metric cputime -q -o spaced -- ./process >/dev/null 2>spaced.err
if parent_only spaced; then ok; else ko "tool path with a space: $(head -2 spaced.err)"; fi

# libpfm4 is opened only when a metric names a PMU event: loading it
# cost every profiled program and every command ~5 ms at start-up
# (docs/performance.md, "A shorter start")
tool="$(dirname "$whatif")/../lib/libwhatif.so"
if [ -f "$tool" ] && ! readelf -d "$whatif" "$tool" | grep -q 'NEEDED.*libpfm'; then
  ok
else
  ko "the command or the tool needs libpfm at load: $(readelf -d "$whatif" "$tool" 2>&1 | grep -m1 libpfm)"
fi

# ... and works without it: hidden in a private mount namespace (where
# this machine lets us make one), the default metric profiles and a PMU
# event name is refused in one line that names what is missing
pfm=$(ldconfig -p 2>/dev/null | awk '/libpfm\.so\.4 / { print $NF; exit }')
if [ -n "$pfm" ] && unshare -m true 2>/dev/null; then
  : >not-a-library.so
  unshare -m bash -c "mount --bind not-a-library.so '$(readlink -f "$pfm")' &&
    '$whatif' run --metric cputime -q -o nopfm -- ./process >/dev/null 2>nopfm.err;
    echo \$? >nopfm.rc;
    '$whatif' run --metric PERF_COUNT_HW_CPU_CYCLES -q -o nopfm-event -- ./process >/dev/null 2>nopfm-event.err;
    echo \$? >nopfm-event.rc"
  if [ "$(cat nopfm.rc 2>/dev/null)" = 0 ] && parent_only nopfm; then ok; else
    ko "without libpfm4, the default metric: $(head -2 nopfm.err 2>/dev/null)"; fi
  if [ "$(cat nopfm-event.rc 2>/dev/null)" = 2 ] && [ "$(wc -l <nopfm-event.err)" -eq 1 ] &&
     grep -q "needs libpfm4" nopfm-event.err; then ok; else
    ko "without libpfm4, an event name: rc $(cat nopfm-event.rc 2>/dev/null): $(cat nopfm-event.err 2>/dev/null)"; fi
else
  echo "note: no private mount namespace here: the run without libpfm4 is not tried"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
