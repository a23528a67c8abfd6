#!/usr/bin/env bash
# Chatterbox T3 against upstream's golden outputs (tiny checkpoint):
# conditioning, prefill, sampled tokens (seed 0) and greedy tokens.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden
TEXT="Hello world, this is a tiny test of Chatterbox."

"$VOCIS" debug t3-cond --model "$M" --in "$G/06_t3_cond.safetensors" --out "$SCRATCH/cond.safetensors"
"$CMP" "$G/06_t3_cond.safetensors" "$SCRATCH/cond.safetensors" \
    cond_prompt_speech_emb:1e-5 perceiver_out:1e-4 cond_emb:1e-4

"$VOCIS" debug t3-prefill --model "$M" --in "$G/07_t3_prefill.safetensors" --out "$SCRATCH/prefill.safetensors"
"$CMP" "$G/07_t3_prefill.safetensors" "$SCRATCH/prefill.safetensors" \
    hidden_after_layer0:1e-4 hidden_after_layer1:1e-4 final_norm_hidden:1e-4 logits_last:1e-4

expect_tokens() { # name golden-file tokens-line
    local want
    want=$("$CMP" --print "$2" tokens)
    if [ "$3" != "$want" ]; then
        echo "FAIL $1:"; echo "  got:  $3"; echo "  want: $want"; exit 1
    fi
    echo "ok   $1: $(echo "$3" | wc -w) tokens"
}
got=$("$VOCIS" tokens --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --seed 0 --exaggeration 0.5 --threads 2)
expect_tokens sampled "$G/08_t3_sampled.safetensors" "$got"
got=$("$VOCIS" tokens --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --greedy --exaggeration 0.5 --threads 1)
expect_tokens greedy "$G/09_t3_greedy.safetensors" "$got"
# Self-speculative decoding (the default, auto) must give upstream's tokens in every setting.
for spec in off auto 1 3 16; do
    got=$("$VOCIS" tokens --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --seed 0 \
        --exaggeration 0.5 --threads 2 --speculate $spec -q)
    expect_tokens "sampled, --speculate $spec" "$G/08_t3_sampled.safetensors" "$got"
    got=$("$VOCIS" tokens --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --greedy \
        --exaggeration 0.5 --threads 1 --speculate $spec -q)
    expect_tokens "greedy, --speculate $spec" "$G/09_t3_greedy.safetensors" "$got"
done

# Built-in voice: conds.pt contents and a prefill with them (13_conds_pt).
"$VOCIS" debug conds-pt --model "$M" --in "$G/13_conds_pt.safetensors" --out "$SCRATCH/conds.safetensors"
"$CMP" "$G/13_conds_pt.safetensors" "$SCRATCH/conds.safetensors" \
    t3.speaker_emb:0 t3.cond_prompt_speech_tokens:exact t3.emotion_adv:0 gen.prompt_token:exact \
    gen.prompt_token_len:exact gen.prompt_feat:0 gen.embedding:0 builtin_prefill_logits_last:1e-4
# Without --t3-cond the model folder's conds.pt is the voice.
"$VOCIS" tokens --model "$M" --text "Built-in voice check." --seed 0 --max-tokens 5 -q >"$SCRATCH/builtin.txt"
[ "$(wc -w <"$SCRATCH/builtin.txt")" -ge 1 ]
