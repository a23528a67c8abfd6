#!/usr/bin/env python3
"""Writes small seed corpora for the fuzz targets into OUT/<target>, where <target> is
safetensors, pickle, torchzip, tokenizer_json, tokenize, vv_config, vv_script or audio,
and libFuzzer dictionaries OUT/<target>.dict for the text formats (pass with -dict=...).

Usage: python3 tests/fuzz/make_seeds.py OUT   (run from the repository root)
Needs only the standard library; with torch installed it adds a small conds-shaped torch.save file,
and with libsndfile loadable through ctypes FLAC / Ogg / CAF / ... audio seeds.
"""
import ctypes, ctypes.util, io, json, math, os, shutil, struct, sys, wave, zipfile

out = sys.argv[1] if len(sys.argv) > 1 else "fuzz-corpus"
for d in ("safetensors", "pickle", "torchzip", "tokenizer_json", "tokenize", "vv_config", "vv_script", "audio"):
    os.makedirs(os.path.join(out, d), exist_ok=True)

def st(tensors, meta=None):
    hdr, data = {}, b""
    if meta:
        hdr["__metadata__"] = meta
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data

seeds = {
    "small": st({"a": ("F32", [2, 3], struct.pack("<6f", *range(6))),
                 "ids": ("I64", [3], struct.pack("<3q", 1, 2, 3)),
                 "h": ("BF16", [2], b"\x80\x3f\x00\x40")}, {"format": "pt"}),
    "empty": st({}),
    "scalar": st({"s": ("F16", [], b"\x00\x3c"), "z": ("I32", [0, 4], b"")}),
}
for k, v in seeds.items():
    open(os.path.join(out, "safetensors", k), "wb").write(v)

conds = "tests/data/chatterbox/ckpt/conds.pt"
with zipfile.ZipFile(conds) as z:
    open(os.path.join(out, "pickle", "conds_data.pkl"), "wb").write(z.read("conds/data.pkl"))
open(os.path.join(out, "pickle", "small"), "wb").write(
    b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01]q\x02(K\x01M\x00\x01J\xff\xff\xff\xffG?\xf8\x00\x00\x00\x00\x00\x00"
    b"\x88\x89Ne\x8c\x01bh\x02h\x02\x86\x94u.")

try:
    import torch
    buf = io.BytesIO()
    torch.save({"t3": {"speaker_emb": torch.rand(1, 256), "clap_emb": None,
                       "cond_prompt_speech_tokens": torch.arange(5).view(1, 5), "cond_prompt_speech_emb": None,
                       "emotion_adv": torch.full((1, 1, 1), 0.5)},
                "gen": {"prompt_token": torch.arange(3).view(1, 3), "prompt_token_len": torch.tensor([3]),
                        "prompt_feat": torch.rand(1, 80, 6).transpose(1, 2), "prompt_feat_len": None,
                        "embedding": torch.rand(1, 192)}}, buf)
    open(os.path.join(out, "torchzip", "mini_conds.pt"), "wb").write(buf.getvalue())
except ImportError:
    pass
open(os.path.join(out, "torchzip", "conds.pt"), "wb").write(open(conds, "rb").read())

def tensor_pkl(name, key, numel, size, stride):
    """One state-dict entry: name -> _rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict())."""
    u = lambda s: b"X" + struct.pack("<I", len(s)) + s.encode()
    ints = lambda t: b"".join(b"K" + bytes([x]) for x in t) + {1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(t)]
    return (u(name) + b"ctorch._utils\n_rebuild_tensor_v2\n((" + u("storage") + b"ctorch\nFloatStorage\n" +
            u(key) + u("cpu") + b"K" + bytes([numel]) + b"tQK\x00" + ints(size) + ints(stride) +
            b"\x89ccollections\nOrderedDict\n)Rt" + b"R")

# a two-tensor state dict in the layout of s3gen.pt / ve.pt (torch.save(module.state_dict()))
with zipfile.ZipFile(os.path.join(out, "torchzip", "mini_state_dict.pt"), "w", zipfile.ZIP_STORED) as z:
    z.writestr("mini/data.pkl", b"\x80\x02}(" + tensor_pkl("w", "0", 6, (2, 3), (3, 1)) +
               tensor_pkl("b", "1", 3, (3,), (1,)) + b"u.")
    z.writestr("mini/byteorder", b"little")
    z.writestr("mini/data/0", struct.pack("<6f", *range(6)))
    z.writestr("mini/data/1", struct.pack("<3f", 1, 2, 3))
    z.writestr("mini/version", b"3\n")

