#!/usr/bin/env bash
# e2e_asan.sh - the profiler under AddressSanitizer and UBSan, loaded into
# real OpenMP programs (the sanitized build's unit tests exercise only the
# analysis): programs built with the sanitizers run under the sanitized
# `whatif run` in both modes, must print their results and exit 0 with no
# sanitizer report, and a program that pauses the runtime hard (no thread
# end events after it) must leak exactly what it leaks without the tool.
# Usage: e2e_asan.sh WHATIF_BINARY WORK_DIR
set -uo pipefail
whatif=$1; work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$work" && cd "$work" || exit 1
cc="clang-19 -fopenmp -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -I$here/e2e"
$cc "$here/e2e/shapes.c" -o shapes -lpthread || exit 1
$cc "$here/e2e/pause.c" -o pause || exit 1
# No symbolizer: whatif run's LD_PRELOAD would reach it too, and a report
# needs none to fail the test.
export ASAN_OPTIONS=symbolize=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=0
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "$1"; fail=$((fail + 1)); }
reports() { grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1" | head -3; }

# case  env: the shapes whose paths are the tool's least common ones
cases=(
  "untied         -"
  "taskloop_split -"
  "nest_wide      OMP_MAX_ACTIVE_LEVELS=2"
  "pthreads10     -"
  "tw_outer_tg    -"
  "dup            -"
)
for line in "${cases[@]}"; do
  read -r name envset <<<"$line"
  envs=(OMP_NUM_THREADS=2); [ "$envset" != - ] && envs+=("$envset")
  rm -rf "out-$name"
  env "${envs[@]}" "$whatif" run -q --mode both -o "out-$name" -- ./shapes "$name" \
    >"$name.out" 2>"$name.err"
  rc=$?
  if [ $rc = 0 ] && grep -q "^ok $name" "$name.out" && [ -z "$(reports "$name.err")" ] &&
     [ -s "out-$name/profile.csv" ] && [ -s "out-$name/online/profile.csv" ]; then ok; else
    ko "FAIL: $name under the sanitized tool: rc $rc, $(head -c 200 "$name.out"), $(reports "$name.err") $(grep -v '^whatif-' "$name.err" | head -3)"
  fi
done

# A hard pause: the runtime ends its threads without their end events;
# every thread's state the tool made must still be reachable (libomp
# itself leaks 2-3 KB there).
leaks() { sed -n 's/^SUMMARY: AddressSanitizer: \([0-9]*\) byte(s) leaked.*/\1/p' "$1"; }
OMP_NUM_THREADS=2 ./pause >plain.out 2>plain.err
own=$(leaks plain.err)
for mode in online offline; do
  rm -rf "out-pause-$mode"
  OMP_NUM_THREADS=2 "$whatif" run -q --metric cputime --mode $mode -o "out-pause-$mode" -- ./pause \
    >"pause-$mode.out" 2>"pause-$mode.err"
  # (LeakSanitizer's exit drops the program's buffered output: e2e_run
  # checks the output and the profile's end)
  if [ -n "$own" ] && [ "$(leaks "pause-$mode.err")" = "$own" ] &&
     grep -q '"complete": false' "out-pause-$mode/run.json" &&
     ! grep -q 'runtime error:' "pause-$mode.err"; then ok; else
    ko "FAIL: hard pause ($mode): leaked $(leaks "pause-$mode.err") bytes against the program's own ${own:-none}"
  fi
done

echo "e2e_asan: $pass passed, $fail failed"
[ $fail = 0 ]
