#!/usr/bin/env bash
# analyzer.sh - offline analyzer throughput and peak memory on generated
# traces of 10^6 and 10^7 nodes (three shapes, 4 streams), median of 5 runs.
# Columns: the profile pass alone (run.json's analyzer_profile_seconds) on
# one thread (-j 1) and as it runs by default (one thread per stream up to
# the CPUs; "threads" says how many applied the records to the end: 1 when
# the streams kept waiting on each other), the whole `whatif analyze` as it
# runs by default (scan, profile, reports), and with the opportunities
# pass asked for (--opportunities: what-if scenarios for the leading
# critical-path locations).
#
#   bench/analyzer.sh [BUILD_DIR]     (default: build)
#
# Prints a markdown table; copy it into docs/performance.md with the
# machine it ran on.  Needs GNU time (/usr/bin/time, Debian package 'time').
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
whatif="$build/bin/whatif"
gentrace="$build/bin/gentrace"
[ -x "$whatif" ] && [ -x "$gentrace" ] || { echo "analyzer.sh: build first (./setup.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "analyzer.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "| trace | nodes | trace bytes | bytes/node | profile pass s, -j 1 | M nodes/s | profile pass s | threads | M nodes/s | analyze s | M nodes/s | analyze s, --opportunities | M nodes/s | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
median() { sort -g | sed -n 3p; }
for nodes in 1000000 10000000; do
  for shape in loops tasks mixed; do
    dir="$tmp/$shape-$nodes"
    read -r real_nodes _ bytes _ < <("$gentrace" "$dir" "$nodes" 4 "$shape")
    full=(); noopp=(); pass=(); one=(); rss=0
    for _ in 1 2 3 4 5; do
      out=$( { /usr/bin/time -f "%e %M" "$whatif" analyze -q --opportunities -o "$tmp/out" "$dir" >/dev/null; } 2>&1 | tail -1)
      full+=("${out% *}"); r="${out#* }"; [ "$r" -gt "$rss" ] && rss=$r
      out=$( { /usr/bin/time -f "%e %M" "$whatif" analyze -q -o "$tmp/out" "$dir" >/dev/null; } 2>&1 | tail -1)
      noopp+=("${out% *}")
      pass+=("$(sed -n 's/.*"analyzer_profile_seconds": "\{0,1\}\([0-9.]*\).*/\1/p' "$tmp/out/run.json")")
      threads=$(sed -n 's/.*"analyzer_threads": "\{0,1\}\([0-9]*\).*/\1/p' "$tmp/out/run.json")
      "$whatif" analyze -q -j 1 -o "$tmp/out" "$dir" >/dev/null
      one+=("$(sed -n 's/.*"analyzer_profile_seconds": "\{0,1\}\([0-9.]*\).*/\1/p' "$tmp/out/run.json")")
    done
    f=$(printf '%s\n' "${full[@]}" | median)
    o=$(printf '%s\n' "${noopp[@]}" | median)
    p=$(printf '%s\n' "${pass[@]}" | median)
    q=$(printf '%s\n' "${one[@]}" | median)
    awk -v s="$shape" -v n="$real_nodes" -v b="$bytes" -v p="$p" -v q="$q" -v t="$threads" -v o="$o" -v f="$f" -v m="$rss" 'BEGIN {
      printf "| %s | %d | %d | %.1f | %.3f | %.1f | %.3f | %s | %.1f | %.2f | %.1f | %.2f | %.1f | %.1f |\n", s, n, b, b / n, q, (q > 0 ? n / q / 1e6 : 0), p, t, (p > 0 ? n / p / 1e6 : 0), o, (o > 0 ? n / o / 1e6 : 0), f, (f > 0 ? n / f / 1e6 : 0), m / 1024 }'
    rm -rf "$dir"
  done
done
