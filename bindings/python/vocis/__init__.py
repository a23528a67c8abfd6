"""vocis: native text-to-speech (Chatterbox, VibeVoice) from Python.

A ctypes binding of libvocis (no compiled extension). The library is taken
from an explicit path (vocis.load_library(path) or $VOCIS_LIBRARY), else the
build folder of the source tree this package is in, else the prefix it was
installed into, else the system's library path.

    import vocis
    with vocis.Model("chatterbox") as m:
        samples, sr = m.speak("Hello from vocis.", seed=42)     # numpy float32, 24000
        me = m.clone_voice("me.wav")
        for chunk, sr in m.stream("A long text ...", voice=me):  # audio as it is final
            ...

Every failure raises VocisError (ArgumentError for bad arguments) carrying
vocis's one-line message.
"""
import ctypes
import math
import operator
import os
import queue
import threading
import warnings
from collections import namedtuple

from . import _lib

__all__ = ["Model", "Voice", "VocisError", "ArgumentError", "Cancelled", "VocisWarning", "Progress", "load_library",
           "version", "version_info", "KNOBS"]

Progress = namedtuple("Progress", "stage chunk n_chunks step n_steps")
Progress.__doc__ = """Where a synthesis is: stage ("t3", "s3gen", "hift", "vibevoice", ...), the
0-based text chunk of n_chunks, and step of n_steps within the stage."""


class VocisError(RuntimeError):
    """A vocis call failed. .status is the vocis_status code, .status_name its
    name ("io", "format", ...), str(e) vocis's one-line message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message

    @property
    def status_name(self):
        names = ["ok", "io", "format", "shape", "argument", "out of memory", "unsupported", "internal",
                 "cancelled", "invalid input"]
        return names[self.status] if 0 <= self.status < len(names) else "unknown"


class ArgumentError(VocisError, ValueError):
    """An invalid argument or option value (VOCIS_E_ARG)."""


class Cancelled(VocisError):
    """A callback asked to stop (VOCIS_E_CANCELLED)."""


class VocisWarning(UserWarning):
    """An advisory of a synthesis (vocis_speak_options.on_warning): a script line not used,
    a voice cut to 600 s, characters the tokenizer lacks, ..."""


def _error(status, message):
    cls = ArgumentError if status == _lib.E_ARG else Cancelled if status == _lib.E_CANCELLED else VocisError
    return cls(status, message)


def _argerr(fmt, *a):
    return ArgumentError(_lib.E_ARG, fmt % a if a else fmt)


def load_library(path=None):
    """Load libvocis now (path: the file, or a folder holding libvocis.so);
    returns the path it was loaded from. Without a path the usual search
    order applies; calling it is optional (the first Model loads it)."""
    _lib.load(path)
    return _lib.loaded_path()


def version():
    """libvocis's version string ("0.3.0")."""
    return _lib.load().vocis_version().decode()


def version_info():
    """One line: version, CPU features and kernel level in use, OpenBLAS core, threads."""
    lib = _lib.load()
    f = getattr(lib, "vocis_version_info", None)
    return f().decode() if f else "vocis " + version()


def __getattr__(name):  # vocis.__version__ is the loaded library's version
    if name == "__version__":
        return version()
    raise AttributeError("module 'vocis' has no attribute %r" % name)


def _cstr(s, what):
    """str / bytes / PathLike -> NUL-free bytes for a char* argument."""
    if isinstance(s, str):
        b = s.encode("utf-8")
    elif isinstance(s, bytes):
        b = s
    elif isinstance(s, os.PathLike):
        b = os.fsencode(s)
    else:
        raise TypeError("%s must be a str, got %s" % (what, type(s).__name__))
    if b"\0" in b:
        raise _argerr("%s contains a NUL character", what)
    return b


def _path(p, what="path"):
    if isinstance(p, str):
        p = os.fsencode(p)
    return _cstr(p, what)


