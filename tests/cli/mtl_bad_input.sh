#!/usr/bin/env bash
# Bad input for Chatterbox-Multilingual: missing / unknown language (the message lists the 23 codes), a
# language given to the English model, folders that are incomplete or mix the English and multilingual
# releases, broken .pt files, a missing Cangjie table for Chinese. One-line error, non-zero exit, no output.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox-mtl/ckpt
EN=$DATA/chatterbox/ckpt
. "$(dirname "$0")/lib.sh"
CODES="ar, da, de, el, en, es, fi, fr, he, hi, it, ja, ko, ms, nl, no, pl, pt, ru, sv, sw, tr, zh"
O=$SCRATCH/o.wav
speak=("$VOCIS" speak --precision exact --model "$M" --text "Bonjour." --seed 0 -q -o "$O")

expect_error speak-no-language "^vocis speak: --language: Chatterbox-Multilingual needs a language: one of $CODES\$" "${speak[@]}"
expect_error speak-bad-language "unsupported language 'xx' \(supported: $CODES\)" "${speak[@]}" --language xx
expect_error speak-empty-language "needs a language" "${speak[@]}" --language ""
expect_error tokens-no-language "needs a language" "$VOCIS" tokens --model "$M" --text "Hallo." -q
expect_error tokens-bad-language "unsupported language 'english'" "$VOCIS" tokens --model "$M" --text "Hi." \
    --language english -q
expect_error tokenize-no-language "give --language \(one of $CODES\)" "$VOCIS" tokenize --model "$M" --text "Hi."
expect_error tokenize-bad-language "unsupported language 'pt-br'" "$VOCIS" tokenize --model "$M" --text "Oi." \
    --language pt-br
expect_error english-with-language "only Chatterbox-Multilingual takes a language" \
    "$VOCIS" speak --model "$EN" --text "Hello." --language fr -q -o "$O"
expect_error english-tokenize-language "only Chatterbox-Multilingual takes a language" \
    "$VOCIS" tokenize --model "$EN" --text "Hello." --language de
no_file outputs "$O" "$O.tmp"

# folders
link_model "$M" "$SCRATCH/mixed"
ln -sf "$(cd "$EN" && pwd)/t3_cfg.safetensors" "$SCRATCH/mixed/"
expect_error mixed-folder "holds both the English T3 \(t3_cfg.safetensors\) and the multilingual one" \
    "$VOCIS" speak --model "$SCRATCH/mixed" --language fr --text "Salut." -q -o "$O"
link_model "$M" "$SCRATCH/nos3gen"
rm "$SCRATCH/nos3gen/s3gen.pt"
expect_error no-s3gen "without s3gen.pt" "$VOCIS" tokens --model "$SCRATCH/nos3gen" --language fr --text "Salut." -q
link_model "$M" "$SCRATCH/notok"
rm "$SCRATCH/notok/grapheme_mtl_merged_expanded_v1.json"
expect_error no-tokenizer "without its tokenizer grapheme_mtl_merged_expanded_v1.json" \
    "$VOCIS" speak --model "$SCRATCH/notok" --language fr --text "Salut." -q -o "$O"
link_model "$M" "$SCRATCH/badve"
ln -sf "$(cd "$M" && pwd)/conds.pt" "$SCRATCH/badve/ve.pt" # a torch file, but not a state dict of tensors
expect_error ve-not-state-dict "ve.pt: state dict entry 't3' is a dict, expected a tensor" \
    "$VOCIS" speak --model "$SCRATCH/badve" --language fr --voice "$DATA/chatterbox-mtl/golden/ref_24k.wav" \
    --text "Salut." -q -o "$O"
link_model "$M" "$SCRATCH/bads3gen"
rm "$SCRATCH/bads3gen/s3gen.pt"
head -c 5000 "$M/s3gen.pt" >"$SCRATCH/bads3gen/s3gen.pt" # truncated zip
expect_error s3gen-truncated "s3gen.pt" "$VOCIS" speak --model "$SCRATCH/bads3gen" --language fr --text "Salut." \
    -q -o "$O"
link_model "$M" "$SCRATCH/nocj"
rm "$SCRATCH/nocj/Cangjie5_TC.json"
expect_error zh-no-cangjie "Cangjie5_TC.json: not found; Chinese \(zh\) text needs" \
    "$VOCIS" tokenize --model "$SCRATCH/nocj" --text "你好" --language zh
"$VOCIS" tokenize --model "$SCRATCH/nocj" --text "Hola." --language es >/dev/null ||
    { echo "FAIL: a missing Cangjie table broke Spanish"; fails=$((fails + 1)); }
link_model "$M" "$SCRATCH/badcj"
rm "$SCRATCH/badcj/Cangjie5_TC.json"
printf '["\xe6\x97\xa5a"]' >"$SCRATCH/badcj/Cangjie5_TC.json"
expect_error cangjie-malformed "Cangjie5_TC.json: entry 0 .* has no tab" \
    "$VOCIS" speak --model "$SCRATCH/badcj" --language fr --text "Salut." -q -o "$O"
no_file folders "$O" "$O.tmp"
finish
