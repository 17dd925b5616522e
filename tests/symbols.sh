#!/usr/bin/env bash
# symbols.sh - the profiler's own line-table decoder (analyzer/linetab.c)
# must give every address of a program the file:line libdw gives it.
# Programs are built here by clang and gcc in every DWARF version and form
# they write (DWARF 2-5, 64-bit DWARF, compressed sections, split DWARF,
# sections dropped by the linker); then the mutated-table check.
# Usage: symbols.sh TEST_SYMBOLS WORK_DIR MODULE...
set -euo pipefail
checker=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work/sub"
cd "$work"
cat >sub/inc.h <<'C'
static inline double sq(double x) { return x * x; }
C
cat >prog.c <<'C'
#include <stdio.h>
#include "inc.h"
int main(int argc, char **argv)
{
    (void)argv;
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < argc * 1000; i++)
        s += sq(i);
    printf("%g\n", s);
    return 0;
}
C
cat >prog.cpp <<'C'
#include <map>
#include <string>
#include <vector>
#include "inc.h"
template <int N> struct K {
    std::map<std::string, std::vector<double>> m;
    double run(int n) {
        double s = 0;
#pragma omp parallel for reduction(+ : s)
        for (int i = 0; i < n; i++)
            s += sq(i * N);
        m[std::to_string(n)].push_back(s);
        return s + m.size();
    }
};
int main(int argc, char **) { return K<1>().run(argc) + K<2>().run(argc) > 0 ? 0 : 1; }
C
variants=(
  "clang-19 -gdwarf-4" "clang-19 -gdwarf-5" "clang-19 -gdwarf-5 -gdwarf64"
  "clang-19 -g -gz=zlib" "clang-19 -g -gsplit-dwarf" "clang-19 -g -O2"
  "clang-19 -g -O2 -ffunction-sections -Wl,--gc-sections"
  "clang++-19 -g -O2 CPP" "clang++-19 -gdwarf-4 CPP"
  "gcc -g" "gcc -gdwarf-2" "gcc -gdwarf-4 -O2" "gcc -g -gz"
  "gcc -g -O2 -ffunction-sections -Wl,--gc-sections" "g++ -g -O2 CPP")
built=()
for v in "${variants[@]}"; do
  src=prog.c
  [[ $v == *CPP ]] && src=prog.cpp && v=${v% CPP}
  compiler=${v%% *}
  if ! command -v "$compiler" >/dev/null; then
    echo "symbols.sh: $compiler not installed (./setup.sh installs it)" >&2
    exit 1
  fi
  out=prog_$(echo "$v $src" | tr -c 'a-zA-Z0-9' _)
  # shellcheck disable=SC2086  # $v is a compiler command line
  $v -fopenmp -Isub "$src" -o "$out"
  built+=("$out")
done
"$checker" "${built[@]}" "$@"
"$checker" -m prog_clang_19__gdwarf_5_prog_c_ prog_clang_19__gdwarf_5__gdwarf64_prog_c_ \
  prog_gcc__gdwarf_2_prog_c_ prog_g____g__O2_prog_cpp_
