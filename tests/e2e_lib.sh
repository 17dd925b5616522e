# e2e_lib.sh - checks shared by the end-to-end test scripts (sourced).
#
# Each check prints one line "FAIL: ..." on a failure and returns 1.

# check_invariants DIR WHAT: what must hold of every profile.csv, whatever
# the program: no row's work exceeds the program's; no row's span exceeds
# its work; a row's critical work is within its work; the critical
# percentages of the program and the directives sum to 100 (a what-if
# region's row overlaps them); no row is located in the profiler's own
# code or in the runtime (a wrapper's or libomp's address standing for the
# program's call site); the program's serial fragments
# (serial_fragments.csv) hold exactly the program row's critical work.
check_invariants() {
  local csv=$1/profile.csv what=$2
  if [ -e "$1/serial_fragments.csv" ]; then
    local pc sc
    pc=$(awk -F, '$1 == "program" && $2 == "program" { print $7 }' "$csv")
    sc=$(awk -F, 'NR > 1 { s += $(NF - 1) } END { printf "%d", s }' "$1/serial_fragments.csv")
    if [ "$pc" != "$sc" ]; then
      echo "FAIL: $what: invariants: serial fragments hold $sc of the program's critical work $pc"
      return 1
    fi
  fi
  awk -F, -v what="$what" '
    NR == 1 { next }
    { gsub(/"/, "") }
    $1 == "program" && $2 == "program" { pw = $4 }
    { rows[NR] = $0; if ($2 != "region") sum += $8 }
    END {
      bad = ""
      for (i in rows) {
        n = split(rows[i], f, ",")
        if (f[4] + 0 > pw + 0) bad = bad " work(" f[1] " " f[2] ")=" f[4] ">" pw
        if (f[5] + 0 > f[4] + 0) bad = bad " span>work(" f[1] " " f[2] ")"
        if (f[7] + 0 > f[4] + 0) bad = bad " critical>work(" f[1] " " f[2] ")"
        if (f[1] ~ /libprofiler\/|libwhatif|libomp/) bad = bad " located in the tool or runtime(" f[1] " " f[2] ")"
      }
      if (NR > 1 && (sum < 99.9 || sum > 100.1)) bad = bad " critical%sum=" sum
      if (bad != "") { print "FAIL: " what ": invariants:" bad; exit 1 }
    }' "$csv"
}

# check_counts DIR ERRFILE WHAT: for every "whatif-count DIRECTIVE N" the
# program printed, the rows of that directive hold at most N instances
# together (an instance is never counted twice).
check_counts() {
  local csv=$1/profile.csv err=$2 what=$3 rc=0
  while read -r _ dir n; do
    local got
    got=$(awk -F, -v d="$dir" 'NR > 1 && $2 == d { s += $3 } END { print s + 0 }' "$csv")
    if [ "$got" -gt "$n" ] || [ "$got" -eq 0 ]; then
      echo "FAIL: $what: $dir instances $got, the program ran $n"
      rc=1
    fi
  done < <(grep '^whatif-count ' "$err")
  return $rc
}

# check_expect DIR ERRFILE WHAT TOL_PCT SLACK_NS [WORK_EXTRA_NS]: the
# program row's work and span against what the program measured of itself
# ("whatif-expect"), within TOL_PCT percent plus SLACK_NS (the runtime's
# and the start-up's own few microseconds per construct, which no program
# can time), and WORK_EXTRA_NS more above it for the work (runtime code
# known to count as work, docs/limits.md).
check_expect() {
  local csv=$1/profile.csv err=$2 what=$3 tol=$4 slack=$5 work_extra=${6:-0}
  local line
  line=$(grep '^whatif-expect ' "$err" | tail -1)
  [ -z "$line" ] && return 0
  local ew es gw gs
  ew=$(sed 's/.*work=\([0-9]*\).*/\1/' <<<"$line")
  es=$(sed -n 's/.*span=\([0-9]*\).*/\1/p' <<<"$line")
  read -r gw gs < <(awk -F, '$1 == "program" { print $4, $5 }' "$csv")
  [ -z "$es" ] && es=$gs # the program measured its work only
  if ! awk -v g="$gw" -v e="$ew" -v t="$tol" -v s="$slack" -v x="$work_extra" \
         'BEGIN { d = g - e; b = e * t / 100 + s; exit !(d >= -b && d <= b + x) }' ||
     ! awk -v g="$gs" -v e="$es" -v t="$tol" -v s="$slack" \
         'BEGIN { d = g - e; if (d < 0) d = -d; exit !(d <= e * t / 100 + s) }'; then
    echo "FAIL: $what: work $gw span $gs, the program measured work $ew span $es (tolerance $tol% + $slack ns, work + $work_extra ns)"
    # where the difference lies, for a failure seen once in many runs
    echo "  its profile ($1):"; sed 's/^/    /' "$csv" | head -20
    [ -s "$1/serial_fragments.csv" ] && sed 's/^/    /' "$1/serial_fragments.csv" | head -12
    return 1
  fi
  return 0
}
