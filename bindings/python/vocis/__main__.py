"""python3 -m vocis COMMAND ...: the vocis command line over the Python
binding (speak, voice create, tokenize, tokens, --version), with the options
and output of the native `vocis` tool."""
import argparse
import os
import sys

import vocis
from vocis import KNOBS

MAX_TEXT_BYTES = 16 << 20


def _pcm16(x):
    """float -> s16le as the native tool's raw stdout (libsndfile's clipping
    float -> PCM16: scale to 32 bits, round, clip, keep the top 16 bits)."""
    import numpy as np
    v = np.nan_to_num(x.astype(np.float32), nan=0.0) * np.float32(2147483648.0)
    q = np.clip(np.rint(v.astype(np.float64)), -2147483648.0, 2147483647.0).astype(np.int64)
    return (q >> 16).astype("<i2").tobytes()


def _parser_common(p):
    p.add_argument("--model", "-m", required=True, help="model folder")
    p.add_argument("--config", help="hyper-parameter override file")
    p.add_argument("--threads", type=int, default=0, help="worker threads (default: physical cores)")
    p.add_argument("--precision", choices=sorted(vocis._lib.PRECISIONS), help="weight precision policy")


def _knob_args(p, names):
    for name in names:
        _, kind, _, _, what = KNOBS[name]
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            p.add_argument(flag, action="store_true", default=None, help=what)
        else:
            p.add_argument(flag, type=kind, help=what)


def _knobs(ns, names):
    return {n: getattr(ns, n) for n in names if getattr(ns, n) is not None}


def _read_text(ns, cmd):
    if ns.text is not None and ns.text_file is not None:
        raise SystemExit("vocis %s: give --text or --text-file, not both" % cmd)
    if ns.text is not None:
        return ns.text
    try:
        if ns.text_file is not None:
            with open(ns.text_file, "rb") as f:
                data = f.read(MAX_TEXT_BYTES + 1)
        else:
            data = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
    except OSError as e:
        raise SystemExit("vocis %s: %s: cannot open: %s" % (cmd, ns.text_file, e.strerror))
    if len(data) > MAX_TEXT_BYTES:
        raise SystemExit("vocis %s: %s: text larger than 16 MiB" % (cmd, ns.text_file or "stdin"))
    return data.decode("utf-8", "replace")


def _open(ns):
    return vocis.Model(ns.model, precision=ns.precision, threads=ns.threads, config=ns.config)


SPEAK_KNOBS = ["greedy", "temperature", "cfg_weight", "exaggeration", "min_p", "top_p", "top_k",
               "repetition_penalty", "max_tokens", "language", "cfm_steps", "cfg_scale", "diffusion_steps",
               "max_new_tokens", "max_seconds", "chunk_chars"]


def cmd_speak(argv):
    p = argparse.ArgumentParser(prog="python3 -m vocis speak",
                                description="text to 24 kHz speech (as `vocis speak`)")
    _parser_common(p)
    p.add_argument("--text", help="text to speak (else --text-file, else stdin)")
    p.add_argument("--text-file", "--script", dest="text_file", help="read the text (VibeVoice: the script)")
    p.add_argument("--out", "-o", required=True, help="output file, or - for raw PCM on stdout")
    p.add_argument("--format", default="wav", choices=["wav", "wav16", "f32", "flac", "ogg"])
    p.add_argument("--voice", action="append", default=[], help="voice file / conds.pt / recording (repeatable)")
    p.add_argument("--seed", type=int, help="reproduce torch.manual_seed(N) (default: random)")
    _knob_args(p, SPEAK_KNOBS)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    ns = p.parse_args(argv)
    raw = ns.out == "-"
    if raw and ns.format in ("flac", "ogg"):
        raise SystemExit("vocis speak: -o - writes raw PCM: use --format wav (s16le) or f32 (f32le)")
    text = _read_text(ns, "speak")
    tty = sys.stderr.isatty()

    def progress(pr):
        if not ns.quiet and pr.stage != "t3" and pr.stage != "vibevoice" and pr.step == 0:
            chunk = "[%d/%d] " % (pr.chunk + 1, pr.n_chunks) if pr.n_chunks > 1 else ""
            sys.stderr.write(("\rvocis speak: %s%s...            " if tty else "vocis speak: %s%s...\n")
                             % (chunk, pr.stage))

    def audio(x, sr):
        if raw:
            sys.stdout.buffer.write(x.astype("<f4").tobytes() if ns.format == "f32" else _pcm16(x))
            sys.stdout.buffer.flush()

    try:
        with _open(ns) as m:
            voice = ns.voice if len(ns.voice) > 1 else (ns.voice[0] if ns.voice else None)
            if isinstance(voice, str) or voice is None and m.kind == "chatterbox":
                voice = m.load_voice(voice)
                if voice.warning and not ns.quiet:
                    sys.stderr.write("vocis speak: warning: %s\n" % voice.warning)
            x, sr = m.speak(text, voice=voice, seed=ns.seed, on_progress=progress, on_audio=audio,
                            **_knobs(ns, SPEAK_KNOBS))
            if not raw:
                m.save_audio(ns.out, x, sr, ns.format)
                if not ns.quiet:
                    sys.stderr.write("vocis speak: wrote %s (%.2f s at %d Hz)\n" % (ns.out, len(x) / sr, sr))
    except vocis.VocisError as e:
        raise SystemExit("vocis speak: %s" % e)
    return 0


