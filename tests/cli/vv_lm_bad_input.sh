#!/usr/bin/env bash
# Bad VibeVoice checkpoints through the Qwen2 LM loader: one-line error, non-zero exit.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/vibevoice/model
IN=$DATA/vibevoice/golden/06_lm_prefill.safetensors
. "$(dirname "$0")/lib.sh"
expect_load_error() { # NAME PATTERN MODEL_DIR
    timeout 60 "$VOCIS" debug qwen2-prefill --model "$3" --in "$IN" --out "$SCRATCH/out.safetensors" \
        >/dev/null 2>"$SCRATCH/err"
    local rc=$? lines
    lines=$(wc -l <"$SCRATCH/err")
    if [ $rc -eq 0 ] || [ $rc -ge 124 ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$2" "$SCRATCH/err"; then
        echo "FAIL $1: rc=$rc:"; sed 's/^/    /' "$SCRATCH/err" | head -3; fails=$((fails + 1))
    else
        echo "ok   $1: $(cat "$SCRATCH/err")"
    fi
    [ ! -e "$SCRATCH/out.safetensors" ] || { echo "FAIL $1: output left behind"; fails=$((fails + 1)); }
}
model() { # NAME: a copy of the tiny model folder (weights linked)
    local d=$SCRATCH/$1
    link_model "$M" "$d"
    rm "$d/config.json"; cp "$M/config.json" "$d/config.json"
    echo "$d"
}

d=$(model shard); rm "$d/model-00002-of-00002.safetensors"
expect_load_error missing-shard "model-00002-of-00002.safetensors: cannot open" "$d"
d=$(model notjson); echo '{"decoder_config": ' >"$d/config.json"
expect_load_error config-not-json "config.json.*JSON" "$d"
d=$(model negative); sed -i 's/"num_hidden_layers": 2/"num_hidden_layers": -2/' "$d/config.json"
expect_load_error negative-layers "num_hidden_layers" "$d"
d=$(model heads); sed -i 's/"num_attention_heads": 4/"num_attention_heads": 5/' "$d/config.json"
expect_load_error heads-not-dividing "num_attention_heads|head" "$d"
d=$(model missing); sed -i '/"hidden_size": 64,/d' "$d/config.json"
expect_load_error missing-hidden "hidden_size" "$d"
d=$(model mismatch); sed -i 's/"intermediate_size": 160/"intermediate_size": 128/' "$d/config.json"
expect_load_error config-vs-checkpoint "160|128" "$d"

finish
