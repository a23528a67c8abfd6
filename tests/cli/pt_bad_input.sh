#!/usr/bin/env bash
# Malformed torch.save files of the newer loaders: the Multilingual release's s3gen.pt and ve.pt
# (state dicts of weights) and VibeVoice-Realtime voice presets (.pt). ptedit rebuilds each real
# test file with one defect (fresh CRCs, so the parser, not the checksum, meets it): truncated
# pickle or storage, unknown opcode, a global off the allow-list, wrong dtype, wrong shape, huge
# claimed element counts, NaN weights. Each: one stderr line naming the file (and the field where
# there is one), non-zero exit, no output file.
#   pt_bad_input.sh VOCIS DATA SCRATCH STCOMPARE (ptedit is built next to stcompare)
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
PTEDIT=$(dirname "$4")/ptedit
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox-mtl/ckpt
REF=$DATA/chatterbox-mtl/golden/ref_24k.wav
RT=$DATA/vibevoice-realtime/model
P=$DATA/vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt
O=$SCRATCH/o.voice W=$SCRATCH/o.wav
G='torch\x0aFloatStorage\x0a' # GLOBAL operand of the float storages in ve.pt / s3gen.pt

# with_file NAME FILE EDIT...: a copy of the Multilingual folder whose FILE (ve.pt / s3gen.pt) has EDIT
with_file() {
    local d=$SCRATCH/$1 file=$2; shift 2
    link_model "$M" "$d"
    rm "$d/$file"
    "$PTEDIT" "$M/$file" "$d/$file" "$@" || { echo "FAIL: ptedit $file $*"; exit 1; }
}
CLONE=("$VOCIS" voice create "$REF" -o "$O" --threads 2 --model)

# the tool itself: a copy without edits loads as the original does
with_file same ve.pt
if "${CLONE[@]}" "$SCRATCH/same" 2>"$SCRATCH/err" && [ -s "$O" ]; then echo "ok   unedited copy loads"; else
    echo "FAIL unedited copy: $(cat "$SCRATCH/err")"; fails=$((fails + 1)); fi
rm -f "$O"

with_file ve-opcode ve.pt replace data.pkl '\x80\x02}' '\x80\x02\xff}'
expect_error ve-unknown-opcode "ve.pt:ve/data.pkl: byte 2: unknown opcode 0xff" "${CLONE[@]}" "$SCRATCH/ve-opcode"
with_file ve-global ve.pt replace data.pkl "$G" 'posix\x0asystem\x0a'
expect_error ve-unknown-global "ve.pt:ve/data.pkl: .*global 'posix.system' is not allowed" "${CLONE[@]}" "$SCRATCH/ve-global"
with_file ve-cut-pkl ve.pt cut data.pkl 700
expect_error ve-truncated-pickle "ve.pt:ve/data.pkl: .*(end|truncated)" "${CLONE[@]}" "$SCRATCH/ve-cut-pkl"
with_file ve-cut-storage ve.pt cut data/2 100
expect_error ve-truncated-storage "ve.pt: storage 've/data/2' has 100 bytes but" "${CLONE[@]}" "$SCRATCH/ve-cut-storage"
with_file ve-numel ve.pt replace data.pkl 'cpuq\x06K\x01t' 'cpuq\x06J\xff\xff\xff\x7ft'
expect_error ve-huge-storage "ve.pt: storage 've/data/0' has 4 bytes but 2147483647 x F32" "${CLONE[@]}" "$SCRATCH/ve-numel"
with_file ve-shape ve.pt replace data.pkl 'QK\x00K\x01\x85' 'QK\x00J\x00\x00\x00\x40\x85'
expect_error ve-huge-shape "ve.pt:ve/data.pkl: .*tensor reaches element 1073741823 of storage '0'" "${CLONE[@]}" "$SCRATCH/ve-shape"
with_file ve-dtype ve.pt replace data.pkl "$G" 'torch\x0aIntStorage\x0a'
expect_error ve-wrong-dtype "ve.pt: .*(I32|int32)" "${CLONE[@]}" "$SCRATCH/ve-dtype"
with_file ve-swap ve.pt replace data.pkl weight_ih_l0 weight_XX_l0 replace data.pkl weight_hh_l0 weight_ih_l0 \
    replace data.pkl weight_XX_l0 weight_hh_l0
expect_error ve-wrong-shape "ve.pt: .*lstm.weight_(ih|hh)_l0.* shape" "${CLONE[@]}" "$SCRATCH/ve-swap"
with_file ve-nan ve.pt nan data/2
expect_error ve-nan-weight "voice encoder: the speaker embedding is non-finite \(NaN or infinite weights\?\)" "${CLONE[@]}" "$SCRATCH/ve-nan"
no_file ve "$O"