def cmd_voice(argv):
    if not argv or argv[0] != "create":
        raise SystemExit("usage: python3 -m vocis voice create --model DIR REF_AUDIO -o NAME.voice [--exaggeration F]")
    p = argparse.ArgumentParser(prog="python3 -m vocis voice create",
                                description="clone a voice from a recording (as `vocis voice create`)")
    _parser_common(p)
    p.add_argument("audio", help="reference recording")
    p.add_argument("--out", "-o", required=True, help="voice file to write")
    p.add_argument("--exaggeration", type=float, help="emotion exaggeration stored in the voice (0.5)")
    ns = p.parse_args(argv[1:])
    try:
        with _open(ns) as m, m.clone_voice(ns.audio, exaggeration=ns.exaggeration) as v:
            if v.warning:
                sys.stderr.write("vocis voice: warning: %s\n" % v.warning)
            v.save(ns.out)
    except vocis.VocisError as e:
        raise SystemExit("vocis voice: %s" % e)
    return 0


def cmd_tokenize(argv):
    p = argparse.ArgumentParser(prog="python3 -m vocis tokenize", description="the model's text token ids")
    _parser_common(p)
    p.add_argument("--text", "-t", required=True, help="text to tokenize (UTF-8)")
    p.add_argument("--language", "--lang", help="Chatterbox-Multilingual: language code (e.g. fr)")
    ns = p.parse_args(argv)
    try:
        with _open(ns) as m:
            print(" ".join(str(i) for i in m.tokenize(ns.text, language=ns.language)))
    except vocis.VocisError as e:
        raise SystemExit("vocis tokenize: %s" % e)
    return 0


T3_KNOBS = ["greedy", "temperature", "cfg_weight", "exaggeration", "min_p", "top_p", "top_k",
            "repetition_penalty", "max_tokens", "language"]


def cmd_tokens(argv):
    p = argparse.ArgumentParser(prog="python3 -m vocis tokens", description="Chatterbox T3 speech tokens")
    _parser_common(p)
    p.add_argument("--text", required=True)
    p.add_argument("--t3-cond", "--voice", dest="voice", help="voice / conditioning file")
    p.add_argument("--seed", type=int)
    _knob_args(p, T3_KNOBS)
    ns = p.parse_args(argv)
    try:
        with _open(ns) as m:
            print(" ".join(str(int(t)) for t in m.tokens(ns.text, voice=ns.voice, seed=ns.seed,
                                                         **_knobs(ns, T3_KNOBS))))
    except vocis.VocisError as e:
        raise SystemExit("vocis tokens: %s" % e)
    return 0


COMMANDS = {"speak": cmd_speak, "voice": cmd_voice, "tokenize": cmd_tokenize, "tokens": cmd_tokens}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        out = sys.stdout if argv else sys.stderr
        out.write("usage: python3 -m vocis COMMAND [options]   (COMMAND --help for details)\n\ncommands: %s\n"
                  % ", ".join(COMMANDS))
        return 0 if argv else 2
    if argv[0] == "--version":
        try:
            print(vocis.version_info())
        except ImportError as e:
            raise SystemExit("vocis: %s" % e)
        return 0
    if argv[0] not in COMMANDS:
        sys.stderr.write("vocis: unknown command '%s' (see --help)\n" % argv[0])
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except ImportError as e:  # libvocis not found
        raise SystemExit("vocis: %s" % e)


if __name__ == "__main__":
    sys.exit(main())
