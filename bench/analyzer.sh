#!/usr/bin/env bash
# analyzer.sh - offline analyzer throughput and peak memory on generated
# traces of 10^6 and 10^7 nodes (three shapes, 4 streams), median of 5 runs.
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

echo "| trace | nodes | trace bytes | bytes/node | analyze s (median of 5) | M nodes/s | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for nodes in 1000000 10000000; do
  for shape in loops tasks mixed; do
    dir="$tmp/$shape-$nodes"
    read -r real_nodes _ bytes _ < <("$gentrace" "$dir" "$nodes" 4 "$shape")
    times=(); rss=0
    for _ in 1 2 3 4 5; do
      out=$( { /usr/bin/time -f "%e %M" "$whatif" analyze -q -o "$tmp/out" "$dir" >/dev/null; } 2>&1 | tail -1)
      times+=("${out% *}"); r="${out#* }"; [ "$r" -gt "$rss" ] && rss=$r
    done
    med=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 3p)
    awk -v s="$shape" -v n="$real_nodes" -v b="$bytes" -v t="$med" -v m="$rss" 'BEGIN {
      printf "| %s | %d | %d | %.1f | %.2f | %.1f | %.1f |\n", s, n, b, b / n, t, (t > 0 ? n / t / 1e6 : 0), m / 1024 }'
    rm -rf "$dir"
  done
done
