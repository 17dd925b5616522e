#!/usr/bin/env bash
# cli_errors.sh - `whatif analyze` on bad traces: every case must exit 1
# with exactly one line on stderr naming the file (and the byte offset for
# damaged content), never crash, and write no profile; a file that cannot
# be written is named, with the reason.
# Usage: cli_errors.sh WHATIF GENTRACE
set -uo pipefail
whatif=$1; gentrace=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

"$gentrace" "$tmp/good" 20000 2 mixed >/dev/null || { echo "gentrace failed"; exit 1; }
"$whatif" analyze -q -o "$tmp/good-out" "$tmp/good" && [ -s "$tmp/good-out/profile.csv" ] \
  && [ "$(head -1 "$tmp/good-out/profile.csv")" = "location,directive,instances,work,span,parallelism,critical_work,critical_percent,grains,mean_grain_work,min_grain_work,max_grain_work,median_grain_work" ] \
  && [ "$(sed -n 2p "$tmp/good-out/profile.csv" | cut -d, -f1)" = program ] && ok || bad "valid trace"
# applied by two threads (the trace is too small for them by default):
# the same profile; the task trees of the mixed shape, whose streams keep
# waiting on each other, end on one thread, the loops keep two
"$whatif" analyze -q -j 2 -o "$tmp/good-out2" "$tmp/good" \
  && cmp -s "$tmp/good-out/profile.csv" "$tmp/good-out2/profile.csv" \
  && grep -q '"analyzer_threads": 1' "$tmp/good-out2/run.json" && ok || bad "valid trace, -j 2"
"$gentrace" "$tmp/loops" 20000 2 loops >/dev/null || { echo "gentrace failed"; exit 1; }
"$whatif" analyze -q -j 1 -o "$tmp/loops-1" "$tmp/loops" \
  && "$whatif" analyze -q -j 2 -o "$tmp/loops-2" "$tmp/loops" \
  && cmp -s "$tmp/loops-1/profile.csv" "$tmp/loops-2/profile.csv" \
  && grep -q '"analyzer_threads": 2' "$tmp/loops-2/run.json" && ok || bad "loops, -j 2"

expect_error() { # name dir needle
  local name=$1 dir=$2 needle=$3
  rm -rf "$tmp/out"
  "$whatif" analyze -q -o "$tmp/out" "$dir" 2>"$tmp/err" >/dev/null
  local rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  if [ $rc -ne 1 ]; then bad "$name: exit $rc (want 1)"; return; fi
  if [ "$lines" -ne 1 ]; then bad "$name: $lines lines on stderr"; cat "$tmp/err"; return; fi
  if ! grep -q -- "$needle" "$tmp/err"; then bad "$name: message lacks '$needle': $(cat "$tmp/err")"; return; fi
  if [ -e "$tmp/out/profile.csv" ]; then bad "$name: wrote a profile"; return; fi
  # the same message whatever the number of threads
  "$whatif" analyze -q -j 2 -o "$tmp/out" "$dir" 2>"$tmp/err2" >/dev/null
  if ! cmp -s "$tmp/err" "$tmp/err2"; then bad "$name: -j 2 said $(cat "$tmp/err2")"; return; fi
  ok
}

mk() { rm -rf "$tmp/$1"; cp -r "$tmp/good" "$tmp/$1"; }
s0=thread-0000.wit

expect_error "missing dir" "$tmp/nope" "cannot open trace directory"
mkdir "$tmp/empty-dir"; expect_error "no streams" "$tmp/empty-dir" "no trace streams"
mk empty; : >"$tmp/empty/$s0"; expect_error "empty file" "$tmp/empty" "$s0: byte 0"
mk version; printf '\x09' | dd of="$tmp/version/$s0" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_error "wrong version" "$tmp/version" "version 9"
mk magic; printf 'X' | dd of="$tmp/magic/$s0" bs=1 seek=0 conv=notrunc 2>/dev/null
expect_error "bad magic" "$tmp/magic" "$s0: byte 0"
size=$(stat -c %s "$tmp/good/$s0")
for cut in 30 100 $((size / 2)) $((size - 1)); do
  mk trunc; truncate -s $cut "$tmp/trunc/$s0"
  expect_error "truncated at $cut" "$tmp/trunc" "$s0"
done
# a cut in a block's payload: the message says what to do about it
mk trunc; truncate -s $((size / 2)) "$tmp/trunc/$s0"
expect_error "truncated, the way out" "$tmp/trunc" "truncated.*whatif analyze --partial profiles what was recorded before it"
mk flip; printf '\xff' | dd of="$tmp/flip/$s0" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
expect_error "corrupt byte" "$tmp/flip" "$s0: byte"
# --partial on a trace damaged before any work: said as damage, not as a
# run killed at its start
"$gentrace" "$tmp/one" 2000 1 mixed >/dev/null || { echo "gentrace failed"; exit 1; }
printf '\xff' | dd of="$tmp/one/$s0" bs=1 seek=60 conv=notrunc 2>/dev/null
"$whatif" analyze -q --partial -o "$tmp/one-out" "$tmp/one" 2>"$tmp/err" >/dev/null; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
   grep -q "no work of the program could be read before the trace's damage: .*CRC mismatch" "$tmp/err"; then ok; else
  bad "--partial, damage before any work: rc $rc: $(cat "$tmp/err")"; fi
mk missing; rm "$tmp/missing/thread-0001.wit"; expect_error "missing stream" "$tmp/missing" "no stream begins\|never completed\|no end-of-program"

"$whatif" analyze 2>/dev/null; [ $? -eq 2 ] && ok || bad "usage error exit code"
for j in 0 x -3 2000 ""; do
  "$whatif" analyze -j "$j" "$tmp/good" 2>"$tmp/err" >/dev/null; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--jobs" "$tmp/err" \
    && ok || bad "-j '$j': rc $rc: $(cat "$tmp/err")"
done
"$whatif" bogus 2>/dev/null; [ $? -eq 2 ] && ok || bad "unknown command exit code"
"$whatif" run --metric nosuchevent -- true 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || bad "bad metric: rc $rc: $(cat "$tmp/err")"

# a file that cannot be written whole (a full disk; here a file size limit,
# its signal ignored, so writes fail with EFBIG): one line naming the file
# and why (the report said nothing, grains a stray byte)
write_limited() { # name needle command...
  local name=$1 needle=$2; shift 2
  (trap '' XFSZ; ulimit -f 4; "$@") >/dev/null 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
     grep -q "$needle: cannot write it: File too large" "$tmp/err"; then ok; else
    bad "$name, a write that fails: rc $rc: $(cat "$tmp/err")"; fi
}
write_limited report "big.html" "$whatif" report -q -o "$tmp/big.html" "$tmp/good-out"
write_limited grains "grains.csv" "$whatif" grains -q -o "$tmp/g-big" "$tmp/good"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
