"""The Python binding on the tiny Chatterbox checkpoint: same samples as
`vocis speak` for the same seed and knobs, streaming, callbacks, voices,
handle clean-up, and errors raised (never a crash) on bad input.
Usage: test_binding.py VOCIS_CLI LIBVOCIS DATA SCRATCH"""
import gc
import os
import subprocess
import sys
import threading
import unittest
import weakref

from common import import_vocis, require_numpy

require_numpy()
import numpy as np  # noqa: E402

VOCIS_CLI, LIBVOCIS, DATA, SCRATCH = sys.argv[1:5]
del sys.argv[1:5]
os.environ["VOCIS_LIBRARY"] = LIBVOCIS
os.makedirs(SCRATCH, exist_ok=True)
vocis = import_vocis()

CKPT = os.path.join(DATA, "chatterbox", "ckpt")
REF = os.path.join(DATA, "chatterbox", "golden", "ref_24k.wav")
TEXT = "Hello world, this is a tiny test of Chatterbox."
LONG = "First sentence of a longer text. And here is a second one. A third sentence closes it."
PKG = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "bindings", "python"))


RT = os.path.join(DATA, "vibevoice-realtime", "model")
RT_PRESET = os.path.join(DATA, "vibevoice-realtime", "voices", "streaming_model", "en-TinyAda_woman.pt")
MTL = os.path.join(DATA, "chatterbox-mtl", "ckpt")


