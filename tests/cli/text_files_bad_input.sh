#!/usr/bin/env bash
# Malformed tokenizer files of the Multilingual and Turbo releases and malformed VibeVoice-Realtime
# model folders: truncated, wrong type, ids out of range or far past the vocabulary (the id table
# would be sized by them), ids the T3 has no embedding for, nesting past cJSON's limit, files over
# the size cap, safetensors headers with a wrong dtype / shape / huge claimed sizes, NaN weights.
# Each: one stderr line naming the file (and the field where there is one), non-zero exit, no output.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
MTL=$DATA/chatterbox-mtl/ckpt GF=grapheme_mtl_merged_expanded_v1.json
TURBO=$DATA/chatterbox-turbo/ckpt
RT=$DATA/vibevoice-realtime/model
P=$DATA/vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt
W=$SCRATCH/o.wav

# folder NAME SRC FILE: a copy of SRC (links) whose FILE is a private copy to edit; prints its path
folder() {
    link_model "$2" "$SCRATCH/$1"
    rm "$SCRATCH/$1/$3"
    cp "$2/$3" "$SCRATCH/$1/$3"
    echo "$SCRATCH/$1/$3"
}
deep_json() { local i; for ((i = 0; i < 2000; i++)); do printf '['; done; for ((i = 0; i < 2000; i++)); do printf ']'; done; }

# ---- Multilingual tokenizer (grapheme_mtl_merged_expanded_v1.json)
f=$(folder m-cut "$MTL" $GF); head -c 3000 "$MTL/$GF" >"$f"
expect_error mtl-truncated "$GF: invalid JSON near byte" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-cut"
f=$(folder m-type "$MTL" $GF); sed -i 's/"type": "BPE"/"type": "Unigram"/' "$f"
expect_error mtl-model-type "$GF: model.type" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-type"
f=$(folder m-vocab "$MTL" $GF); sed -i 's/"b": 98,/"b": "98",/' "$f"
expect_error mtl-id-type "$GF: model.vocab 'b': expected an integer id, found a string" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-vocab"
f=$(folder m-range "$MTL" $GF); sed -i 's/"b": 98,/"b": 16777216,/' "$f"
expect_error mtl-id-range "$GF: model.vocab 'b': id 1.67772e\+07 is not an integer in \[0, 16777216\)" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-range"
f=$(folder m-sparse "$MTL" $GF); sed -i 's/"b": 98,/"b": 9000000,/' "$f"
expect_error mtl-id-sparse "$GF: id 9000000 is implausible for [0-9]+ tokens" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-sparse"
f=$(folder m-rows "$MTL" $GF); sed -i 's/"b": 98,/"b": 4000,/' "$f"
expect_error mtl-id-past-t3 "$GF: 4001 token ids, but the T3's text_emb has [0-9]+ rows" "$VOCIS" speak --language fr --text "Salut." -q -o "$W" --model "$SCRATCH/m-rows"
f=$(folder m-deep "$MTL" $GF); deep_json >"$f"
expect_error mtl-nesting "$GF: invalid JSON" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-deep"
f=$(folder m-big "$MTL" $GF); truncate -s $(((64 << 20) + 1)) "$f"
expect_error mtl-too-big "$GF: file is 67108865 bytes, more than the 67108864 allowed" "$VOCIS" tokenize --language fr --text "Salut, ça va ?" --model "$SCRATCH/m-big"
f=$(folder m-cj "$MTL" Cangjie5_TC.json); deep_json >"$f"
expect_error mtl-cangjie-nesting "Cangjie5_TC.json: invalid JSON" "$VOCIS" tokenize --model "$SCRATCH/m-cj" \
    --language zh --text "你好"
no_file mtl "$W"

# ---- Turbo tokenizer (vocab.json, merges.txt, added_tokens.json, tokenizer_config.json)
f=$(folder t-cut "$TURBO" vocab.json); head -c 2000 "$TURBO/vocab.json" >"$f"
expect_error turbo-vocab-truncated "vocab.json: invalid JSON near byte" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-cut"
f=$(folder t-list "$TURBO" vocab.json); echo '["a", "b"]' >"$f"
expect_error turbo-vocab-list "vocab.json: not a JSON object of token -> id" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-list"
f=$(folder t-big "$TURBO" vocab.json); truncate -s $(((64 << 20) + 1)) "$f"
expect_error turbo-vocab-too-big "vocab.json: file is 67108865 bytes" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-big"
f=$(folder t-merge "$TURBO" merges.txt); echo "a b c" >>"$f"
expect_error turbo-merges-line "merges.txt: line 'a b c' is not 'a b'" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-merge"
f=$(folder t-merge-oov "$TURBO" merges.txt); printf '\xe2\x82\xac \xe2\x82\xac\n' >>"$f"
expect_error turbo-merges-oov "vocab.json: model.merges\[[0-9]+\]: token" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-merge-oov"
f=$(folder t-added "$TURBO" tokenizer_config.json); sed -i 's/"1005": {/"x1005": {/' "$f"
expect_error turbo-added-id "tokenizer_config.json: added_tokens_decoder entry 'x1005' is not \{id: \{content: ...\}\}" \
    "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-added"
