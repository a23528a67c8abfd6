#!/usr/bin/env bash
# vocis info names the model family of every tiny release folder; a bad folder is a one-line error.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
check() { # FOLDER KIND
    if "$VOCIS" info --model "$1" >"$SCRATCH/out" 2>"$SCRATCH/err" && grep -qx "model: $2" "$SCRATCH/out"; then
        echo "ok   $2: $1"
    else
        echo "FAIL $1: expected $2, got: $(cat "$SCRATCH/out" "$SCRATCH/err")"; fails=$((fails + 1))
    fi
}
check "$DATA/chatterbox/ckpt" chatterbox
check "$DATA/chatterbox-mtl/ckpt" chatterbox-multilingual
check "$DATA/chatterbox-turbo/ckpt" chatterbox-turbo
check "$DATA/chatterbox-nano/ckpt" chatterbox-nano
check "$DATA/vibevoice/model" vibevoice
check "$DATA/vibevoice-realtime/model" vibevoice-realtime
# the Nano folder is the complete release layout its README lists; what it shares with Turbo is identical
for f in ve.safetensors s3gen_meanflow.safetensors vocab.json merges.txt added_tokens.json special_tokens_map.json \
         tokenizer_config.json conds.pt; do
    cmp -s "$DATA/chatterbox-nano/ckpt/$f" "$DATA/chatterbox-turbo/ckpt/$f" ||
        { echo "FAIL chatterbox-nano/ckpt/$f: missing or not Turbo's"; fails=$((fails + 1)); }
done
VC=$SCRATCH/vc
rm -rf "$VC" && mkdir -p "$VC"
for f in s3gen.safetensors conds.pt chatterbox_tiny_config.json; do ln -sf "$(cd "$DATA/chatterbox/ckpt" && pwd)/$f" "$VC/"; done
check "$VC" chatterbox-vc
grep -q "^languages: ar, da" <("$VOCIS" info --model "$DATA/chatterbox-mtl/ckpt") && echo "ok   languages listed" ||
    { echo "FAIL multilingual languages"; fails=$((fails + 1)); }
# precision: each part as the model runs it, and what chose it
prec() { # NAME EXPECTED_LINE CMD...
    local name=$1 want=$2 got; shift 2
    got=$("$@" 2>&1 | grep '^precision:')
    [ "$got" = "$want" ] && echo "ok   $name: $got" || { echo "FAIL $name: expected '$want', got '$got'"; fails=$((fails + 1)); }
}
flow=exact; "$VOCIS" --version | grep -q avx512bf16 && flow=bf16 # the default flow is bf16 where the CPU has it
CB=$DATA/chatterbox/ckpt
prec precision-default "precision: T3 exact, S3Gen flow $flow, HiFT exact (default)" env -u VOCIS_PRECISION "$VOCIS" info --model "$CB"
prec precision-flag "precision: T3 bf16, S3Gen flow bf16, HiFT bf16 (--precision bf16)" "$VOCIS" info --model "$CB" --precision bf16
prec precision-q8 "precision: T3 q8, S3Gen flow bf16, HiFT bf16 (--precision q8)" "$VOCIS" info --model "$CB" --precision q8
prec precision-env "precision: T3 exact, S3Gen flow exact, HiFT exact (VOCIS_PRECISION=exact)" env VOCIS_PRECISION=exact "$VOCIS" info --model "$CB"
prec precision-flag-over-env "precision: T3 bf16, S3Gen flow bf16, HiFT bf16 (--precision bf16)" env VOCIS_PRECISION=exact "$VOCIS" info --model "$CB" --precision bf16
prec precision-vc "precision: S3Gen flow $flow, HiFT exact (default)" env -u VOCIS_PRECISION "$VOCIS" info --model "$VC"
prec precision-turbo "precision: T3 exact, S3Gen flow $flow, HiFT exact (default)" env -u VOCIS_PRECISION "$VOCIS" info --model "$DATA/chatterbox-turbo/ckpt"
prec precision-vibevoice "precision: LM q8 (VOCIS_PRECISION=q8)" env VOCIS_PRECISION=q8 "$VOCIS" info --model "$DATA/vibevoice/model"
prec precision-realtime "precision: LM exact (default)" env -u VOCIS_PRECISION "$VOCIS" info --model "$DATA/vibevoice-realtime/model"
# a VOCIS_PRECISION that names no mode is refused, not silently the default
BOGUS="VOCIS_PRECISION=bogus: unknown precision \\(exact, bf16, q8 or default\\)$"
expect_error env-precision-bogus-info "^vocis info: $BOGUS" env VOCIS_PRECISION=bogus "$VOCIS" info --model "$CB"
expect_error env-precision-bogus-speak "^vocis speak: $BOGUS" \
    env VOCIS_PRECISION=bogus "$VOCIS" speak --model "$CB" --text "Hi." -o "$SCRATCH/bogus.wav"
no_file env-precision-bogus "$SCRATCH/bogus.wav"
expect_error info-missing "model folder not found" "$VOCIS" info --model "$SCRATCH/nope"
expect_error info-empty "not a recognised model folder" "$VOCIS" info --model "$SCRATCH"
finish
