#!/usr/bin/env bash
# The installed tree is complete: `cmake --install` into a scratch prefix,
# then examples/speak.c is compiled against that prefix alone through
# pkg-config (shared and static) and through find_package(vocis), and run on
# the tiny checkpoint; the shared library exports only vocis_* symbols.
# Args: BUILD_DIR SOURCE_DIR DATA SCRATCH [SANITIZER_FLAGS]  (the last for a
# VOCIS_SANITIZE build: its libvocis needs the sanitizer runtimes linked in)
set -uo pipefail
abs() { mkdir -p "$1" && cd "$1" && pwd; }
BUILD=$(abs "$1") SRC=$(abs "$2") DATA=$(abs "$3") SCRATCH=$(abs "$4") SAN=${5:-}
P=$SCRATCH/prefix
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || exit 1

cmake --install "$BUILD" --prefix "$P" >"$SCRATCH/install.log" 2>&1 || { cat "$SCRATCH/install.log"; echo "FAIL cmake --install"; exit 1; }
ok "cmake --install --prefix $P"

# ---- the files ---------------------------------------------------------------
V=$(sed -n 's/^#define VOCIS_VERSION "\([0-9.]*\)".*/\1/p' "$SRC/include/vocis.h")
MAJOR=${V%%.*} REST=${V#*.} MINOR=${REST%%.*}
SOV=$MAJOR; [ "$MAJOR" = 0 ] && SOV=$MAJOR.$MINOR
LIB=$P/lib/libvocis.so.$V
for f in bin/vocis lib/libvocis.so.$V lib/libvocis.a include/vocis.h lib/pkgconfig/vocis.pc \
         lib/cmake/vocis/vocisConfig.cmake lib/cmake/vocis/vocisConfigVersion.cmake lib/cmake/vocis/vocisTargets.cmake; do
    [ -f "$P/$f" ] || fail "missing $f"
done
[ "$(readlink "$P/lib/libvocis.so.$SOV")" = "libvocis.so.$V" ] || fail "lib/libvocis.so.$SOV is not a link to libvocis.so.$V"
[ -e "$P/lib/libvocis.so" ] || fail "no lib/libvocis.so development link"
soname=$(objdump -p "$LIB" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libvocis.so.$SOV" ] && ok "SONAME $soname" || fail "SONAME is '$soname', expected libvocis.so.$SOV"

# ---- exported symbols: vocis_* only, and every function of vocis.h ----------------
nm -D --defined-only "$LIB" | awk '{print $NF}' | sort >"$SCRATCH/exports"
others=$(grep -v '^vocis_' "$SCRATCH/exports" | head -5)
[ -z "$others" ] && ok "nm -D: $(wc -l <"$SCRATCH/exports") symbols, all vocis_*" || fail "exported non-vocis symbols: $others"
grep -oE '\bvocis_[a-z0-9_]+\(' "$SRC/include/vocis.h" | tr -d '(' | sort -u >"$SCRATCH/declared"
missing=$(comm -23 "$SCRATCH/declared" "$SCRATCH/exports" | tr '\n' ' ')
[ -z "$missing" ] && ok "every function declared in vocis.h is exported" || fail "declared but not exported: $missing"

# ---- the installed vocis runs as installed: no LD_LIBRARY_PATH (it carries libvocis.a) ----
if ldd "$P/bin/vocis" | grep -q libvocis; then
    fail "bin/vocis needs libvocis.so: $(ldd "$P/bin/vocis" | grep libvocis)"
else
    ok "bin/vocis links no libvocis.so"
fi
env -u LD_LIBRARY_PATH "$P/bin/vocis" info --model "$DATA/chatterbox/ckpt" >"$SCRATCH/info.out" 2>&1 \
    && ok "bin/vocis info runs without LD_LIBRARY_PATH" || { cat "$SCRATCH/info.out"; fail "bin/vocis without LD_LIBRARY_PATH"; }

# ---- version ----------------------------------------------------------------------
ver=$("$P/bin/vocis" --version)
echo "$ver" | grep -qE "^vocis $V \(cpu: .*kernels: (scalar|avx2|avx512)" && ok "vocis --version: $ver" || fail "vocis --version: '$ver'"

# ---- pkg-config -------------------------------------------------------------------
export PKG_CONFIG_PATH=$P/lib/pkgconfig
[ "$(pkg-config --modversion vocis)" = "$V" ] && ok "pkg-config --modversion vocis = $V" || fail "pkg-config --modversion vocis"
flags=$(pkg-config --cflags --libs vocis) || fail "pkg-config --cflags --libs vocis"
echo "     pkg-config --cflags --libs vocis: $flags"
# only the installed tree: no include path or library of the source/build tree
cc $SAN -Wall -Wextra -Werror "$SRC/examples/speak.c" $flags -o "$SCRATCH/speak" 2>"$SCRATCH/cc.log" \
    && ok "cc examples/speak.c \$(pkg-config --cflags --libs vocis)" || { cat "$SCRATCH/cc.log"; fail "compile speak.c"; }
if command -v c++ >/dev/null; then
    c++ -Wall -Werror -x c++ -fsyntax-only -I"$P/include" - <<<'#include <vocis.h>
int main() { return vocis_version() ? 0 : 1; }' 2>"$SCRATCH/cxx.log" && ok "vocis.h compiles as C++" \
        || { cat "$SCRATCH/cxx.log"; fail "vocis.h as C++"; }
fi
if [ -x "$SCRATCH/speak" ]; then
    lib_used=$(LD_LIBRARY_PATH=$P/lib ldd "$SCRATCH/speak" | awk '/libvocis/ {print $3}')
    [ "$(readlink -f "$lib_used")" = "$(readlink -f "$LIB")" ] && ok "speak links $lib_used" || fail "speak uses '$lib_used'"
    LD_LIBRARY_PATH=$P/lib "$SCRATCH/speak" "$DATA/chatterbox/ckpt" "Hello world, this is a test." "$SCRATCH/ex.wav" 7 \
        >"$SCRATCH/speak.out" 2>"$SCRATCH/speak.err" && ok "speak: $(cat "$SCRATCH/speak.out")" \
        || { cat "$SCRATCH/speak.err"; fail "run speak"; }
    "$P/bin/vocis" speak --model "$DATA/chatterbox/ckpt" --text "Hello world, this is a test." --seed 7 -q \
        -o "$SCRATCH/cli.wav" && cmp -s "$SCRATCH/ex.wav" "$SCRATCH/cli.wav" \
        && ok "speak.c output is byte-identical to vocis speak --seed 7" || fail "speak.c and vocis speak differ"
    # README: a program linked against a prefix outside the loader's path records it with -rpath
    cc $SAN "$SRC/examples/speak.c" $flags -Wl,-rpath,"$(pkg-config --variable=libdir vocis)" -o "$SCRATCH/speak_rpath" \
        2>"$SCRATCH/cc_rpath.log" || { cat "$SCRATCH/cc_rpath.log"; fail "compile speak.c with -rpath"; }
    env -u LD_LIBRARY_PATH "$SCRATCH/speak_rpath" "$DATA/chatterbox/ckpt" "Hello world, this is a test." \
        "$SCRATCH/ex_rpath.wav" 7 >/dev/null 2>"$SCRATCH/rpath.err" && cmp -s "$SCRATCH/ex_rpath.wav" "$SCRATCH/cli.wav" \
        && ok "speak.c built with -Wl,-rpath,\$(pkg-config --variable=libdir vocis) runs without LD_LIBRARY_PATH" \
        || { cat "$SCRATCH/rpath.err"; fail "speak.c with -rpath"; }
    LD_LIBRARY_PATH=$P/lib "$SCRATCH/speak" "$SCRATCH/no-such-model" "Hi." "$SCRATCH/bad.wav" 2>"$SCRATCH/bad.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "model folder not found" "$SCRATCH/bad.err" && [ ! -e "$SCRATCH/bad.wav" ] \
        && ok "speak on a missing model: $(tail -1 "$SCRATCH/bad.err")" || fail "speak on a missing model: rc=$rc"
fi

# static: libvocis.a + pkg-config --static (Requires.private / Libs.private)
sflags=$(pkg-config --static --libs vocis | sed 's/-lvocis\b//')
cc $SAN "$SRC/examples/speak.c" $(pkg-config --cflags vocis) "$P/lib/libvocis.a" $sflags -o "$SCRATCH/speak_static" \
    2>"$SCRATCH/cc_static.log" && ok "static link with libvocis.a \$(pkg-config --static --libs vocis)" \
    || { tail -5 "$SCRATCH/cc_static.log"; fail "static link"; }
if [ -x "$SCRATCH/speak_static" ]; then
    ldd "$SCRATCH/speak_static" | grep -q libvocis && fail "speak_static needs libvocis.so"
    "$SCRATCH/speak_static" "$DATA/chatterbox/ckpt" "Hello world, this is a test." "$SCRATCH/ex_static.wav" 7 \
        >/dev/null 2>&1 && cmp -s "$SCRATCH/ex_static.wav" "$SCRATCH/cli.wav" && ok "static speak: same output" \
        || fail "static speak"
fi

# ---- CMake package: find_package(vocis) -> vocis::vocis -----------------------------
if cmake -S "$SRC/tests/package/consumer" -B "$SCRATCH/consumer" -DCMAKE_PREFIX_PATH="$P" \
        -DVOCIS_EXAMPLE="$SRC/examples/speak.c" -DVOCIS_WANT="$MAJOR.$MINOR" -DCMAKE_C_FLAGS="$SAN" >"$SCRATCH/consumer.log" 2>&1 \
    && cmake --build "$SCRATCH/consumer" >>"$SCRATCH/consumer.log" 2>&1; then
    # CMake records the imported library's folder in the build tree's RPATH: no LD_LIBRARY_PATH needed
    env -u LD_LIBRARY_PATH "$SCRATCH/consumer/speak" "$DATA/chatterbox/ckpt" "Hi." "$SCRATCH/cm.wav" 1 >/dev/null 2>&1 \
        && ok "find_package(vocis $MAJOR.$MINOR) + vocis::vocis builds and runs speak.c (no LD_LIBRARY_PATH)" \
        || fail "run the CMake-built speak"
else
    tail -20 "$SCRATCH/consumer.log"; fail "find_package(vocis) consumer project"
fi

# ---- Python: the installed package finds the installed library -----------------------
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
pkg=$(find "$P/lib" -path '*/vocis/__init__.py' | head -1)
if [ -z "$PY" ]; then
    echo "skip Python check (no python3)"
elif [ -n "$SAN" ]; then
    echo "skip Python check (a sanitizer build of libvocis cannot be loaded into python3)"
elif [ -z "$pkg" ]; then
    fail "the Python package vocis was not installed"
else
    pydir=$(dirname "$(dirname "$pkg")")
    got=$(cd / && env -u VOCIS_LIBRARY PYTHONPATH="$pydir" "$PY" -c 'import vocis; print(vocis.load_library()); print(vocis.version())' 2>&1)
    [ "$(readlink -f "$(echo "$got" | head -1)")" = "$(readlink -f "$LIB")" ] && [ "$(echo "$got" | tail -1)" = "$V" ] \
        && ok "import vocis from ${pydir#$P/} loads $(echo "$got" | head -1 | sed "s|^$P/||")" || fail "installed import vocis: $got"
    if "$PY" -c 'import numpy' 2>/dev/null; then
        (cd / && env -u VOCIS_LIBRARY PYTHONPATH="$pydir" "$PY" -m vocis speak --model "$DATA/chatterbox/ckpt" \
            --text "Hello world, this is a test." --seed 7 -q -o "$SCRATCH/py.wav") && cmp -s "$SCRATCH/py.wav" "$SCRATCH/cli.wav" \
            && ok "installed python3 -m vocis speak: same file as vocis speak" || fail "installed python3 -m vocis speak"
    fi
fi

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "installed tree complete"
