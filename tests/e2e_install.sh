#!/usr/bin/env bash
# e2e_install.sh - whatif installed like any other tool.  A fresh build of
# the source tree is installed into a prefix with a space in it, and the
# build deleted; then (a) a CMake project with find_package(whatif) and
# whatif::tool, (b) a Makefile project with pkg-config --cflags --libs
# whatif, (c) P/bin/whatif run on apps/primes.c: each builds, runs and
# writes a profile whose loop row is there.  cpack -G DEB gives a package
# whose control file names its dependencies; unpacked into a directory
# (dpkg -x), its /usr/bin/whatif profiles a program.
# Usage: e2e_install.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=$(realpath "$1"); work=$(realpath -m "$2")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
prefix="$work/the prefix"
b="$work/build"
cmake -S "$src" -B "$b" -DCMAKE_C_COMPILER=clang-19 >/dev/null || exit 1
cmake --build "$b" -j"$(nproc)" --target whatif whatif_shared whatif_static >/dev/null || { echo "FAIL: build"; exit 1; }
cmake --install "$b" --prefix "$prefix" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
(cd "$b" && cpack -G DEB -B "$work/deb" >/dev/null 2>cpack.err) || ko "cpack -G DEB: $(tail -2 "$b/cpack.err")"
rm -rf "$b"
for f in bin/whatif lib/libwhatif.so lib/libwhatif.a include/whatif.h lib/cmake/whatif/whatifConfig.cmake \
         lib/pkgconfig/whatif.pc share/doc/whatif/README.md share/doc/whatif/output.md; do
  [ -e "$prefix/$f" ] && ok || ko "not installed: $f"
done
has_loop() { grep -q "primes.c:[0-9]*,loop," "$1/profile.csv" 2>/dev/null; }
cp "$src/apps/primes.c" .
# (a) CMake
mkdir -p cm && cat > cm/CMakeLists.txt <<'C'
cmake_minimum_required(VERSION 3.20)
project(user C)
find_package(OpenMP REQUIRED)
find_package(whatif 0.1 REQUIRED)
add_executable(primes ../primes.c)
target_link_libraries(primes PRIVATE OpenMP::OpenMP_C whatif::tool)
C
if cmake -S cm -B cm/b -DCMAKE_C_COMPILER=clang-19 -DCMAKE_PREFIX_PATH="$prefix" >cm.log 2>&1 &&
   cmake --build cm/b >>cm.log 2>&1 &&
   (cd cm && OMP_NUM_THREADS=2 WHATIF_OUT=out ./b/primes 200000 >/dev/null 2>&1) && has_loop cm/out; then ok; else
  ko "find_package(whatif) project: $(tail -3 cm.log)"; fi
# (b) pkg-config
mkdir -p mk && cat > mk/Makefile <<'M'
CFLAGS = -fopenmp -O2 $(shell pkg-config --cflags whatif)
LDLIBS = $(shell pkg-config --libs whatif)
primes: ../primes.c
	clang-19 $(CFLAGS) $< $(LDLIBS) -o $@
M
if PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C mk >mk.log 2>&1 &&
   (cd mk && OMP_NUM_THREADS=2 WHATIF_OUT=out ./primes 200000 >/dev/null 2>&1) && has_loop mk/out; then ok; else
  ko "pkg-config project: $(tail -3 mk.log)"; fi
# (c) the installed command
clang-19 -fopenmp -g -O2 primes.c -o primes || exit 1
if OMP_NUM_THREADS=2 "$prefix/bin/whatif" run -q -o run -- ./primes 200000 >/dev/null 2>run.err && has_loop run; then ok; else
  ko "installed whatif run: $(head -2 run.err)"; fi
# the Debian package
deb=$(ls "$work"/deb/*.deb 2>/dev/null | head -1)
if [ -n "$deb" ] && dpkg-deb -f "$deb" Recommends | grep -q "libpfm4" && dpkg-deb -f "$deb" Depends | grep -q "libdw1" &&
   [ "$(dpkg-deb -f "$deb" Package)" = whatif ]; then ok; else ko "the .deb's control: $(dpkg-deb -f "$deb" 2>&1 | head -3)"; fi
mkdir -p debroot && dpkg-deb -x "$deb" debroot 2>/dev/null
if OMP_NUM_THREADS=2 debroot/usr/bin/whatif run -q -o debrun -- ./primes 200000 >/dev/null 2>deb.err && has_loop debrun &&
   [ -n "$(find debroot/usr/lib -name libwhatif.so)" ]; then ok; else
  ko "the unpacked package's whatif: $(head -2 deb.err)"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