# Synthesis knobs: keyword -> (struct field path, kind, lo, hi, what). The
# names and ranges are those of `vocis speak` (--cfg-weight -> cfg_weight).
KNOBS = {
    "temperature": ("t3.temperature", float, 1e-6, 100, "sampling temperature (0.8)"),
    "cfg_weight": ("t3.cfg_weight", float, 0, 100, "T3 classifier-free guidance weight (0.5)"),
    "exaggeration": ("t3.exaggeration", float, -100, 100, "emotion exaggeration (default: the voice's)"),
    "min_p": ("t3.min_p", float, 0, 1, "min-p filter (0.05)"),
    "top_p": ("t3.top_p", float, 0, 1, "top-p filter (default: the model's; 1.0 = off)"),
    "top_k": ("t3.top_k", int, -1, 1000000, "Turbo/Nano top-k filter (-1 = the model's, 0 = off)"),
    "language": ("t3.language", str, 0, 0, "Chatterbox-Multilingual: language code (e.g. fr)"),
    "repetition_penalty": ("t3.repetition_penalty", float, 1e-3, 100, "repetition penalty (1.2)"),
    "max_tokens": ("t3.max_new_tokens", int, 1, 100000, "max speech tokens per chunk (1000 = 40 s)"),
    "greedy": ("t3.greedy", bool, 0, 1, "T3 argmax instead of sampling"),
    "speculate": ("t3.speculate", int, -1, 16,
                  "T3 self-speculative decoding: 0 = auto, -1 = off, N proposals per round (same tokens)"),
    "cfm_steps": ("cfm_steps", int, 1, 1000, "flow-matching Euler steps (10)"),
    "cfg_scale": ("vv.cfg_scale", float, 0, 100, "VibeVoice: diffusion guidance (1.3)"),
    "diffusion_steps": ("vv.diffusion_steps", int, 1, 999, "VibeVoice: DPM-Solver steps per frame (10)"),
    "max_new_tokens": ("vv.max_new_tokens", int, 0, 100000000, "VibeVoice: token cap (0 = upstream's 2 x prompt)"),
    "max_seconds": ("vv.max_seconds", float, 0, 1e7, "VibeVoice: stop after this much audio (0 = no limit)"),
    "split_turns": ("vv.split_turns", bool, 0, 1,
                    "VibeVoice: speak a script too long for the context in sessions split at speaker turns"),
    "chunk_chars": ("max_chunk_chars", int, 0, 1000000, "split longer text into sentence chunks (300; 0 = never)"),
    "crossfade_ms": ("crossfade_ms", float, 0, 1000, "overlap when joining chunks (40 ms)"),
    "stream_tokens": ("stream_tokens", int, -1, 1000,
                      "Chatterbox: audio while T3 generates, first after N tokens (0 = off, -1 = the model's default)"),
}
_T3_KNOBS = ("temperature", "cfg_weight", "exaggeration", "min_p", "top_p", "top_k", "repetition_penalty",
             "max_tokens", "greedy", "language", "speculate")


def _knob_value(name, v, kind, lo, hi):
    if kind is str:
        return _cstr(v, name)
    if kind is bool:
        if not isinstance(v, (bool, int)) or isinstance(v, float):
            raise TypeError("%s must be a bool, got %s" % (name, type(v).__name__))
        return 1 if v else 0
    if kind is int:
        try:
            x = operator.index(v)
        except TypeError:
            raise TypeError("%s must be an integer, got %s" % (name, type(v).__name__)) from None
    else:
        if isinstance(v, (str, bytes)) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise TypeError("%s must be a number, got %s" % (name, type(v).__name__))
        x = float(v)
    if not (lo <= x <= hi):
        raise _argerr("%s must be in [%g, %g] (got %s)", name, lo, hi, v)
    return x


def _apply_knobs(opts, knobs, allowed, fname):
    for name, v in knobs.items():
        if name not in allowed:
            raise TypeError("%s() got an unexpected keyword argument %r" % (fname, name))
        if name in ("exaggeration", "language") and v is None:
            continue
        path, kind, lo, hi, _ = KNOBS[name]
        x = _knob_value(name, v, kind, lo, hi)
        obj = opts
        parts = path.split(".")
        if parts[0] == "t3" and isinstance(opts, _lib.T3Options):
            parts = parts[1:]
        for p in parts[:-1]:
            obj = getattr(obj, p)
        setattr(obj, parts[-1], x)