f=$(folder t-cfg "$TURBO" tokenizer_config.json); head -c 500 "$TURBO/tokenizer_config.json" >"$f"
expect_error turbo-config-truncated "tokenizer_config.json: invalid JSON" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-cfg"
f=$(folder t-sparse "$TURBO" tokenizer_config.json); sed -i 's/"1023": {/"9000000": {/' "$f"
expect_error turbo-id-sparse "vocab.json: id 9000000 is implausible" "$VOCIS" tokenize --text "Hello there [laugh]." --model "$SCRATCH/t-sparse"
f=$(folder t-rows "$TURBO" tokenizer_config.json); sed -i 's/"1023": {/"3000": {/' "$f"
expect_error turbo-id-past-t3 "the tokenizer has 3001 ids, T3's text_emb only [0-9]+ rows" "$VOCIS" speak --text "Hello there." -q -o "$W" --model "$SCRATCH/t-rows"
no_file turbo "$W"

# ---- VibeVoice-Realtime folders
# st_header_edit FILE SED: rewrites the JSON header of safetensors FILE through SED (new length)
st_header_edit() {
    local f=$1 n
    n=$(od -An -tu8 -N8 "$f" | tr -d ' ')
    head -c $((8 + n)) "$f" | tail -c "$n" | sed -e "$2" >"$f.hdr"
    local m; m=$(stat -c %s "$f.hdr")
    { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00\\x00' $((m & 255)) $((m >> 8 & 255)) $((m >> 16)))"
      cat "$f.hdr"; tail -c +$((9 + n)) "$f"; } >"$f.new"
    mv "$f.new" "$f"; rm "$f.hdr"
}
B='"model.acoustic_connector.fc1.weight":{"dtype":"F32","shape":\[64,64\],"data_offsets":\[256,16640\]}'
link_model "$RT" "$SCRATCH/r-noconfig"; rm "$SCRATCH/r-noconfig/config.json"
expect_error rt-no-config "config.json" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-noconfig"
f=$(folder r-cfg "$RT" config.json); head -c 700 "$RT/config.json" >"$f"
expect_error rt-config-truncated "config.json: invalid JSON" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-cfg"
f=$(folder r-hidden "$RT" config.json); sed -i 's/"hidden_size": 64,/"hidden_size": 96,/' "$f"
expect_error rt-config-hidden "model.safetensors: .*shape" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-hidden"
f=$(folder r-cut "$RT" model.safetensors); head -c 100000 "$RT/model.safetensors" >"$f"
expect_error rt-weights-truncated "model.safetensors: tensor .* \(truncated file\?\)" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-cut"
f=$(folder r-dtype "$RT" model.safetensors); st_header_edit "$f" "s/$B/${B/F32/I64}/"
expect_error rt-weights-dtype "model.safetensors: tensor 'model.acoustic_connector.fc1.weight'.* needs" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-dtype"
f=$(folder r-dtype2 "$RT" model.safetensors)
st_header_edit "$f" 's/"model.acoustic_connector.fc1.weight":{"dtype":"F32"/"model.acoustic_connector.fc1.weight":{"dtype":"I32"/'
expect_error rt-weights-int "model.safetensors: .*acoustic_connector.fc1.weight.*I32" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-dtype2"
f=$(folder r-shape "$RT" model.safetensors)
st_header_edit "$f" 's/"shape":\[64,64\],"data_offsets":\[256,16640\]/"shape":[16,256],"data_offsets":[256,16640]/'
expect_error rt-weights-shape "model.safetensors: tensor 'model.acoustic_connector.fc1.(weight|bias)': expected shape" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-shape"
f=$(folder r-huge "$RT" model.safetensors)
st_header_edit "$f" 's/"shape":\[64,64\],"data_offsets":\[256,16640\]/"shape":[1099511627776,64],"data_offsets":[256,16640]/'
expect_error rt-weights-huge-shape "model.safetensors: tensor 'model.acoustic_connector.fc1.weight': data_offsets .* needs" \
    "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-huge"
f=$(folder r-off "$RT" model.safetensors)
st_header_edit "$f" 's/"data_offsets":\[256,16640\]/"data_offsets":[256,99999999999999]/'
expect_error rt-weights-huge-offset "model.safetensors: tensor 'model.acoustic_connector.fc1.weight': data_offsets" \
    "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-off"
f=$(folder r-tok "$RT" tokenizer.json); deep_json >"$f"
expect_error rt-tokenizer-nesting "tokenizer.json: invalid JSON" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-tok"
f=$(folder r-pre "$RT" preprocessor_config.json); echo '{"audio_processor": {"sampling_rate": "fast"}}' >"$f"
expect_error rt-preprocessor "preprocessor_config.json: field 'audio_processor.sampling_rate' is not a number" "$VOCIS" speak --voice "$P" --text "Hello there." -q -o "$W" --model "$SCRATCH/r-pre"
no_file realtime "$W"
finish
