#!/usr/bin/env bash
# run_example.sh - build apps/primes.c with clang-19 -fopenmp -g and profile
# it with `whatif run` (one thread per core unless OMP_NUM_THREADS says);
# prints the parallelism profile.  Run ./setup.sh
# first (or use ./setup.sh --example, which does both).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mkdir -p build/apps
clang-19 -fopenmp -g -O2 apps/primes.c -o build/apps/primes
OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}" build/bin/whatif run -o build/example -- build/apps/primes 2000000
echo "(full profile: build/example/profile.csv, database: build/example/profile.db)"
