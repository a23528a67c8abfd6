"""Low level: finding and loading libvocis, and the ctypes mirror of vocis.h.

The Structure classes below must match the C structs of include/vocis.h
byte for byte; tests/python/test_abi.py compares them with sizeof/offsetof
printed by a C program, and load() refuses a library whose option structs
are larger than these (a binding and a library from different versions).
"""
import ctypes
import ctypes.util
import glob
import os
import threading

# ---- vocis.h constants -----------------------------------------------------

OK, E_IO, E_FORMAT, E_SHAPE, E_ARG, E_NOMEM, E_UNSUPPORTED, E_INTERNAL, E_CANCELLED, E_INVALID = range(10)

PRECISIONS = {"default": 0, "exact": 1, "bf16": 2, "q8": 3}

# ---- structs ---------------------------------------------------------------

ON_TOKEN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int32)


class Progress(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_char_p),
                ("chunk", ctypes.c_int), ("n_chunks", ctypes.c_int),
                ("step", ctypes.c_int), ("n_steps", ctypes.c_int),
                ("text_tokens", ctypes.c_int), ("speech_tokens", ctypes.c_int)]


ON_PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Progress))
ON_WARNING = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
ON_AUDIO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t,
                            ctypes.c_int)


class Cue(ctypes.Structure):
    _fields_ = [("index", ctypes.c_int),
                ("text", ctypes.c_char_p),
                ("speaker", ctypes.c_int),
                ("start", ctypes.c_int64),
                ("end", ctypes.c_int64),
                ("sample_rate", ctypes.c_int),
                ("exact", ctypes.c_int)]


ON_CUE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Cue))


class OpenOptions(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int),
                ("config_path", ctypes.c_char_p),
                ("precision", ctypes.c_int),
                ("kv_cache", ctypes.c_int),
                ("voice_cache_mb", ctypes.c_int)]


class CloneOptions(ctypes.Structure):
    _fields_ = [("exaggeration", ctypes.c_float)]


class T3Options(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float),
                ("cfg_weight", ctypes.c_float),
                ("exaggeration", ctypes.c_float),
                ("min_p", ctypes.c_float),
                ("top_p", ctypes.c_float),
                ("repetition_penalty", ctypes.c_float),
                ("max_new_tokens", ctypes.c_int),
                ("greedy", ctypes.c_int),
                ("seed", ctypes.c_int64),
                ("language", ctypes.c_char_p),
                ("on_token", ON_TOKEN),
                ("user", ctypes.c_void_p),
                ("top_k", ctypes.c_int),
                ("speculate", ctypes.c_int)]


class VVOptions(ctypes.Structure):
    _fields_ = [("cfg_scale", ctypes.c_float),
                ("diffusion_steps", ctypes.c_int),
                ("max_new_tokens", ctypes.c_int),
                ("max_seconds", ctypes.c_float),
                ("split_turns", ctypes.c_int)]


class SpeakOptions(ctypes.Structure):
    _fields_ = [("t3", T3Options),
                ("vv", VVOptions),
                ("cfm_steps", ctypes.c_int),
                ("max_chunk_chars", ctypes.c_int),
                ("crossfade_ms", ctypes.c_float),
                ("on_progress", ON_PROGRESS),
                ("on_audio", ON_AUDIO),
                ("user", ctypes.c_void_p),
                ("on_warning", ON_WARNING),
                ("stream_tokens", ctypes.c_int),
                ("checkpoint", ctypes.c_void_p),
                ("on_cue", ON_CUE)]


class ConvertOptions(ctypes.Structure):
    _fields_ = [("seed", ctypes.c_int64),
                ("cfm_steps", ctypes.c_int),
                ("on_progress", ON_PROGRESS),
                ("on_audio", ON_AUDIO),
                ("user", ctypes.c_void_p)]


class Audio(ctypes.Structure):
    _fields_ = [("samples", ctypes.POINTER(ctypes.c_float)),
                ("n", ctypes.c_size_t),
                ("sample_rate", ctypes.c_int)]


# The structs the binding mirrors, by their C names (for the ABI test).
STRUCTS = {
    "vocis_open_options": OpenOptions,
    "vocis_clone_options": CloneOptions,
    "vocis_t3_options": T3Options,
    "vocis_progress": Progress,
    "vocis_vv_options": VVOptions,
    "vocis_speak_options": SpeakOptions,
    "vocis_convert_options": ConvertOptions,
    "vocis_audio": Audio,
    "vocis_cue": Cue,
}

# ---- functions ---------------------------------------------------------------

_h = ctypes.c_void_p  # every handle is an opaque pointer
_s = ctypes.c_char_p
_st = ctypes.c_int    # vocis_status
_P = ctypes.POINTER