with_file s3-global s3gen.pt replace data.pkl "$G" 'builtins\x0aeval\x0a'
expect_error s3gen-unknown-global "s3gen.pt:s3gen/data.pkl: .*global 'builtins.eval' is not allowed" "${CLONE[@]}" "$SCRATCH/s3-global"
with_file s3-dtype s3gen.pt replace data.pkl "$G" 'torch\x0aIntStorage\x0a'
expect_error s3gen-wrong-dtype "s3gen.pt: .*(I32|int32)" "${CLONE[@]}" "$SCRATCH/s3-dtype"
with_file s3-swap s3gen.pt replace data.pkl encoder.conv1.weight encoder.convX.weight \
    replace data.pkl encoder.conv2.weight encoder.conv1.weight replace data.pkl encoder.convX.weight encoder.conv2.weight
expect_error s3gen-wrong-shape "s3gen.pt: .*tokenizer.encoder.conv[12].weight.* shape" "${CLONE[@]}" "$SCRATCH/s3-swap"
with_file s3-numel s3gen.pt replace data.pkl 'cpuq\x06M\x80dt' 'cpuq\x06J\x00\x00\x00\x40t'
expect_error s3gen-huge-storage "s3gen.pt: storage 's3gen/data/0' has .* bytes but" "${CLONE[@]}" "$SCRATCH/s3-numel"
with_file s3-nan s3gen.pt nan data/2
expect_error s3gen-nan-weight "S3 speech tokenizer: non-finite activation at frame 0 \(NaN or infinite weights\?\)" "${CLONE[@]}" "$SCRATCH/s3-nan"
no_file s3gen "$O"

# VibeVoice-Realtime presets (bf16 storages, allow-listed transformers data classes)
SPK=("$VOCIS" speak --model "$RT" --text "Hello there." -q -o "$W")
preset() { local f=$SCRATCH/$1.pt; shift; "$PTEDIT" "$P" "$f" "$@" || { echo "FAIL: ptedit preset $*"; exit 1; }; }
preset rt-opcode replace data.pkl '\x80\x02}' '\x80\x02\xfe}'
expect_error rt-unknown-opcode "rt-opcode.pt:.*unknown opcode 0xfe" "${SPK[@]}" --voice "$SCRATCH/rt-opcode.pt"
preset rt-global replace data.pkl 'transformers.cache_utils\x0aDynamicCache' 'transformers.cache_utils\x0aEvilCache'
expect_error rt-unknown-global "rt-global.pt:.*'transformers.cache_utils.EvilCache' is not allowed" \
    "${SPK[@]}" --voice "$SCRATCH/rt-global.pt"
preset rt-dtype replace data.pkl 'torch\x0aBFloat16Storage' 'torch\x0aShortStorage'
expect_error rt-wrong-dtype "rt-dtype.pt: lm last_hidden_state is I16 \[1, 14, 64\], expected float" "${SPK[@]}" --voice "$SCRATCH/rt-dtype.pt"
preset rt-numel replace data.pkl 'cpuq\x07M\x80\x03t' 'cpuq\x07J\xff\xff\xff\x7ft'
expect_error rt-huge-storage "rt-numel.pt: storage .* has 1792 bytes but 2147483647 x BF16" \
    "${SPK[@]}" --voice "$SCRATCH/rt-numel.pt"
preset rt-shape replace data.pkl 'QK\x00K\x01K\x0eK@\x87' 'QK\x00K\x01K\x0eK\x20\x87'
expect_error rt-wrong-shape "rt-shape.pt: .*lm.*(hidden|shape)" "${SPK[@]}" --voice "$SCRATCH/rt-shape.pt"
preset rt-cut cut data.pkl 300
expect_error rt-truncated-pickle "rt-cut.pt:.*data.pkl" "${SPK[@]}" --voice "$SCRATCH/rt-cut.pt"
preset rt-nan nan data/0
expect_error rt-nan "rt-nan.pt: .*non-finite" "${SPK[@]}" --voice "$SCRATCH/rt-nan.pt"
expect_error rt-nan-convert "rt-nan.pt: .*non-finite" "$VOCIS" voice create --from-preset "$SCRATCH/rt-nan.pt" \
    --model "$RT" -o "$SCRATCH/rt.voice"
no_file presets "$W" "$SCRATCH/rt.voice"
finish
