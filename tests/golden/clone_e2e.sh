#!/usr/bin/env bash
# Voice cloning end to end with NO tensor injected: vocis voice create from the golden reference
# recording (ref_24k.wav), then vocis speak with that voice, seed 0, must equal upstream's
# generate(text, audio_prompt_path=ref_24k.wav) (12_e2e wav_out, end-to-end tolerance 5e-3).
# The voice's tensors are checked against the front-end goldens (02-05, 10), and --voice with
# the recording itself must give the same samples as the saved voice.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden
TEXT="Hello world, this is a tiny test of Chatterbox."

rm -f "$SCRATCH/r.voice"
"$VOCIS" voice create --model "$M" "$G/ref_24k.wav" -o "$SCRATCH/r.voice" --threads 2 2>"$SCRATCH/create.txt"
grep -q "warning" "$SCRATCH/create.txt" || { echo "FAIL: no warning for a 4.3 s reference"; exit 1; }
"$CMP" "$G/02_voice_encoder.safetensors" "$SCRATCH/r.voice" speaker_emb=speaker_emb:1e-5
"$CMP" "$G/03_s3tokenizer.safetensors" "$SCRATCH/r.voice" \
    cond_prompt_speech_tokens=t3cond_prompt_tokens:exact prompt_token=s3gen_prompt_tokens:exact
"$CMP" "$G/04_campplus.safetensors" "$SCRATCH/r.voice" embedding=xvector:1e-5
"$CMP" "$G/10_s3gen_flow.safetensors" "$SCRATCH/r.voice" prompt_feat=prompt_feat:1e-3
grep -aq '"source":"ref_24k.wav"' "$SCRATCH/r.voice" || { echo "FAIL: no source metadata"; exit 1; }
grep -aq '"vocis_version"' "$SCRATCH/r.voice" || { echo "FAIL: no version metadata"; exit 1; }

"$VOCIS" speak --model "$M" --voice "$SCRATCH/r.voice" --text "$TEXT" --seed 0 --exaggeration 0.5 \
    --format f32 -o "$SCRATCH/voice.wav" -q --threads 2
"$CMP" --wav "$SCRATCH/voice.wav" "$G/12_e2e.safetensors" wav_out 5e-3

# raw f32 PCM on stdout (a float WAV's PEAK chunk carries a time stamp, so WAV bytes differ run to run)
for v in "$SCRATCH/r.voice" "$G/ref_24k.wav"; do
    "$VOCIS" speak --model "$M" --voice "$v" --text "$TEXT" --seed 0 --exaggeration 0.5 \
        --format f32 -o - -q --threads 2 >"$SCRATCH/$(basename "$v").f32"
done
cmp "$SCRATCH/r.voice.f32" "$SCRATCH/ref_24k.wav.f32" || { echo "FAIL: --voice REF.wav differs from the saved voice"; exit 1; }
[ "$(wc -c <"$SCRATCH/r.voice.f32")" -eq $((34080 * 4)) ] || { echo "FAIL: unexpected length"; exit 1; }
echo "ok   cloned voice speaks upstream's samples"
