#!/usr/bin/env bash
# Chatterbox voice conversion (ChatterboxVC) against upstream's golden set (tests/data/chatterbox-vc):
# the stages it adds (source tokens, long-audio tokenizer path, the target's S3Gen half, the flow on
# prompt + source), then `vocis convert` end to end from the seed alone, with a target recording, a
# saved voice and the built-in voice, on a voice-conversion folder (s3gen.safetensors + conds.pt, as
# ChatterboxVC.from_local reads) and on a full Chatterbox folder. Tolerances from the set's README.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
. "$(dirname "$0")/../cli/lib.sh"
D=$DATA/chatterbox-vc
FULL=$DATA/chatterbox/ckpt # the VC checkpoint files are byte-identical to the English tiny ones
VC=$SCRATCH/vc_model
rm -rf "$VC" && mkdir -p "$VC"
for f in s3gen.safetensors conds.pt chatterbox_tiny_config.json; do ln -sf "$(cd "$FULL" && pwd)/$f" "$VC/"; done
set -e

"$VOCIS" debug s3tokenizer --model "$VC" --in "$D/01_audio_inputs.safetensors" --out "$SCRATCH/s3.st"
"$CMP" "$D/03_s3tokenizer.safetensors" "$SCRATCH/s3.st" s3gen_log_mel:2e-4 s3gen_tokens:exact \
    s3gen_prompt_tokens:exact source_log_mel:2e-4 source_mel_len:exact source_tokens:exact source_token_lens:exact
"$VOCIS" debug campplus --model "$VC" --in "$D/01_audio_inputs.safetensors" --out "$SCRATCH/cam.st"
"$CMP" "$D/04_campplus.safetensors" "$SCRATCH/cam.st" fbank_meannorm:5e-3 xvector:1e-5
"$VOCIS" debug ref-mel --model "$VC" --in "$D/01_audio_inputs.safetensors" --out "$SCRATCH/mel.st"
"$CMP" "$D/05_ref_mel24k.safetensors" "$SCRATCH/mel.st" mel:1e-3
# long-audio path (54.7 s source): windows, lengths and the merged tokens exact (window_codes past
# window_code_lens come from upstream's padding and are not reproduced)
"$VOCIS" debug source-long-tokenizer --model "$VC" --source "$D/source_long.wav" --out "$SCRATCH/long.st"
"$CMP" "$D/07_source_long_tokenizer.safetensors" "$SCRATCH/long.st" mel_len:exact window_mel_start:exact \
    window_mel_len:exact window_code_lens:exact tokens:exact token_lens:exact
"$VOCIS" debug s3gen-flow --model "$VC" --in "$D/10_s3gen_flow.safetensors" --out "$SCRATCH/flow.st"
"$CMP" "$D/10_s3gen_flow.safetensors" "$SCRATCH/flow.st" spks:1e-5 encoder_out:1e-4 mu:1e-4 mel_out:1e-4 \
    solve_euler_out:1e-4 est_dxdt_step0:1e-4

# the target's S3Gen half = 06_ref_dict (a saved voice needs the full folder: it also holds the T3 half)
"$VOCIS" voice create --model "$FULL" "$D/target.wav" -o "$SCRATCH/target.voice" 2>/dev/null
"$CMP" "$D/06_ref_dict.safetensors" "$SCRATCH/target.voice" prompt_token:exact prompt_token_len:exact \
    prompt_feat:1e-3 embedding:1e-5

for M in "$VC" "$FULL"; do
    "$VOCIS" convert --precision exact --model "$M" "$D/source.wav" --voice "$D/target.wav" --seed 0 --format f32 -q \
        -o "$SCRATCH/vc.wav"
    "$CMP" --wav "$SCRATCH/vc.wav" "$D/12_e2e.safetensors" wav_out 5e-3
done
"$VOCIS" convert --precision exact --model "$FULL" "$D/source.wav" --voice "$SCRATCH/target.voice" --seed 0 --format f32 -q -o - \
    >"$SCRATCH/vc.f32"
"$CMP" --raw "$SCRATCH/vc.f32" "$D/12_e2e.safetensors" wav_out 5e-3
"$VOCIS" convert --precision exact --model "$VC" "$D/source_builtin.wav" --seed 1 --format f32 -q -o "$SCRATCH/builtin.wav"
"$CMP" --wav "$SCRATCH/builtin.wav" "$D/13_conds_pt.safetensors" builtin_wav_out 5e-3

# bad input: one line, non-zero exit, no output file
set +e
MK=$(dirname "$CMP")/mkaudio
echo "not audio" >"$SCRATCH/text.wav"
: >"$SCRATCH/empty.wav"
"$MK" nan "$D/source_builtin.wav" "$SCRATCH/nan.wav"
"$MK" long125s "$D/source_builtin.wav" "$SCRATCH/long.wav"
"$MK" short005 "$D/source_builtin.wav" "$SCRATCH/short.wav"
rm -f "$SCRATCH"/bad*.wav
expect_error vc-unreadable "not a readable audio file" "$VOCIS" convert --precision exact --model "$VC" "$SCRATCH/text.wav" -o "$SCRATCH/bad1.wav"
expect_error vc-empty "empty" "$VOCIS" convert --precision exact --model "$VC" "$SCRATCH/empty.wav" -o "$SCRATCH/bad2.wav"
expect_error vc-nan "NaN" "$VOCIS" convert --precision exact --model "$VC" "$SCRATCH/nan.wav" -o "$SCRATCH/bad3.wav"
expect_error vc-too-long "longer than 120 s" "$VOCIS" convert --precision exact --model "$VC" "$SCRATCH/long.wav" -o "$SCRATCH/bad4.wav"
expect_error vc-target-short "too short" "$VOCIS" convert --precision exact --model "$VC" "$D/source.wav" --voice "$SCRATCH/short.wav" \
    -o "$SCRATCH/bad5.wav"
expect_error vc-no-source "SOURCE_AUDIO" "$VOCIS" convert --precision exact --model "$VC" -o "$SCRATCH/bad6.wav"
expect_error vc-missing "cannot open" "$VOCIS" convert --precision exact --model "$VC" "$SCRATCH/nope.wav" -o "$SCRATCH/bad7.wav"
no_file vc-bad "$SCRATCH"/bad[1-7].wav
finish