def _seed(seed):
    if seed is None:
        return -1
    try:
        s = operator.index(seed)
    except TypeError:
        raise TypeError("seed must be an integer, got %s" % type(seed).__name__) from None
    if not 0 <= s < 2 ** 63:
        raise _argerr("seed must be in [0, 2^63) (got %d)", s)
    return s


def _to_array(ptr, n):
    import numpy as np
    if not n:
        return np.zeros(0, dtype=np.float32)
    return np.ctypeslib.as_array(ptr, shape=(n,)).astype(np.float32, copy=True)


class _Callbacks:
    """The C callbacks of one call. A Python exception raised inside one
    cancels the call and is re-raised once the C call has returned."""

    def __init__(self, on_progress=None, on_audio=None, cancel=None):
        self.exc = None
        self.cancel = cancel
        self.user_progress, self.user_audio = on_progress, on_audio
        self.c_progress = _lib.ON_PROGRESS(self._progress) if on_progress or cancel else _lib.ON_PROGRESS()
        self.c_audio = _lib.ON_AUDIO(self._audio) if on_audio else _lib.ON_AUDIO()
        self.c_warning = _lib.ON_WARNING(self._warning)

    def _stop(self):
        return self.exc is not None or (self.cancel is not None and self.cancel.is_set())

    def _progress(self, user, p):
        if self._stop():
            return 1
        try:
            if self.user_progress:
                c = p.contents
                if self.user_progress(Progress(c.stage.decode() if c.stage else "", c.chunk, c.n_chunks, c.step,
                                               c.n_steps)):
                    return 1
        except BaseException as e:  # noqa: B902 - re-raised after the C call
            self.exc = e
            return 1
        return 0

    def _audio(self, user, samples, n, sr):
        if self._stop():
            return 1
        try:
            if self.user_audio(_to_array(samples, n), sr):
                return 1
        except BaseException as e:  # noqa: B902
            self.exc = e
            return 1
        return 0

    def _warning(self, user, msg):
        try:
            warnings.warn(msg.decode("utf-8", "replace"), VocisWarning, stacklevel=2)
        except BaseException as e:  # noqa: B902 - e.g. warnings turned into errors: re-raised after the call
            if self.exc is None:
                self.exc = e

    def install(self, opts):
        opts.on_progress = self.c_progress
        opts.on_audio = self.c_audio
        opts.on_warning = self.c_warning