def put(d, name, data):
    open(os.path.join(out, d, name), "wb").write(data if isinstance(data, bytes) else data.encode())

# tokenizer.json: the test tokenizers, the crafted ones, and small variants
for src in ("tests/data/chatterbox/ckpt/tokenizer.json", "tests/data/vibevoice/model/tokenizer.json"):
    shutil.copy(src, os.path.join(out, "tokenizer_json", src.split("/")[2] + ".json"))
for f in sorted(os.listdir("tests/data/text")):
    if f.endswith(".json"):
        shutil.copy(os.path.join("tests/data/text", f), os.path.join(out, "tokenizer_json", f))
mini = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<0x41>": 3, "[UNK]": 4, "\u00e9": 5},
                  "merges": ["a b"], "unk_token": "[UNK]", "fuse_unk": True, "byte_fallback": True},
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "NFD"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"String": "b"}, "behavior": "Removed", "invert": False},
            {"type": "Whitespace"}]},
        "added_tokens": [{"id": 6, "content": "\ufb01x", "single_word": True, "lstrip": True, "rstrip": False,
                          "normalized": True, "special": False},
                         {"id": 7, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": True,
                          "normalized": False, "special": True}]}
put("tokenizer_json", "mini.json", json.dumps(mini))

# text for the fixed tokenizers
for i, t in enumerate(["Hello world. It's 12:30, isn't it?", "  tab\tand\nnewline  ",
                       "\u201cQuoted\u201d \u2014 dash\u2026 e\u0301 \ufb01 \u65e5\u672c\u8a9e \U0001F44D",
                       "<|endoftext|>Speaker 1: <|vision_pad|>[SPACE][START]x[STOP]", "a" * 300, ""]):
    put("tokenize", "t%d" % i, t)

# configs: VibeVoice config.json / preprocessor_config.json, Chatterbox overrides
for src in ("tests/data/vibevoice/model/config.json", "tests/data/vibevoice/model/preprocessor_config.json",
            "tests/data/chatterbox/ckpt/chatterbox_tiny_config.json"):
    shutil.copy(src, os.path.join(out, "vv_config", os.path.basename(src)))
put("vv_config", "cb_override.json", json.dumps(
    {"dims": {"t3": {"llama": {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16}}},
     "llama_fixed": {"rope_theta": 10000, "rope_scaling": {"rope_type": "llama3", "factor": 8}},
     "t3_hp": {"start_text_token": 255}}))

# VibeVoice scripts
for i, t in enumerate(["Speaker 1: Hello there.\nSpeaker 2: Hi! How are you?\n",
                       "speaker 0 : first\n\n  SPEAKER\u00a0\u0663: arabic-indic digit\nnot a speaker line\n",
                       "Speaker 1: one\ncontinued line\nSpeaker 3:\nSpeaker 2: it\u2019s\n",
                       "Speaker 7: x\nSpeaker 5: y\nSpeaker 1: z\nSpeaker 2: w\nSpeaker 9: v\n"]):
    put("vv_script", "s%d" % i, t)

# audio: WAV via the standard library, other formats through libsndfile when it loads
def wav(name, ch, width, rate, n):
    b = io.BytesIO()
    with wave.open(b, "wb") as w:
        w.setnchannels(ch), w.setsampwidth(width), w.setframerate(rate)
        frames = bytearray()
        for i in range(n):
            v = math.sin(i * 0.05)
            for c in range(ch):
                if width == 1:
                    frames += bytes([int(128 + 100 * v)])
                else:
                    frames += int(3000 * v * (c + 1)).to_bytes(width, "little", signed=True)
        w.writeframes(bytes(frames))
    put("audio", name, b.getvalue())

wav("mono16_16k.wav", 1, 2, 16000, 200)
wav("stereo8_44k.wav", 2, 1, 44100, 150)
wav("mono24_24k.wav", 1, 3, 24000, 100)
wav("tri16_8k.wav", 3, 2, 8000, 64)

class SF_INFO(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]

