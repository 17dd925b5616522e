#!/usr/bin/env bash
# run_all.sh - the whole test suite: the normal build's tests, the same
# tests under AddressSanitizer + UndefinedBehaviorSanitizer, and a short
# libFuzzer run of the trace reader.  Called by `./setup.sh --test`, which
# installs and builds first.  Exits non-zero if anything fails.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
status=0

echo "== tests (build/)"
ctest --test-dir build --output-on-failure || status=1

echo "== tests under ASan+UBSan (build-asan/), with the fuzz smoke test"
cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang-19 -DWHATIF_SANITIZE=ON \
      -DWHATIF_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null \
  && cmake --build build-asan -j"$(nproc)" >/dev/null \
  || { echo "run_all.sh: sanitizer build failed" >&2; exit 1; }
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure || status=1

if [ $status -eq 0 ]; then echo "run_all.sh: all suites passed"; else echo "run_all.sh: FAILURES" >&2; fi
exit $status
