#!/usr/bin/env bash
# Chatterbox-Turbo and -Nano end to end on the tiny checkpoints: `vocis speak
# --voice ref_24k.wav --seed N` (generate()'s defaults) must give upstream's
# 12_e2e wav_out from the seed alone (clone with loudness normalisation ->
# GPT-2 T3 -> silence tail -> 2-step MeanFlow -> HiFT); the built-in voice
# (conds.pt); `vocis tokenize`; and the bad inputs of this family.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
source "$(dirname "$0")/../cli/lib.sh"
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
DATA=$(cd "$DATA" && pwd)
MK=$(dirname "$CMP")/mkaudio
TEXT="Hi there, this is a tiny Turbo test. [chuckle] Did it work?"
TURBO=$DATA/chatterbox-turbo/ckpt
NANO=$DATA/chatterbox-nano/ckpt # complete: the files it shares with Turbo are byte-identical copies
REF=$DATA/chatterbox-turbo/golden/ref_24k.wav

for variant in turbo nano; do
    if [ $variant = turbo ]; then M=$TURBO seed=0; else M=$NANO seed=1; fi
    G=$DATA/chatterbox-$variant/golden
    "$VOCIS" speak --model "$M" --voice "$REF" --text "$TEXT" --seed $seed --precision exact --threads 2 \
        --format f32 -q -o "$SCRATCH/$variant.wav" || { echo "FAIL $variant speak"; exit 1; }
    "$CMP" --wav "$SCRATCH/$variant.wav" "$G/12_e2e.safetensors" wav_out 5e-3 || exit 1
    # the built-in voice (conds.pt): runs and gives speech
    "$VOCIS" speak --model "$M" --text "Built-in voice check." --seed 0 --threads 2 -q -o "$SCRATCH/b_$variant.wav" \
        || { echo "FAIL $variant built-in voice"; exit 1; }
    [ "$(stat -c %s "$SCRATCH/b_$variant.wav")" -gt 1000 ] || { echo "FAIL $variant built-in: no audio"; exit 1; }
    echo "ok   $variant end to end"
done

# vocis tokenize prints the GPT-2 ids (00_text case 1)
got=$("$VOCIS" tokenize --model "$TURBO" --text "Oh, that's hilarious! [chuckle] Um... anyway [laugh]")
[ "$got" = "556 11 510 366 968 0 220 1006 874 13 13 13 901 220 1005 13" ] || { echo "FAIL tokenize: $got"; exit 1; }
echo "ok   tokenize"

# Bad input: references of 5 s or less (upstream asserts > 5 s), mixed-variant folders, no output left behind.
"$MK" short05 "$REF" "$SCRATCH/short.wav" && "$MK" r48k "$REF" "$SCRATCH/r48k.wav" || { echo "FAIL mkaudio"; exit 1; }
expect_error short-ref "more than 5 s" "$VOCIS" speak --model "$TURBO" --voice "$SCRATCH/short.wav" --text hi -q \
    -o "$SCRATCH/x.wav"
expect_error short-ref-3s "3.10 s long" "$VOCIS" speak --model "$NANO" --voice "$SCRATCH/r48k.wav" --text hi -q \
    -o "$SCRATCH/x.wav"
no_file short-ref-output "$SCRATCH/x.wav"
MIX=$SCRATCH/mix
mkdir -p "$MIX" && ln -s "$TURBO"/* "$MIX/" && ln -s "$DATA/chatterbox-nano/ckpt/t3_nano_v1.safetensors" "$MIX/"
expect_error mixed-turbo-nano "mixing two model variants" "$VOCIS" speak --model "$MIX" --text hi -q -o "$SCRATCH/x.wav"
MIX2=$SCRATCH/mix2
mkdir -p "$MIX2" && ln -s "$TURBO"/* "$MIX2/" && ln -s "$DATA/chatterbox/ckpt/t3_cfg.safetensors" "$MIX2/"
expect_error mixed-english-turbo "mixing two model variants" "$VOCIS" tokens --model "$MIX2" --text hi -q
NOS3=$SCRATCH/nos3
mkdir -p "$NOS3" && for f in "$TURBO"/*; do [ "$(basename "$f")" = s3gen_meanflow.safetensors ] || ln -s "$f" "$NOS3/"; done
expect_error no-meanflow "s3gen_meanflow.safetensors" "$VOCIS" speak --model "$NOS3" --text hi -q -o "$SCRATCH/x.wav"
no_file short-ref-output "$SCRATCH/x.wav"
finish
