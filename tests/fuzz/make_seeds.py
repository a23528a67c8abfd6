#!/usr/bin/env python3
"""Writes small seed corpora for the fuzz targets into OUT/{safetensors,pickle,torchzip}.

Usage: python3 tests/fuzz/make_seeds.py OUT   (run from the repository root)
Needs only the standard library; with torch installed it adds a small conds-shaped torch.save file.
"""
import io, json, os, struct, sys, zipfile

out = sys.argv[1] if len(sys.argv) > 1 else "fuzz-corpus"
for d in ("safetensors", "pickle", "torchzip"):
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
print("seeds written to", out)