lib = ctypes.util.find_library("sndfile")
if lib:
    sf = ctypes.CDLL(lib)
    sf.sf_open.restype = ctypes.c_void_p
    sf.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SF_INFO)]
    sf.sf_writef_float.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64]
    sf.sf_close.argtypes = [ctypes.c_void_p]
    SFM_WRITE = 0x20
    formats = {  # major | subtype
        "flac16.flac": 0x170000 | 0x0002, "vorbis.ogg": 0x200000 | 0x0060, "opus.ogg": 0x200000 | 0x0064,
        "caf_alac.caf": 0x180000 | 0x0070, "w64_f32.w64": 0x0B0000 | 0x0006, "aiff_s24.aiff": 0x020000 | 0x0003,
        "au_ulaw.au": 0x030000 | 0x0010, "wav_ima.wav": 0x010000 | 0x0012, "wav_gsm.wav": 0x010000 | 0x0020,
        "nist_s16.nist": 0x070000 | 0x0002, "voc_u8.voc": 0x080000 | 0x0005, "mat5_f64.mat": 0x0D0000 | 0x0007,
        "rf64_s16.rf64": 0x220000 | 0x0002, "mp3.mp3": 0x230000 | 0x0082,
    }
    for name, fmt in formats.items():
        for rate, ch in ((16000, 1), (48000, 2)):
            path = os.path.join(out, "audio", "%d_%d_%s" % (rate, ch, name))
            info = SF_INFO(0, rate, ch, fmt, 0, 0)
            h = sf.sf_open(path.encode(), SFM_WRITE, ctypes.byref(info))
            if not h:  # format not built into this libsndfile
                if os.path.exists(path):
                    os.remove(path)
                continue
            n = 480
            buf = (ctypes.c_float * (n * ch))(*[0.4 * math.sin(i * 0.03) for i in range(n * ch)])
            sf.sf_writef_float(h, buf, n)
            sf.sf_close(h)
            if os.path.getsize(path) == 0:
                os.remove(path)

# dictionaries: JSON keys of the seed files, type names, separators
def dict_entry(tok):
    b = tok.encode() if isinstance(tok, str) else tok
    return '"' + "".join(chr(c) if 0x20 <= c < 0x7F and c not in (0x22, 0x5C) else "\\x%02X" % c
                         for c in b) + '"'

def json_keys(o, acc, skip=("vocab", "merges")):
    if isinstance(o, dict):
        for k, v in o.items():
            acc.add('"%s":' % k)
            if isinstance(v, str) and len(v) < 40:
                acc.add('"%s"' % v)
            if k not in skip:
                json_keys(v, acc)
    elif isinstance(o, list):
        for v in o:
            json_keys(v, acc)

def write_dict(name, toks):
    with open(os.path.join(out, name + ".dict"), "w") as f:
        for t in sorted(set(toks)):
            f.write(dict_entry(t) + "\n")

common = ["null", "true", "false", "{}", "[]", "[[", "]]", ",", ":", "-1", "0", "1e309", "0.5", "2147483648",
          "\\u0000", "\\ud800", "\\u00e9"]
toks = set(common)
for f in os.listdir(os.path.join(out, "tokenizer_json")):
    json_keys(json.load(open(os.path.join(out, "tokenizer_json", f))), toks)
toks |= {'"BPE"', '"NFC"', '"NFD"', '"NFKC"', '"NFKD"', '"Sequence"', '"Whitespace"', '"Split"', '"ByteLevel"',
         '"Regex"', '"String"', '"Isolated"', '"Removed"', '"MergedWithPrevious"', '"(?i:a|b)+"', '"\\\\p{L}+"',
         '"<0x41>"'}
write_dict("tokenizer_json", toks)
toks = set(common) | {'"1-1-2"', '"3-3-3-8"', "[8,5,5,4,2,2]", "[1]", '"gaussian"', '"fix"', '"none"', '"LN"',
                      '"RMSNorm"', '"vibevoice_streaming"', '"qwen2"', '"llama3"', "3200", "24000"}
for f in os.listdir(os.path.join(out, "vv_config")):
    json_keys(json.load(open(os.path.join(out, "vv_config", f))), toks)
write_dict("vv_config", toks)
write_dict("vv_script", ["Speaker ", "speaker", "SPEAKER", ":", "\n", " ", "\t", "\r", "\u00a0", "\u2028",
                         "\u0663", "\uff11", "\u017f", "\u212a", "\u2019", "999999999999", "0", "1"])
write_dict("tokenize", ["[SPACE]", "[START]", "[STOP]", "[UNK]", "<|endoftext|>", "<|vision_pad|>", "...", "\u2026",
                        "\u2014", "\u201c", " - ", " ,", ";", "'s", "'ll", "\r\n", "\u00a0", "\u3000", "e\u0301",
                        "\ufb01", "\u00df", "\u01c5"])

print("seeds written to", out)
