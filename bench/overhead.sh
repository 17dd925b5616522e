#!/usr/bin/env bash
# overhead.sh - the overhead benchmark suite: micro-benchmarks of single
# constructs and application kernels, each run without a tool, with an
# empty OMPT tool (the floor), and with whatif on the fly (kernels also
# without sampling) and offline,
# interleaved (A/B/C/D, repeated) so that every ratio compares runs of the
# same moment.  Writes overhead.md and overhead.csv into OUT_DIR.
#
#   bench/overhead.sh [OUT_DIR] [REPEATS] [METRIC]
#                      (defaults: bench/results, 5, the tool's default)
#
# Needs ./setup.sh first and GNU time (apt-get install time).  Not part of
# the test suite: it takes minutes and its numbers depend on the machine.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/bench/results}"
reps="${2:-5}"
metric="${3:-}"
threads="${OMP_NUM_THREADS:-$(nproc)}"
export OMP_NUM_THREADS=$threads
bin="$root/build/bench"
tool="$root/build/lib/libwhatif.so"
whatif="$root/build/bin/whatif"
[ -x "$whatif" ] && [ -f "$tool" ] || { echo "overhead.sh: build first (./setup.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "overhead.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$bin" "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

cc="clang-19 -O2 -g -fopenmp"
$cc -shared -fPIC "$root/bench/empty_tool.c" -o "$bin/libempty.so" || exit 1
$cc "$root/bench/micro.c" -o "$bin/micro" || exit 1
$cc "$root/bench/tasksort.c" -o "$bin/tasksort" || exit 1
$cc "$root/bench/stencil.c" -o "$bin/stencil" || exit 1
$cc "$root/apps/fib.c" -o "$bin/fib" || exit 1
$cc "$root/apps/wavefront.c" -o "$bin/wavefront" || exit 1
$cc "$root/apps/primes.c" -o "$bin/primes" || exit 1

# run CONFIG CMD...: runs CMD under a configuration, prints
# "wall_s rss_kb" then the program's stdout lines, stderr in $work/err
run() {
  local config=$1; shift
  local envs=()
  case $config in
    none) ;;
    empty) envs=(OMP_TOOL_LIBRARIES="$bin/libempty.so") ;;
    online|offline)
      envs=(LD_PRELOAD="$tool" WHATIF_PRELOAD=1 WHATIF_MODE=$config
            WHATIF_OUT="$work/out-$config")
      [ -n "$metric" ] && envs+=(WHATIF_METRIC="$metric") ;;
    nosample) # on the fly without sampling: what sampling costs
      envs=(LD_PRELOAD="$tool" WHATIF_PRELOAD=1 WHATIF_MODE=online
            WHATIF_SAMPLE_HZ=0 WHATIF_OUT="$work/out-$config")
      [ -n "$metric" ] && envs+=(WHATIF_METRIC="$metric") ;;
  esac
  rm -rf "$work/out-$config"
  env "${envs[@]}" /usr/bin/time -f "TIME %e %M" -o "$work/time" "$@" >"$work/stdout" 2>"$work/err"
  awk '{ print $2, $3 }' "$work/time"
  cat "$work/stdout"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs="none empty online offline"
csv="$out/overhead.csv"
echo "kind,benchmark,config,median,unit,events_per_instance,ns_per_event_above_floor,rss_kb,trace_bytes_per_node,analyzer_mnodes_per_s" >"$csv"

# ---- micro-benchmarks: ns per construct instance ----
micros="parallel barrier static static_c dynamic1 dynamic16 dynamic1024 guided task taskwait taskgroup critical"
for m in $micros; do
  # loop instances hold 4096 iterations: fewer of them
  case $m in static*|dynamic*|guided) mreps=100 ;; *) mreps=2000 ;; esac
  # events per instance, counted by the empty tool
  ev=$(OMP_TOOL_LIBRARIES="$bin/libempty.so" "$bin/micro" $m $mreps 2>&1 >/dev/null | awk '/^events/ { print $2 }')
  instances=$(( mreps / 10 + 1 + 5 * mreps ))
  epi=$(awk -v e="${ev:-0}" -v n=$instances 'BEGIN { printf "%.2f", e / n }')
  for c in $configs; do : >"$work/m-$m-$c"; done
  for r in $(seq "$reps"); do
    for c in $configs; do
      run $c "$bin/micro" $m $mreps | awk '/ns_per_instance/ { print $2 }' >>"$work/m-$m-$c"
    done
  done
  floor=$(median <"$work/m-$m-empty")
  for c in $configs; do
    med=$(median <"$work/m-$m-$c")
    per=""
    case $c in online|offline)
      per=$(awk -v a="$med" -v f="$floor" -v e="$epi" 'BEGIN { if (e > 0) printf "%.1f", (a - f) / e }') ;;
    esac
    echo "micro,$m,$c,$med,ns/instance,$epi,$per,," >>"$csv"
  done
