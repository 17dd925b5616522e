#!/usr/bin/env bash
# stress.sh - the test suite on a loaded machine (issue: a suite that
# holds when the machine is busy).  Runs the suite of BUILD_DIR N times
# with `ctest -j2` while two CPU-bound processes (`yes > /dev/null`) run
# beside it, then N times serially, and prints how many runs passed and
# which tests failed, with the lines a failing test printed (the whole
# output of every run is kept in the log directory, and the work directory
# of each failing end-to-end test, its profiles and traces).
# Usage: tests/stress.sh BUILD_DIR [N] [both|loaded|serial]  (N: 20; both)
set -uo pipefail
build=$(realpath "$1"); n=${2:-20}; which=${3:-both}
case "$which" in both|loaded|serial) ;; *) echo "stress.sh: the third argument is both, loaded or serial" >&2; exit 2 ;; esac
log=$(mktemp -d)
hogs=()
cleanup() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; }
trap cleanup EXIT
run_suite() { # label k extra-ctest-args...
  local label=$1 k=$2; shift 2
  if ctest --test-dir "$build" --output-on-failure "$@" >"$log/$label-$k.txt" 2>&1; then
    echo pass
  else
    local failed
    failed=$(grep -E '^\s+[0-9]+ - ' "$log/$label-$k.txt" | awk '{print $3}')
    echo "fail: $(echo $failed)"
    # an end-to-end test's work directory (its runs' profiles and traces)
    # is kept, before the next run replaces it
    for t in $failed; do
      [ -d "$build/${t//_/-}" ] && cp -r "$build/${t//_/-}" "$log/$label-$k-$t"
    done
    grep -E 'FAIL|[Ee]rror|expected' "$log/$label-$k.txt" | grep -v '^Errors while' | head -8 | sed 's/^/    /'
  fi
}
loaded=0 nloaded=0
if [ "$which" != serial ]; then
  nloaded=$n
  for i in 1 2; do yes >/dev/null & hogs+=($!); done
  for k in $(seq 1 "$n"); do
    r=$(run_suite loaded "$k" -j2)
    echo "loaded run $k: $r"
    [ "$r" = pass ] && loaded=$((loaded + 1))
  done
  cleanup; hogs=()
fi
serial=0 nserial=0
if [ "$which" != loaded ]; then
  nserial=$n
  for k in $(seq 1 "$n"); do
    r=$(run_suite serial "$k")
    echo "serial run $k: $r"
    [ "$r" = pass ] && serial=$((serial + 1))
  done
fi
echo "stress: $loaded of $nloaded loaded runs (ctest -j2 beside two busy processes) and $serial of $nserial serial runs passed; logs in $log"
[ $loaded -eq "$nloaded" ] && [ $serial -eq "$nserial" ]