def cli_f32(*args, model=CKPT):
    """Raw f32le samples of `vocis speak ... -o - --format f32`."""
    r = subprocess.run([VOCIS_CLI, "speak", "--model", model, "--threads", "1", "-q", "--format", "f32", "-o", "-"]
                       + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        raise AssertionError("vocis speak failed: %s" % r.stderr.decode())
    return np.frombuffer(r.stdout, dtype="<f4")


def maps_of(name):
    with open("/proc/self/maps") as f:
        return sum(name in line for line in f)


def nfds():
    return len(os.listdir("/proc/self/fd"))


class Binding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = vocis.Model(CKPT, threads=1)

    @classmethod
    def tearDownClass(cls):
        cls.m.close()

    # ---- same samples as the CLI ------------------------------------------------

    def test_speak_same_samples_as_cli(self):
        x, sr = self.m.speak(TEXT, seed=3)
        self.assertEqual(sr, 24000)
        self.assertEqual(x.dtype, np.float32)
        self.assertEqual(x.ndim, 1)
        ref = cli_f32("--text", TEXT, "--seed", "3")
        self.assertEqual(len(x), len(ref))
        self.assertTrue(np.array_equal(x, ref), "max diff %g" % float(np.max(np.abs(x - ref))))

    def test_knobs_same_as_cli(self):
        x, _ = self.m.speak(TEXT, seed=5, temperature=0.6, cfg_weight=0.3, exaggeration=0.7, min_p=0.1,
                            top_p=0.9, repetition_penalty=1.3, max_tokens=60, cfm_steps=4)
        ref = cli_f32("--text", TEXT, "--seed", "5", "--temperature", "0.6", "--cfg-weight", "0.3", "--exaggeration",
                      "0.7", "--min-p", "0.1", "--top-p", "0.9", "--repetition-penalty", "1.3", "--max-tokens", "60",
                      "--cfm-steps", "4")
        self.assertTrue(np.array_equal(x, ref))
        g, _ = self.m.speak(TEXT, seed=1, greedy=True, cfm_steps=2)
        self.assertTrue(np.array_equal(g, cli_f32("--text", TEXT, "--seed", "1", "--greedy", "--cfm-steps", "2")))
        # speculation changes speed only: off, auto (the default) and a fixed k give the same audio as the CLI
        for k in (-1, 0, 3):
            s, _ = self.m.speak(TEXT, seed=5, speculate=k, max_tokens=60, cfm_steps=2)
            self.assertTrue(np.array_equal(s, cli_f32("--text", TEXT, "--seed", "5", "--max-tokens", "60",
                                                      "--cfm-steps", "2", "--speculate", "off")), k)
        # streamed speech (stream_tokens = --stream --stream-first): the CLI's samples, the unstreamed length
        st, _ = self.m.speak(TEXT, seed=5, stream_tokens=4, max_tokens=60, cfm_steps=2)
        self.assertTrue(np.array_equal(st, cli_f32("--text", TEXT, "--seed", "5", "--max-tokens", "60", "--cfm-steps",
                                                   "2", "--stream", "--stream-first", "4")))
        self.assertEqual(len(st), len(s))

    def test_precision_same_as_cli(self):
        h = subprocess.run([VOCIS_CLI, "speak", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True).stdout
        if "--precision" not in h:
            self.skipTest("vocis speak has no --precision in this build")
        for p in ("exact", "bf16"):
            with vocis.Model(CKPT, precision=p, threads=1) as m:
                x, _ = m.speak(TEXT, seed=3, cfm_steps=3)
            self.assertTrue(np.array_equal(x, cli_f32("--text", TEXT, "--seed", "3", "--cfm-steps", "3",
                                                      "--precision", p)), p)

    def test_chunked_text_and_stream(self):
        x, _ = self.m.speak(LONG, seed=2, chunk_chars=40, cfm_steps=3)
        self.assertTrue(np.array_equal(x, cli_f32("--text", LONG, "--seed", "2", "--chunk-chars", "40",
                                                  "--cfm-steps", "3")))
        chunks = list(self.m.stream(LONG, seed=2, chunk_chars=40, cfm_steps=3))
        self.assertGreater(len(chunks), 1)
        self.assertTrue(all(sr == 24000 and c.dtype == np.float32 for c, sr in chunks))
        self.assertTrue(np.array_equal(np.concatenate([c for c, _ in chunks]), x))

    def speak_both(self, tag, *args):
        """The files that `python3 -m vocis speak ARGS` and `vocis speak ARGS` write (one thread, quiet)."""
        outs = []
        for cmd in ([sys.executable, "-m", "vocis"], [VOCIS_CLI]):
            out = os.path.join(SCRATCH, "%s_%d.wav" % (tag, len(outs)))
            r = subprocess.run(cmd + ["speak", *args, "--threads", "1", "-q", "-o", out],
                               env=dict(os.environ, PYTHONPATH=PKG), stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 0, r.stderr.decode())
            with open(out, "rb") as f:
                outs.append(f.read())
        return outs

    def test_python_m_vocis_matches_cli(self):
        outs = self.speak_both("m", "--model", CKPT, "--text", TEXT, "--seed", "4", "--cfm-steps", "3")
        self.assertEqual(outs[0], outs[1], "python3 -m vocis speak and vocis speak wrote different files")
        # raw s16le on stdout
        raws = [subprocess.run(cmd + ["speak", "--model", CKPT, "--text", TEXT, "--seed", "4", "--threads", "1",
                                      "--cfm-steps", "3", "-q", "-o", "-"], env=dict(os.environ, PYTHONPATH=PKG),
                               stdout=subprocess.PIPE, check=True).stdout
                for cmd in ([sys.executable, "-m", "vocis"], [VOCIS_CLI])]
        self.assertEqual(raws[0], raws[1])
        # errors: one line, non-zero exit, no file
        bad = os.path.join(SCRATCH, "bad.wav")
        r = subprocess.run([sys.executable, "-m", "vocis", "speak", "--model", os.path.join(SCRATCH, "nope"),
                            "--text", "Hi.", "-o", bad], env=dict(os.environ, PYTHONPATH=PKG),
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("model folder not found", r.stderr)
        self.assertFalse(os.path.exists(bad))
        r = subprocess.run([sys.executable, "-m", "vocis", "--version"], env=dict(os.environ, PYTHONPATH=PKG),
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertRegex(r.stdout, r"^vocis %s \(cpu: .*kernels: " % vocis.version().replace(".", r"\."))

    def test_realtime_takes_its_own_defaults(self):
        """Realtime-0.5B runs CFG 1.5 / 5 steps (vocis_speak_options_for_model), not 1.5B's 1.3 / 10."""
        text = "Hello there, friend."
        with vocis.Model(RT, threads=1) as m:
            x, sr = m.speak(text, voice=RT_PRESET, seed=7)
            old_defaults, _ = m.speak(text, voice=RT_PRESET, seed=7, cfg_scale=1.3, diffusion_steps=10)
            explicit, _ = m.speak(text, voice=RT_PRESET, seed=7, cfg_scale=1.5, diffusion_steps=5)
        self.assertEqual(sr, 24000)
        ref = cli_f32("--voice", RT_PRESET, "--text", text, "--seed", "7", model=RT)
        self.assertGreater(len(ref), 0)
        self.assertTrue(np.array_equal(x, ref), "binding and vocis speak differ on Realtime")
        self.assertTrue(np.array_equal(explicit, ref))
        self.assertFalse(np.array_equal(old_defaults, ref), "the knobs make no difference: the test cannot fail")
        outs = self.speak_both("rt", "--model", RT, "--voice", RT_PRESET, "--text", text, "--seed", "7")
        self.assertEqual(outs[0], outs[1], "python3 -m vocis speak and vocis speak wrote different Realtime files")

    # ---- voices ---------------------------------------------------------------------

    def test_clone_voice(self):
        with self.m.clone_voice(REF) as v:
            self.assertIn("5 s", v.warning)  # 4.3 s reference
            x, _ = self.m.speak(TEXT, voice=v, seed=0, cfm_steps=3)
            path = os.path.join(SCRATCH, "r.voice")
            v.save(path)
        ref = cli_f32("--text", TEXT, "--voice", REF, "--seed", "0", "--cfm-steps", "3")
        self.assertTrue(np.array_equal(x, ref))
        y, _ = self.m.speak(TEXT, voice=path, seed=0, cfm_steps=3)  # a path is loaded on the fly
        self.assertTrue(np.array_equal(y, ref))
        with self.m.load_voice(path) as v2:
            self.assertTrue(np.array_equal(self.m.speak(TEXT, voice=v2, seed=0, cfm_steps=3)[0], ref))
        # from samples in memory
        import wave
        with wave.open(REF) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768
            sr = w.getframerate()
        with self.m.clone_voice(pcm, sample_rate=sr) as v3:
            self.assertEqual(len(self.m.speak("Hi.", voice=v3, seed=0, cfm_steps=2)[0]) > 0, True)

    def test_tokenize_and_tokens(self):
        ids = self.m.tokenize("Hello world.")
        r = subprocess.run([VOCIS_CLI, "tokenize", "--model", CKPT, "--text", "Hello world."],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertEqual(" ".join(map(str, ids)), r.stdout.strip())
        t = self.m.tokens(TEXT, seed=0, max_tokens=30)
        self.assertEqual(t.dtype, np.int32)
        r = subprocess.run([VOCIS_CLI, "tokens", "--model", CKPT, "--text", TEXT, "--seed", "0", "--max-tokens", "30",
                            "--threads", "1"], stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertEqual(" ".join(map(str, t)), " ".join(r.stdout.split()))
        self.assertEqual(self.m.tokenize("Hello world.", language="en"), ids)

    def test_tokenize_language(self):
        text = "Bonjour, comment ça va ?"
        with vocis.Model(MTL, threads=1) as m:
            ids = m.tokenize(text, language="fr")
            with self.assertRaises(vocis.ArgumentError) as cm:
                m.tokenize(text)  # Multilingual needs a language
            self.assertIn("language", str(cm.exception))
            with self.assertRaises(vocis.ArgumentError):
                m.tokenize(text, language="xx")
        r = subprocess.run([VOCIS_CLI, "tokenize", "--model", MTL, "--language", "fr", "--text", text],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertEqual(" ".join(map(str, ids)), r.stdout.strip())
        r = subprocess.run([sys.executable, "-m", "vocis", "tokenize", "--model", MTL, "--language", "fr", "--text",
                            text], env=dict(os.environ, PYTHONPATH=PKG), stdout=subprocess.PIPE,
                           universal_newlines=True, check=True)
        self.assertEqual(" ".join(map(str, ids)), r.stdout.strip())

    # ---- callbacks --------------------------------------------------------------------

    def test_warnings(self):
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x, sr = self.m.speak("Hi \U0001F600 there.", seed=1, max_tokens=5)
        self.assertGreater(len(x), 0)
        msgs = [str(i.message) for i in w if issubclass(i.category, vocis.VocisWarning)]
        self.assertEqual(msgs, ["the tokenizer has no token for '\U0001F600' (U+1F600): it is read as [UNK]"])

    def test_progress_and_cancel(self):
        seen = []
        self.m.speak("Hi there.", seed=0, cfm_steps=2, on_progress=seen.append)
        self.assertEqual({p.stage for p in seen} >= {"t3", "s3gen", "hift"}, True, seen[:5])
        with self.assertRaises(vocis.Cancelled) as cm:
            self.m.speak("Hi there.", seed=0, on_progress=lambda p: p.stage == "s3gen")
        self.assertIn("cancel", str(cm.exception))

        class Boom(Exception):
            pass

        def boom(p):
            raise Boom("from the callback")
        with self.assertRaises(Boom):
            self.m.speak("Hi there.", seed=0, on_progress=boom)
        got = []
        x, _ = self.m.speak(LONG, seed=2, chunk_chars=40, cfm_steps=2, on_audio=lambda c, sr: got.append(c))
        self.assertTrue(np.array_equal(np.concatenate(got), x))
        # calling the model from its own callback is refused, not a deadlock
        errs = []

        def reenter(p):
            try:
                self.m.tokenize("x")
            except vocis.VocisError as e:
                errs.append(str(e))
            return True
        with self.assertRaises(vocis.Cancelled):
            self.m.speak("Hi.", seed=0, on_progress=reenter)
        self.assertIn("own callbacks", errs[0])
        # the model still works after all that
        self.assertTrue(np.array_equal(self.m.speak(TEXT, seed=3)[0], cli_f32("--text", TEXT, "--seed", "3")))

    def test_stream_closed_early(self):
        g = self.m.stream(LONG, seed=2, chunk_chars=40, cfm_steps=2)
        first, sr = next(g)
        self.assertGreater(len(first), 0)
        g.close()  # cancels the rest and joins the worker
        self.assertEqual([t.name for t in threading.enumerate() if t.name == "vocis-stream"], [])
        self.assertEqual(self.m.tokenize("Hello world.")[0], self.m.tokenize("Hello world.")[0])
        with self.assertRaises(vocis.ArgumentError):
            self.m.stream("Hi.", temperature=-1)  # argument errors before the first chunk
        with self.assertRaises(vocis.VocisError):
            list(self.m.stream("Hi.", voice=os.path.join(SCRATCH, "missing.voice")))

    # ---- errors -----------------------------------------------------------------------

    def test_bad_input_raises(self):
        m = self.m
        with self.assertRaises(vocis.VocisError) as cm:
            vocis.Model(os.path.join(SCRATCH, "no-model"))
        self.assertEqual(cm.exception.status_name, "io")
        self.assertIn("model folder not found", str(cm.exception))
        with self.assertRaises(vocis.VocisError) as cm:
            vocis.Model(SCRATCH)
        self.assertIn("not a recognised model folder", str(cm.exception))
        with self.assertRaises(vocis.ArgumentError):
            vocis.Model(CKPT, precision="fp4")
        saved = os.environ.get("VOCIS_PRECISION")
        os.environ["VOCIS_PRECISION"] = "bogus"  # refused at open, not silently the default
        try:
            with self.assertRaises(vocis.ArgumentError) as cm:
                vocis.Model(CKPT, threads=1)
            self.assertIn("VOCIS_PRECISION=bogus: unknown precision", str(cm.exception))
            vocis.Model(CKPT, threads=1, precision="exact").close()  # an explicit precision does not read it
        finally:
            if saved is None:
                del os.environ["VOCIS_PRECISION"]
            else:
                os.environ["VOCIS_PRECISION"] = saved
        cases = [
            (vocis.ArgumentError, lambda: m.speak(TEXT, temperature=0)),
            (vocis.ArgumentError, lambda: m.speak(TEXT, temperature=float("nan"))),
            (vocis.ArgumentError, lambda: m.speak(TEXT, top_p=2)),
            (vocis.ArgumentError, lambda: m.speak(TEXT, max_tokens=0)),
            (vocis.ArgumentError, lambda: m.speak(TEXT, seed=-5)),
            (vocis.ArgumentError, lambda: m.speak(TEXT, seed=2 ** 64)),
            (vocis.ArgumentError, lambda: m.speak("a\0b")),
            (vocis.ArgumentError, lambda: m.speak("")),
            (vocis.ArgumentError, lambda: m.speak("   ")),
            (TypeError, lambda: m.speak(TEXT, no_such_knob=1)),
            (TypeError, lambda: m.speak(TEXT, temperature="hot")),
            (TypeError, lambda: m.speak(TEXT, max_tokens=1.5)),
            (TypeError, lambda: m.speak(None)),
            (TypeError, lambda: m.speak(TEXT, voice=42)),
            (vocis.VocisError, lambda: m.speak(TEXT, voice=os.path.join(SCRATCH, "missing.voice"))),
            (vocis.VocisError, lambda: m.speak(TEXT, voice=os.path.join(CKPT, "tokenizer.json"))),
            (vocis.VocisError, lambda: m.clone_voice(os.path.join(CKPT, "tokenizer.json"))),
            (vocis.VocisError, lambda: m.clone_voice(np.zeros(100, np.float32), sample_rate=24000)),
            (vocis.ArgumentError, lambda: m.clone_voice(np.zeros((2, 100), np.float32), sample_rate=24000)),
            (vocis.ArgumentError, lambda: m.clone_voice(np.zeros(100, np.float32))),
            (vocis.VocisError, lambda: m.save_audio(os.path.join(SCRATCH, "no", "dir", "x.wav"),
                                                    np.zeros(10, np.float32), 24000)),
            (vocis.ArgumentError, lambda: m.save_audio(os.path.join(SCRATCH, "x.wav"), np.zeros(10, np.float32),
                                                       24000, format="mp9")),
        ]
        for exc, f in cases:
            with self.assertRaises(exc):
                f()
        for exc, f in cases:  # vocis's one-line messages
            try:
                f()
            except vocis.VocisError as e:
                self.assertTrue(str(e) and "\n" not in str(e), repr(str(e)))
            except TypeError:
                pass
        self.assertFalse(os.path.exists(os.path.join(SCRATCH, "x.wav")))
        self.assertEqual(len(m.speak("Hi.", seed=0, cfm_steps=2)[0]) > 0, True)  # still usable

    def test_bad_input_in_subprocess_does_not_crash(self):
        code = ("import vocis, numpy as np\n"
                "m = vocis.Model(%r, threads=1)\n"
                "for f in [lambda: m.speak(''), lambda: m.speak('x', voice=%r), lambda: m.tokens('x', max_tokens=0),\n"
                "          lambda: m.clone_voice(np.full(10, np.nan, np.float32), sample_rate=16000),\n"
                "          lambda: m.clone_voice(np.zeros(0, np.float32), sample_rate=16000),\n"
                "          lambda: m.convert(%r)]:\n"
                "    try: f()\n"
                "    except (vocis.VocisError, TypeError) as e: print(type(e).__name__, e)\n"
                "m.close(); m.close()\n"
                "try: m.speak('x')\n"
                "except vocis.VocisError as e: print('closed:', e)\n"
                "print('alive')\n") % (CKPT, CKPT, os.path.join(SCRATCH, "missing.wav"))
        r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PKG),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(r.stdout.endswith("alive\n"), r.stdout)
        self.assertIn("closed: model is closed", r.stdout)

    # ---- clean-up -----------------------------------------------------------------------

    def test_handles_are_freed(self):
        lib = vocis._lib.load()
        calls = {"model": 0, "voice": 0}
        real_mc, real_vf = lib.vocis_model_close, lib.vocis_voice_free

        def mc(h):
            calls["model"] += 1
            real_mc(h)

        def vf(h):
            calls["voice"] += 1
            real_vf(h)
        lib.vocis_model_close, lib.vocis_voice_free = mc, vf
        fds0, maps0 = nfds(), maps_of(CKPT)
        try:
            with vocis.Model(CKPT, threads=1) as m:  # context manager
                self.assertGreater(maps_of("t3_cfg.safetensors"), 0)
                v = m.load_voice()
                m.speak("Hi.", voice=v, seed=0, cfm_steps=2)
                v.close()
                v.close()
            self.assertTrue(m.closed)
            self.assertEqual(calls, {"model": 1, "voice": 1})
            m = vocis.Model(CKPT, threads=1)  # garbage collection
            v = m.load_voice()
            wm = weakref.ref(m)
            del m, v
            gc.collect()
            self.assertIsNone(wm())
            self.assertEqual(calls, {"model": 2, "voice": 2})
            for _ in range(5):  # explicit close, repeated
                m = vocis.Model(CKPT, threads=1)
                m.speak("Hi.", seed=0, cfm_steps=1)  # loads S3Gen too
                m.close()
            self.assertEqual(calls["model"], 7)
            try:
                vocis.Model(os.path.join(SCRATCH, "no-model"))  # failed open: the handle is freed too
            except vocis.VocisError:
                pass
            self.assertEqual(calls["model"], 8)
        finally:
            lib.vocis_model_close, lib.vocis_voice_free = real_mc, real_vf
        # no file descriptor or mapping of the checkpoint outlives its models
        self.assertEqual(nfds(), fds0)
        self.assertEqual(maps_of(CKPT), maps0)

    # ---- library search -------------------------------------------------------------------

    def test_library_search_order(self):
        env = dict(os.environ, PYTHONPATH=PKG)
        code = "import vocis; print(vocis.load_library())"
        r = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, universal_newlines=True,
                           check=True)
        self.assertEqual(os.path.realpath(r.stdout.strip()), os.path.realpath(LIBVOCIS))  # $VOCIS_LIBRARY
        env["VOCIS_LIBRARY"] = os.path.join(SCRATCH, "nope.so")
        r = subprocess.run([sys.executable, "-c", "import vocis\ntry: vocis.version()\n"
                            "except ImportError as e: print('ImportError', e)"],
                           env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertIn("ImportError cannot load libvocis from", r.stdout)
        del env["VOCIS_LIBRARY"]  # in-tree build folders, then the system
        r = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        root = os.path.dirname(os.path.dirname(PKG))
        if r.returncode == 0:
            self.assertTrue(r.stdout.startswith(root + os.sep + "build"), r.stdout)
        r = subprocess.run([sys.executable, "-c", "import vocis; print(vocis.load_library(%r))" % LIBVOCIS],
                           env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertEqual(r.stdout.strip(), LIBVOCIS)  # explicit path


if __name__ == "__main__":
    unittest.main(verbosity=2)
