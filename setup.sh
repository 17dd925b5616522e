#!/usr/bin/env bash
# setup.sh - install whatif's dependencies, build it, and optionally run the
# bundled example or the whole test suite.
#
#   ./setup.sh            install (Debian 12, as root or with sudo) and build
#   ./setup.sh --example  ... then profile the bundled example and print it
#   ./setup.sh --test     ... then run the whole test suite (installs
#                         chromium and Open MPI too, for the report's
#                         browser test and the MPI test)
#
# Idempotent: packages already installed are skipped, the build is
# incremental.  Any failure stops with one line saying what failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

die() { echo "setup.sh: $*" >&2; exit 1; }

mode=build
case "${1:-}" in
  "") ;;
  --example) mode=example ;;
  --test) mode=test ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) die "unknown option '$1' (use --example, --test or nothing)" ;;
esac

# time and valgrind: the benchmarks (bench/real.sh, bench/instructions.sh)
packages=(clang-19 libomp-19-dev libclang-rt-19-dev llvm-19 libpfm4-dev
          libsqlite3-dev sqlite3 uthash-dev libdw-dev cmake make gcc g++ binutils python3 time
          valgrind)

# the test suite opens the HTML report in a real browser and runs an
# MPI + OpenMP program under Open MPI (and MPICH's launcher)
if [ "$mode" = test ]; then
  packages+=(chromium openmpi-bin libopenmpi-dev mpich pkgconf)
fi

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "need root (or sudo) to install: ${missing[*]}"
    sudo=sudo
  fi
  command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand (Debian 12 package names)"
  echo "setup.sh: installing ${missing[*]}"
  $sudo apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install failed for: ${missing[*]}"
}

build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang-19 "$@" >/dev/null \
    || die "cmake configure of $dir failed"
  cmake --build "$dir" -j"$(nproc)" >/dev/null \
    || { cmake --build "$dir" 2>&1 | tail -30; die "build of $dir failed"; }
}

install_packages
build build
echo "setup.sh: built build/bin/whatif"

case "$mode" in
  example)
    exec "$here/apps/run_example.sh"
    ;;
  test)
    exec "$here/tests/run_all.sh"
    ;;
esac
