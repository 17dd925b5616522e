#!/usr/bin/env bash
# symbols.sh - the cost of resolving construct addresses to file:line
# (analyzer/symbols.c) in a large C++ binary: a generated program of many
# template instantiations, about 10 MB with -g, holding 1,000 OpenMP
# parallel regions; the return address of each __kmpc_fork_call is looked
# up, as the profiler does at the first sight of each construct.
# Usage: bench/symbols.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d)}
mkdir -p "$work"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$work/big.cpp"
{
  echo '#include <vector>'
  echo '#include <map>'
  echo '#include <set>'
  echo '#include <unordered_map>'
  echo '#include <string>'
  echo 'template <int N> struct K { std::map<std::string, std::vector<double>> m; std::set<long> k; std::unordered_map<long, double> u;'
  echo '  double run(int n) { double s = 0; for (int i = 0; i < n; i++) { m[std::to_string(i * N)].push_back(i); k.insert(i * N); u[i] += N; s += u[i] + m.size() + k.count(i); } return s; } };'
  for i in $(seq 0 999); do
    echo "double f$i(int n) { K<$i> k; double s = k.run(n);"
    echo "#pragma omp parallel reduction(+ : s)"
    echo "  s += n * $i;"
    echo "  return s; }"
  done
  echo 'int main(int argc, char **) { double s = 0;'
  for i in $(seq 0 999); do echo "  s += f$i(argc);"; done
  echo '  return s > 0 ? 0 : 1; }'
} >"$src"
clang++-19 -fopenmp -g -O1 "$src" -o "$work/big"
size=$(stat -c %s "$work/big")
objdump -d --no-show-raw-insn "$work/big" |
  awk '/call.*<__kmpc_fork_call@plt>/ { getline; sub(":", "", $1); print $1 }' >"$work/offsets"
# PIE: the offsets objdump prints are the module offsets whatif records
echo "binary: $(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MB, $(wc -l <"$work/offsets") call sites"
cc -O2 -I"$here/analyzer" "$here/bench/sym_cost.c" "$here/analyzer/symbols.c" \
   "$here/analyzer/linetab.c" \
   -ldw -lelf -o "$work/sym_cost"
"$work/sym_cost" "$work/big" "$work/offsets"
"$work/sym_cost" "$work/big" "$work/offsets" --function
"$work/sym_cost" "$work/big" "$work/offsets" --libdw