class Voice:
    """A speaker conditioning (vocis_voice): from Model.load_voice or
    Model.clone_voice. Free it with close() or a with-block (or leave it to
    the garbage collector)."""

    def __init__(self, model, handle):
        self._model = model
        self._h = handle

    @property
    def handle(self):
        if not self._h:
            raise _argerr("voice is closed")
        return self._h

    @property
    def warning(self):
        """An advisory about how the voice was made, or ""."""
        return _lib.load().vocis_voice_warning(self.handle).decode("utf-8", "replace")

    def save(self, path):
        """Write it as a vocis voice file (safetensors)."""
        m = self._model
        with m._call():
            m._check(m._libh.vocis_voice_save(m._h, self.handle, _path(path)))

    def close(self):
        h, self._h = self._h, None
        if h and _lib._lib is not None:
            _lib._lib.vocis_voice_free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Model:
    """An open model folder (Chatterbox or VibeVoice, the Hugging Face layout).

    Model(path, precision=None, threads=0, config=None): precision is one of
    "exact" (upstream's arithmetic), "bf16", "q8" or "default"/None (the
    library's default); threads 0 = physical cores; config = a
    hyper-parameter override file. Close it with close() or a with-block.
    One call at a time per model (calls from other threads wait)."""

    def __init__(self, path, precision=None, threads=0, config=None):
        self._h = None
        self._libh = _lib.load()
        self._lock = threading.Lock()
        self._owner = None
        opts = _lib.OpenOptions()
        opts.threads = self._threads = _knob_value("threads", threads, int, 0, 1024)
        cfg = _path(config, "config") if config is not None else None
        opts.config_path = cfg
        if precision is not None:
            if not isinstance(precision, str) or precision.lower() not in _lib.PRECISIONS:
                raise _argerr("precision must be one of %s (got %r)", ", ".join(_lib.PRECISIONS), precision)
            opts.precision = _lib.PRECISIONS[precision.lower()]
        h = ctypes.c_void_p()
        st = self._libh.vocis_model_open(_path(path, "model path"), ctypes.byref(opts), ctypes.byref(h))
        if not h.value:
            raise VocisError(_lib.E_NOMEM, "out of memory")
        self._h = h
        if st != _lib.OK:
            msg = self._errmsg()
            self.close()
            raise _error(st, msg)

    # ---- handle management --------------------------------------------------

    def _errmsg(self):
        return self._libh.vocis_errmsg(self._h).decode("utf-8", "replace")

    def _check(self, st):
        if st != _lib.OK:
            raise _error(st, self._errmsg())

    def _call(self):
        model = self

        class _Guard:
            def __enter__(self):
                me = threading.get_ident()
                if model._owner == me:
                    raise VocisError(_lib.E_ARG, "the model was called from inside one of its own callbacks")
                model._lock.acquire()
                model._owner = me
                if not model._h:
                    model._owner = None
                    model._lock.release()
                    raise VocisError(_lib.E_ARG, "model is closed")

            def __exit__(self, *exc):
                model._owner = None
                model._lock.release()

        return _Guard()

    @property
    def closed(self):
        return not self._h

    def close(self):
        """Free the model (idempotent). Voices made from it stay usable for
        other models but can no longer be saved through it."""
        if not self._h:
            return
        if self._owner == threading.get_ident():
            raise VocisError(_lib.E_ARG, "the model cannot be closed from inside one of its own callbacks")
        with self._lock:
            h, self._h = self._h, None
            if h and _lib._lib is not None:
                self._libh.vocis_model_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<vocis.Model %s%s>" % (self.kind or "?", " closed" if self.closed else "")

    # ---- properties -----------------------------------------------------------

    @property
    def kind(self):
        """"chatterbox" or "vibevoice"."""
        return self._libh.vocis_model_kind(self._h).decode() if self._h else ""

    @property
    def threads(self):
        """Worker threads as set (0 = physical cores); assign to change."""
        return self._threads

    @threads.setter
    def threads(self, n):
        n = _knob_value("threads", n, int, 0, 1024)
        with self._call():
            self._libh.vocis_model_set_threads(self._h, n)
        self._threads = n

    # ---- text -------------------------------------------------------------------

    def tokenize(self, text, language=None):
        """The model's text token ids for text (start/stop tokens included).
        language: Chatterbox-Multilingual's code (required there, e.g. "fr");
        the other models take None, "" or "en"."""
        ids = ctypes.POINTER(ctypes.c_int32)()
        n = ctypes.c_size_t()
        lang = _cstr(language, "language") if language is not None else None
        with self._call():
            self._check(self._libh.vocis_tokenize_language(self._h, _cstr(text, "text"), lang, ctypes.byref(ids),
                                                           ctypes.byref(n)))
        try:
            return [ids[i] for i in range(n.value)]
        finally:
            self._libh.vocis_free(ids)

    # ---- voices -------------------------------------------------------------------

    def load_voice(self, path=None):
        """A voice file, a conds.pt or a recording (cloned); None = the built-in voice."""
        h = ctypes.c_void_p()
        with self._call():
            self._check(self._libh.vocis_voice_load(self._h, _path(path, "voice") if path is not None else None,
                                                    ctypes.byref(h)))
        return Voice(self, h)

    def clone_voice(self, audio, exaggeration=None, sample_rate=None):
        """Clone a voice from a recording: a file path (any format libsndfile
        reads), or mono samples (numpy array) at sample_rate."""
        o = _lib.CloneOptions()
        self._libh.vocis_clone_options_default(ctypes.byref(o))
        if exaggeration is not None:
            o.exaggeration = _knob_value("exaggeration", exaggeration, float, -100, 100)
        h = ctypes.c_void_p()
        if isinstance(audio, (str, bytes, os.PathLike)):
            if sample_rate is not None:
                raise _argerr("sample_rate is for samples in memory, not for a file")
            with self._call():
                self._check(self._libh.vocis_voice_clone(self._h, _path(audio, "audio"), ctypes.byref(o),
                                                         ctypes.byref(h)))
        else:
            import numpy as np
            x = np.ascontiguousarray(audio, dtype=np.float32)
            if x.ndim != 1:
                raise _argerr("samples must be mono (a 1-D array), got shape %s", x.shape)
            sr = _knob_value("sample_rate", sample_rate, int, 1, 10000000) if sample_rate is not None else None
            if sr is None:
                raise _argerr("sample_rate is required for samples in memory")
            with self._call():
                self._check(self._libh.vocis_voice_clone_samples(
                    self._h, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), x.size, sr, ctypes.byref(o),
                    ctypes.byref(h)))
        return Voice(self, h)

    def _voice_handle(self, voice, owned):
        """voice -> vocis_voice* (None = NULL); str paths are loaded into owned."""
        if voice is None:
            return None
        if isinstance(voice, Voice):
            return voice.handle
        if isinstance(voice, (str, bytes, os.PathLike)):
            h = ctypes.c_void_p()
            self._check(self._libh.vocis_voice_load(self._h, _path(voice, "voice"), ctypes.byref(h)))
            owned.append(h)
            return h
        raise TypeError("voice must be a vocis.Voice, a path or None, got %s" % type(voice).__name__)

    # ---- synthesis --------------------------------------------------------------

    def _speak_options(self, seed, knobs, fname):
        o = _lib.SpeakOptions()
        self._libh.vocis_speak_options_for_model(self._h, ctypes.byref(o))  # Realtime: its own CFG and steps
        o.t3.seed = _seed(seed)
        _apply_knobs(o, knobs, KNOBS, fname)
        return o

    def _speak_call(self, text, voice, o, cb):
        """Runs vocis_speak / vocis_speak_script (voice a list) with callbacks cb -> (array, sr)."""
        text_b = _cstr(text, "text")
        cb.install(o)
        audio = _lib.Audio()
        owned = []
        with self._call():
            try:
                if isinstance(voice, (list, tuple)):
                    hs = [self._voice_handle(v, owned) for v in voice]
                    arr = (ctypes.c_void_p * max(1, len(hs)))(*[h.value if isinstance(h, ctypes.c_void_p) else h
                                                                for h in hs])
                    st = self._libh.vocis_speak_script(self._h, arr, len(hs), text_b, ctypes.byref(o),
                                                       ctypes.byref(audio))
                else:
                    vh = self._voice_handle(voice, owned)
                    st = self._libh.vocis_speak(self._h, vh, text_b, ctypes.byref(o), ctypes.byref(audio))
                msg = self._errmsg() if st != _lib.OK else None
            finally:
                for h in owned:
                    self._libh.vocis_voice_free(h)
        try:
            if cb.exc is not None:
                raise cb.exc
            if st != _lib.OK:
                raise _error(st, msg)
            return _to_array(audio.samples, audio.n), audio.sample_rate
        finally:
            self._libh.vocis_audio_free(ctypes.byref(audio))

    def speak(self, text, voice=None, seed=None, on_progress=None, on_audio=None, **knobs):
        """Synthesise text -> (samples: numpy float32 mono in [-1, 1], sample_rate).

        voice: None (the model's built-in voice; VibeVoice: none), a Voice, a
        path (voice file, conds.pt or a recording to clone), or a list of
        those (VibeVoice: one per "Speaker N" of a script). seed: reproduce
        torch.manual_seed(seed) (None = random). on_progress(Progress) and
        on_audio(samples, sample_rate) are called as work progresses; a true
        return value cancels (vocis.Cancelled). knobs: see vocis.KNOBS
        (temperature, cfg_weight, exaggeration, min_p, top_p, top_k,
        repetition_penalty, max_tokens, greedy, language, speculate, cfm_steps,
        cfg_scale, diffusion_steps, max_new_tokens, max_seconds, split_turns, chunk_chars,
        crossfade_ms)."""
        o = self._speak_options(seed, knobs, "speak")
        return self._speak_call(text, voice, o, _Callbacks(on_progress, on_audio))

    def stream(self, text, voice=None, seed=None, on_progress=None, **knobs):
        """Like speak(), as a generator of (chunk, sample_rate) as each piece of
        audio is final (Chatterbox: per text chunk; VibeVoice: per 133 ms
        frame). Closing the generator early cancels the synthesis."""
        o = self._speak_options(seed, knobs, "stream")  # argument errors raise here, before the first next()
        text_b = _cstr(text, "text")
        return self._stream(text_b, voice, o, on_progress)

    def _stream(self, text_b, voice, o, on_progress):
        q = queue.Queue()
        stop = threading.Event()
        done = object()
        cb = _Callbacks(on_progress, lambda x, sr: q.put((x, sr)) and False, cancel=stop)
        result = {}

        def work():
            try:
                self._speak_call(text_b, voice, o, cb)
            except BaseException as e:  # noqa: B902 - handed to the consumer
                result["exc"] = e
            finally:
                q.put(done)

        t = threading.Thread(target=work, name="vocis-stream", daemon=True)
        t.start()
        try:
            while True:
                item = q.get()
                if item is done:
                    break
                yield item
            if "exc" in result:
                raise result["exc"]
        finally:
            stop.set()
            t.join()

    def tokens(self, text, voice=None, seed=None, **knobs):
        """Chatterbox T3 speech tokens exactly as upstream's T3.inference
        returns them (numpy int32). knobs: the T3 ones of vocis.KNOBS."""
        import numpy as np
        o = _lib.T3Options()
        self._libh.vocis_t3_options_default(ctypes.byref(o))
        o.seed = _seed(seed)
        _apply_knobs(o, knobs, _T3_KNOBS, "tokens")
        toks = ctypes.POINTER(ctypes.c_int32)()
        n = ctypes.c_size_t()
        owned = []
        with self._call():
            try:
                vh = self._voice_handle(voice, owned)
                self._check(self._libh.vocis_t3_generate(self._h, vh, _cstr(text, "text"), ctypes.byref(o),
                                                         ctypes.byref(toks), ctypes.byref(n)))
            finally:
                for h in owned:
                    self._libh.vocis_voice_free(h)
        try:
            return np.array([toks[i] for i in range(n.value)], dtype=np.int32)
        finally:
            self._libh.vocis_free(toks)

    def convert(self, source, voice=None, seed=None, cfm_steps=None, on_progress=None):
        """Voice conversion: the speech of the recording `source` said in
        `voice` (None = the built-in voice) -> (samples, sample_rate)."""
        if getattr(self._libh, "vocis_convert", None) is None:
            raise VocisError(_lib.E_UNSUPPORTED, "this libvocis has no voice conversion")
        o = _lib.ConvertOptions()
        self._libh.vocis_convert_options_default(ctypes.byref(o))
        o.seed = _seed(seed)
        if cfm_steps is not None:
            o.cfm_steps = _knob_value("cfm_steps", cfm_steps, int, 1, 1000)
        cb = _Callbacks(on_progress, None)
        o.on_progress, o.on_audio = cb.c_progress, cb.c_audio
        audio = _lib.Audio()
        owned = []
        with self._call():
            try:
                vh = self._voice_handle(voice, owned)
                st = self._libh.vocis_convert(self._h, _path(source, "source"), vh, ctypes.byref(o),
                                              ctypes.byref(audio))
                msg = self._errmsg() if st != _lib.OK else None
            finally:
                for h in owned:
                    self._libh.vocis_voice_free(h)
        try:
            if cb.exc is not None:
                raise cb.exc
            if st != _lib.OK:
                raise _error(st, msg)
            return _to_array(audio.samples, audio.n), audio.sample_rate
        finally:
            self._libh.vocis_audio_free(ctypes.byref(audio))

    def save_audio(self, path, samples, sample_rate, format=None):
        """Write samples as "wav" (16-bit), "f32", "flac", "ogg", "mp3" or "opus"
        (None: the path's extension, else wav); path "-" writes raw PCM to
        stdout. No partial file is left on failure."""
        import numpy as np
        x = np.ascontiguousarray(samples, dtype=np.float32)
        if x.ndim != 1:
            raise _argerr("samples must be mono (a 1-D array), got shape %s", x.shape)
        a = _lib.Audio(x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), x.size,
                       _knob_value("sample_rate", sample_rate, int, 1, 10000000))
        with self._call():
            self._check(self._libh.vocis_audio_save(self._h, ctypes.byref(a), _path(path),
                                                    _cstr(format, "format") if format is not None else None))