# name: (restype, argtypes, required)
_PROTOS = {
    "vocis_status_name": (_s, [_st], True),
    "vocis_version": (_s, [], True),
    "vocis_version_info": (_s, [], False),
    "vocis_model_open": (_st, [_s, _P(OpenOptions), _P(_h)], True),
    "vocis_model_close": (None, [_h], True),
    "vocis_model_kind": (_s, [_h], True),
    "vocis_errmsg": (_s, [_h], True),
    "vocis_model_set_threads": (None, [_h, ctypes.c_int], True),
    "vocis_tokenize": (_st, [_h, _s, _P(_P(ctypes.c_int32)), _P(ctypes.c_size_t)], True),
    "vocis_tokenize_language": (_st, [_h, _s, _s, _P(_P(ctypes.c_int32)), _P(ctypes.c_size_t)], True),
    "vocis_free": (None, [ctypes.c_void_p], True),
    "vocis_voice_load": (_st, [_h, _s, _P(_h)], True),
    "vocis_voice_free": (None, [_h], True),
    "vocis_clone_options_default": (None, [_P(CloneOptions)], True),
    "vocis_voice_clone": (_st, [_h, _s, _P(CloneOptions), _P(_h)], True),
    "vocis_voice_clone_samples": (_st, [_h, _P(ctypes.c_float), ctypes.c_size_t, ctypes.c_int, _P(CloneOptions),
                                        _P(_h)], True),
    "vocis_voice_warning": (_s, [_h], True),
    "vocis_t3_options_default": (None, [_P(T3Options)], True),
    "vocis_t3_generate": (_st, [_h, _h, _s, _P(T3Options), _P(_P(ctypes.c_int32)), _P(ctypes.c_size_t)], True),
    "vocis_speak_options_default": (None, [_P(SpeakOptions)], True),
    "vocis_speak_options_for_model": (None, [_h, _P(SpeakOptions)], True),
    "vocis_speak": (_st, [_h, _h, _s, _P(SpeakOptions), _P(Audio)], True),
    "vocis_speak_script": (_st, [_h, _P(_h), ctypes.c_int, _s, _P(SpeakOptions), _P(Audio)], True),
    "vocis_audio_free": (None, [_P(Audio)], True),
    "vocis_convert_options_default": (None, [_P(ConvertOptions)], False),
    "vocis_convert": (_st, [_h, _s, _h, _P(ConvertOptions), _P(Audio)], False),
    "vocis_audio_save": (_st, [_h, _P(Audio), _s, _s], True),
    "vocis_voice_save": (_st, [_h, _h, _s], True),
}


class LibraryError(ImportError):
    """libvocis could not be found or does not match this binding."""


_lock = threading.Lock()
_lib = None
_lib_path = None


def _here():
    return os.path.dirname(os.path.abspath(__file__))


def candidates():
    """Where load() looks, in order, after an explicit path and $VOCIS_LIBRARY:
    the build folder of the source tree this package sits in, the prefix it
    was installed into, then the system (ctypes.util.find_library)."""
    out = []
    here = _here()
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "vocis.h")) and \
            os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        main = os.path.join(root, "build", "libvocis.so")
        if os.path.exists(main):
            out.append(main)
        # other build folders, newest first (sanitizer builds are skipped by _open)
        others = [p for p in glob.glob(os.path.join(root, "build*", "libvocis.so")) if p != main]
        out += sorted(others, key=lambda p: -os.path.getmtime(p))
    try:
        from . import _install  # written by cmake --install
        libdir = os.path.normpath(os.path.join(here, _install.LIBDIR))
        out.append(os.path.join(libdir, _install.SONAME))
    except ImportError:
        pass
    sys_name = ctypes.util.find_library("vocis")
    if sys_name:
        out.append(sys_name)
    return out


def _check_struct_sizes(lib, path):
    """The option structs filled by libvocis's *_default functions must not be
    larger than this binding's mirror: write them into a guarded buffer and
    see that nothing past the mirror's size was touched."""
    for fn, cls in (("vocis_speak_options_default", SpeakOptions), ("vocis_t3_options_default", T3Options),
                    ("vocis_clone_options_default", CloneOptions), ("vocis_convert_options_default", ConvertOptions)):
        f = getattr(lib, fn, None)
        if f is None:
            continue
        n = ctypes.sizeof(cls)
        buf = (ctypes.c_ubyte * (n + 256))(*([0xA5] * (n + 256)))
        f(ctypes.cast(buf, ctypes.POINTER(cls)))
        if any(b != 0xA5 for b in buf[n:]):
            raise LibraryError("%s: its %s is larger than this binding's (%d bytes): the Python package and the "
                               "library come from different vocis versions" % (path, fn[:-len("_default")], n))


def _bind(lib, path):
    for name, (res, args, required) in _PROTOS.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            if required:
                raise LibraryError("%s: has no %s (not a libvocis, or too old)" % (path, name))
            continue
        f.restype = res
        f.argtypes = args
    _check_struct_sizes(lib, path)
    return lib


def _sanitized(path):
    """True for a libvocis built with -fsanitize: loading it into python3
    would abort the interpreter (the ASan runtime must come first)."""
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError:
        return False
    return b"__asan_init" in data or b"__ubsan_handle" in data or b"__tsan_init" in data


def _open(path):
    if _sanitized(path):
        raise LibraryError("%s is a sanitizer build of libvocis: it cannot be loaded into python3" % path)
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LibraryError("cannot load libvocis from %s: %s" % (path, e))
    return _bind(lib, path)


def load(path=None):
    """The loaded libvocis (loaded on first use). path, else $VOCIS_LIBRARY,
    names it explicitly (a file, or a folder holding libvocis.so); then the
    in-tree build, the installed prefix and the system are tried."""
    global _lib, _lib_path
    with _lock:
        explicit = path or os.environ.get("VOCIS_LIBRARY") or None
        if explicit and os.path.isdir(explicit):
            explicit = os.path.join(explicit, "libvocis.so")
        if _lib is not None:
            if explicit and os.path.realpath(explicit) != os.path.realpath(_lib_path):
                raise LibraryError("libvocis is already loaded from %s (cannot switch to %s)" % (_lib_path, explicit))
            return _lib
        if explicit:
            _lib, _lib_path = _open(explicit), explicit
            return _lib
        tried = []
        for c in candidates():
            try:
                _lib, _lib_path = _open(c), c
                return _lib
            except LibraryError as e:
                tried.append(str(e))
        raise LibraryError("libvocis not found: set VOCIS_LIBRARY=/path/to/libvocis.so, build it in the source tree "
                           "(cmake --build build), or install it (cmake --install build)" +
                           ("; tried: " + "; ".join(tried) if tried else ""))


def loaded_path():
    """The file libvocis was loaded from (None before the first load)."""
    return _lib_path
