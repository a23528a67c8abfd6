# Shared helpers for the CLI bad-input scripts (sourced). Expects SCRATCH set.
fails=0

# expect_error NAME PATTERN CMD...: the command must exit non-zero (not by a
# signal or a timeout) with exactly one stderr line matching PATTERN. Safe under `set -e`.
expect_error() {
    local name=$1 pattern=$2 rc=0 lines; shift 2
    timeout 120 "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
    lines=$(wc -l <"$SCRATCH/err")
    if [ $rc -eq 0 ] || [ $rc -ge 124 ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$pattern" "$SCRATCH/err"; then
        echo "FAIL $name: rc=$rc, $lines stderr line(s):"; sed 's/^/    /' "$SCRATCH/err" | head -5
        fails=$((fails + 1))
    else
        echo "ok   $name: $(cat "$SCRATCH/err")"
    fi
}

# no_file NAME PATH...: none of the paths may exist.
no_file() {
    local name=$1; shift
    for f in "$@"; do
        if [ -e "$f" ]; then echo "FAIL $name: $f was left behind"; fails=$((fails + 1)); fi
    done
}

# link_model SRC DST: a model folder whose files are symlinks to SRC's.
link_model() {
    mkdir -p "$2"
    for f in "$1"/*; do ln -sf "$(cd "$1" && pwd)/$(basename "$f")" "$2/"; done
}

finish() {
    [ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
    echo "all bad-input cases handled"
}

# mkst FILE NAME SHAPE_JSON NBYTES: a safetensors file with one zero-filled F32 tensor.
# expect_fail WHAT PATTERN CMD...: like expect_error, but exits the script at the first failure.
mkst() { # FILE NAME SHAPE_JSON NBYTES: a safetensors file with one zero-filled F32 tensor
    local hdr="{\"$2\":{\"dtype\":\"F32\",\"shape\":$3,\"data_offsets\":[0,$4]}}"
    local n=${#hdr}
    printf "$(printf '\\x%02x\\x%02x\\x00\\x00\\x00\\x00\\x00\\x00' $((n & 255)) $((n >> 8)))" >"$1"
    printf '%s' "$hdr" >>"$1"
    head -c "$4" /dev/zero >>"$1"
}
expect_fail() { # WHAT PATTERN command...
    local what=$1 pat=$2
    shift 2
    if "$@" 2>"$SCRATCH/err.txt"; then
        echo "FAIL $what: succeeded"
        exit 1
    fi
    if [ "$(wc -l <"$SCRATCH/err.txt")" -ne 1 ] || ! grep -q -- "$pat" "$SCRATCH/err.txt"; then
        echo "FAIL $what: expected one line with '$pat', got:"
        cat "$SCRATCH/err.txt"
        exit 1
    fi
    echo "ok   $what: $(cat "$SCRATCH/err.txt")"
}