done

# ---- application kernels: wall time, peak RSS, trace size ----
kernels=(
  "stencil|$bin/stencil 2048 400"
  "primes|$bin/primes 6000000"
  "wavefront|$bin/wavefront 48 128"
  "tasksort|$bin/tasksort 8000000 2048"
  "tasksort-fine|$bin/tasksort 8000000 16"
  "fib-nocutoff|$bin/fib 30 2"
)
kconfigs="$configs nosample"
for k in "${kernels[@]}"; do
  name=${k%%|*}; cmd=${k#*|}
  for c in $kconfigs; do : >"$work/k-$name-$c"; : >"$work/r-$name-$c"; done
  for r in $(seq "$reps"); do
    for c in $kconfigs; do
      res=$(run $c $cmd | head -1)
      echo "${res% *}" >>"$work/k-$name-$c"
      echo "${res#* }" >>"$work/r-$name-$c"
    done
  done
  # trace bytes per node, and the analyzer's profile pass, from one
  # offline run
  run offline $cmd >/dev/null
  tb=""; an=""
  if "$whatif" analyze -q --no-opportunities -o "$work/an" "$work/out-offline/trace" >/dev/null 2>&1; then
    # run.json numbers are JSON numbers: "key": value,
    tb=$(awk '/"trace_bytes":/ { gsub(/[^0-9]/, "", $2); b = $2 } /"nodes":/ { gsub(/[^0-9]/, "", $2); n = $2 } END { if (n > 0) printf "%.1f", b / n }' "$work/an/run.json")
    an=$(awk '/"analyzer_profile_seconds":/ { gsub(/[^0-9.]/, "", $2); s = $2 } /"nodes":/ { gsub(/[^0-9]/, "", $2); n = $2 } END { if (s > 0) printf "%.1f", n / s / 1e6 }' "$work/an/run.json")
  fi
  for c in $kconfigs; do
    med=$(median <"$work/k-$name-$c")
    rss=$(median <"$work/r-$name-$c")
    if [ $c = offline ]; then extra="$tb,$an"; else extra=","; fi
    echo "kernel,$name,$c,$med,s,,,$rss,$extra" >>"$csv"
  done
done

# ---- markdown ----
{
  echo "# whatif overhead ($(date -u +%Y-%m-%d), $(nproc) cores, OMP_NUM_THREADS=$threads, metric ${metric:-default}, median of $reps interleaved runs)"
  echo
  echo "$(lscpu 2>/dev/null | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2 }'), $(uname -r)"
  echo
  echo "## Micro-benchmarks (ns per construct instance)"
  echo
  echo "| construct | no tool | empty tool | on the fly | offline | OMPT events / instance | ns / event above floor, on the fly | offline |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for m in $micros; do
    awk -F, -v m=$m '$1 == "micro" && $2 == m { v[$3] = $4; e = $6; if ($3 == "online") on = $7; if ($3 == "offline") off = $7 }
      END { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", m, v["none"], v["empty"], v["online"], v["offline"], e, on, off }' "$csv"
  done
  echo
  echo "## Application kernels"
  echo
  echo "| kernel | no tool s | on the fly | on the fly, no sampling | offline | peak RSS on the fly | trace bytes/node | analyzer M nodes/s (profile pass) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for k in "${kernels[@]}"; do
    name=${k%%|*}
    awk -F, -v k=$name '$1 == "kernel" && $2 == k { t[$3] = $4; r[$3] = $8; if ($9 != "") tb = $9; if ($10 != "") an = $10 }
      END { printf "| %s | %.3f | %.2fx | %.2fx | %.2fx | %.2fx | %s | %s |\n", k, t["none"], t["online"] / t["none"], t["nosample"] / t["none"], t["offline"] / t["none"], r["online"] / r["none"], tb, an }' "$csv"
  done
  awk -F, '$1 == "kernel" { t[$2, $3] = $4; ks[$2] = 1 }
    END { n = 0; lon = 0; loff = 0; lns = 0
          for (k in ks) { n++; lon += log(t[k, "online"] / t[k, "none"]); loff += log(t[k, "offline"] / t[k, "none"]); lns += log(t[k, "nosample"] / t[k, "none"]) }
          printf "\nGeometric mean: on the fly %.2fx (%.2fx without sampling), offline %.2fx\n", exp(lon / n), exp(lns / n), exp(loff / n) }' "$csv"
} >"$out/overhead.md"
cat "$out/overhead.md"
