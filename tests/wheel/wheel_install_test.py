"""The wheel as a user gets it: installed by pip into a fresh virtual environment, with
nothing of the build tree on sys.path.

    wheel_install_test.py WHEEL MODEL_PT [unittest test names]

(tests/wheel/BUILD.bazel passes //tools/wheel:wheel and the zoo's mlp.pt; by hand, any
built wheel and a TorchScript file with <stem>.inputs.pt beside it.) One virtual
environment, made in $TEST_TMPDIR (or a new temporary folder) by set-up's Python, gets the
wheel with `pip install --no-index`; then each test runs processes of that environment:
`import brisk`, a model loaded from its path and compared with torch.jit.load's output,
the `brisk` console script (`run --check`, `bench`), `python -m brisk --help`, the
search paths of every ELF file, the one-line error for another torch, and the one-line
error for a missing CLI binary. Every process has a timeout. The wheel's size and the
install's seconds are printed to the log.

torch without a download: set-up's torch (/opt/brisk/venv, itself a virtual
environment, so `venv --system-site-packages` would not see it) is made visible before
pip runs, in two ways that together look to pip and to the dynamic loader like a torch
installed in the new environment:
  - a .pth file naming set-up's site-packages: pip finds torch 2.14.1 and everything it
    requires (sympy, nvidia-*, ...) "already satisfied" there, so `--no-index` resolves
    `Requires-Dist: torch==2.14.1` for real (a wrong pin would fail the install) without
    any index; it comes after the environment's own site-packages on sys.path, so the
    environment's own packages (brisk) win;
  - a symlink site-packages/torch -> set-up's torch package: `import torch` finds it
    beside brisk, and `$ORIGIN/../torch/lib` in brisk's ELF files resolves as in a normal
    install (a .pth alone would leave brisk's search path pointing at nothing, and the
    CLI would run only thanks to brisk/_cli.py's LD_LIBRARY_PATH fallback).
ensurepip's setuptools (66.1.1) is uninstalled first: torch requires setuptools>=77.0.3,
which set-up's copy (via the .pth) satisfies but pip would otherwise try to upgrade from
the (absent) index.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

from xml.sax.saxutils import escape, quoteattr

SETUP_PYTHON = "/opt/brisk/venv/bin/python3"
# Paths of the build machine nothing in the installed wheel may resolve a library from.
BUILD_PATHS = ("/opt/brisk/libtorch", "/opt/brisk/onednn")
PLUGINS = ("libbrisk_ops_cpu.so", "libbrisk_onednn.so", "libbrisk_aoti.so", "libbrisk_ops_quantized.so")
ONEDNN_LIBS = ("libdnnl.so.3", "libimf.so", "libintlc.so.5")  # brisk/lib: oneDNN and its Intel runtime
FAKE_TORCH_VERSION = "2.0.0"

if len(sys.argv) < 3:
    sys.exit("usage: wheel_install_test.py WHEEL MODEL_PT [test names]")
WHEEL = os.path.abspath(sys.argv[1])
MODEL = os.path.abspath(sys.argv[2])
del sys.argv[1:3]  # the rest: unittest test names (main below)
INPUTS = MODEL[:-len(".pt")] + ".inputs.pt"

TMP = tempfile.mkdtemp(prefix="brisk_wheel.", dir=os.environ.get("TEST_TMPDIR"))
VENV = os.path.join(TMP, "venv")
VPY = os.path.join(VENV, "bin", "python3")
WORK = os.path.join(TMP, "work")  # every process's cwd: an empty folder
# Python's own library folders (Debian's /usr/lib/python3.11, its zip and lib-dynload).
STDLIB_PREFIX = os.path.join(sys.base_prefix, "lib", "python3")


def clean_env(**extra):
    """The environment of a user's shell: nothing of Bazel's, brisk's or Python's own."""
    drop = ("PYTHON", "RUNFILES", "BRISK_", "PIP_", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "LD_PRELOAD")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(drop) and k not in ("TEST_SRCDIR", "JAVA_RUNFILES", "BUILD_WORKING_DIRECTORY",
                                                   "BUILD_WORKSPACE_DIRECTORY")}
    env.update(HOME=os.path.join(TMP, "home"), PATH=os.path.join(VENV, "bin") + ":/usr/bin:/bin",
               PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.update(extra)
    return env


def run(cmd, timeout=300, env=None, check=True):
    """Runs cmd in WORK; returns the CompletedProcess (text). check: fail unless exit 0."""
    try:
        r = subprocess.run(cmd, cwd=WORK, env=env or clean_env(), capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"timed out after {timeout} s: {' '.join(cmd)}\n{e.stdout}\n{e.stderr}") from None
    if check and r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}: {' '.join(cmd)}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


def purelib(python):
    return run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
               env=clean_env()).stdout.strip()


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


class WheelInstallTest(unittest.TestCase):
    site = None

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK)
        os.makedirs(os.path.join(TMP, "home"))
        t0 = time.monotonic()
        run([SETUP_PYTHON, "-m", "venv", VENV], timeout=300)
        run([VPY, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], timeout=120)
        cls.site = purelib(VPY)
        cls.setup_site = setup_site = purelib(SETUP_PYTHON)
        with open(os.path.join(cls.site, "_brisk_test_setup_site.pth"), "w") as f:
            f.write(setup_site + "\n")
        os.symlink(os.path.join(setup_site, "torch"), os.path.join(cls.site, "torch"))
        venv_s = time.monotonic() - t0
        t0 = time.monotonic()
        r = run([VPY, "-m", "pip", "install", "--no-index", WHEEL], timeout=600)
        cls.install_s = time.monotonic() - t0
        cls.pip_log = r.stdout
        cls.pkg = os.path.join(cls.site, "brisk")
        with open(os.path.join(cls.pkg, "_build_info.py")) as f:
            cls.built_torch = re.search(r"torch_version = '([^']+)'", f.read()).group(1)
        size = os.path.getsize(WHEEL)
        print(f"wheel: {os.path.basename(WHEEL)}: {size / 1e6:.1f} MB ({size} bytes)")
        print(f"pip install --no-index of the wheel: {cls.install_s:.1f} s (fresh venv: {venv_s:.1f} s)")
        print(f"environment: {VENV}")
        sys.stdout.flush()

    def test_pip_resolved_torch_without_index(self):
        self.assertRegex(self.pip_log, r"Requirement already satisfied: torch==" + re.escape(self.built_torch))
        self.assertIn("Successfully installed brisk-", self.pip_log)

    def test_wheel_contents(self):
        with zipfile.ZipFile(WHEEL) as z:
            names = set(z.namelist())
            dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
            meta = z.read(f"{dist_info}/METADATA").decode()
            entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
            record = z.read(f"{dist_info}/RECORD").decode()
            modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        for f in ("__init__.py", "__main__.py", "_cli.py", "_lower.py", "_build_info.py", "_brisk.so", "py.typed",
                  "__init__.pyi", "_brisk.pyi", "serve.py", "bin/brisk", "lib/libdnnl.so.3") + PLUGINS:
            self.assertIn("brisk/" + f, names)
        self.assertTrue(modes["brisk/bin/brisk"] & 0o111, "brisk/bin/brisk is not executable in the zip")
        self.assertIn(f"Requires-Dist: torch=={self.built_torch}\n", meta)
        self.assertRegex(meta, r'Requires-Dist: ray\[serve\]==[0-9.]+; extra == "serve"')
        self.assertIn("brisk = brisk._cli:main", entry_points)
        self.assertEqual(len(record.strip().splitlines()), len(names), "RECORD lists every file once")

    def test_import_from_the_environment_only(self):
        out = run([VPY, "-c", "import json, sys, brisk, torch; print(json.dumps({'brisk': brisk.__file__, "
                   "'version': brisk.__version__, 'torch': torch.__version__, 'path': sys.path}))"]).stdout
        info = json.loads(last_line(out))
        self.assertTrue(info["brisk"].startswith(self.pkg + os.sep), info["brisk"])
        self.assertTrue(info["torch"].startswith(self.built_torch), info["torch"])
        self.assertRegex(info["version"], r"^\d+\.\d+\.\d+$")
        # Only the environment (its cwd "" included), Python's own library and set-up's
        # site-packages (the .pth): nothing of bazel-bin, runfiles or the checkout.
        other = [p for p in info["path"] if p and not p.startswith((TMP + os.sep, os.path.realpath(TMP) + os.sep, STDLIB_PREFIX))
                 and p != self.setup_site]
        self.assertEqual(other, [], f"sys.path of the environment: {info['path']}")

    def test_model_from_path_matches_torchscript(self):
        script = r"""
import json, sys, torch, brisk
model, inputs = sys.argv[1], sys.argv[2]
ins = torch.load(inputs)
args, kwargs = ins["args"], ins.get("kwargs", {})
m = brisk.load(model)
got = m(*args, **kwargs)
want = torch.jit.load(model).eval()(*args, **kwargs)
def flat(v):
    if isinstance(v, torch.Tensor): return [v]
    if isinstance(v, (list, tuple)): return [t for x in v for t in flat(x)]
    if isinstance(v, dict): return [t for k in sorted(v) for t in flat(v[k])]
    raise TypeError(type(v))
worst = []
for g, w in zip(flat(got), flat(want), strict=True):
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    scale = max(1.0, w.abs().max().item())  # tolerance scaled to the values
    worst.append((g - w).abs().max().item() / scale)
q = brisk.load(model, precision=["fp16_weights"])  # loads the ops_quantized plugin
q(*args, **kwargs)
maps = sorted({l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if len(l.split(None, 5)) == 6})
print(json.dumps({"worst": worst, "maps": maps, "kernels": m.stats().get("kernels")}))
"""
        info = json.loads(last_line(run([VPY, "-c", script, MODEL, INPUTS]).stdout))
        self.assertTrue(info["worst"], "the model has no tensor outputs")
        self.assertLess(max(info["worst"]), 1e-4, info["worst"])
        maps = info["maps"]
        for plugin in ("libbrisk_ops_cpu.so", "libbrisk_onednn.so", "libbrisk_ops_quantized.so"):
            self.assertIn(os.path.join(os.path.realpath(self.pkg), plugin), maps, f"{plugin} not loaded from the wheel")
        dnnl = [p for p in maps if os.path.basename(p).startswith("libdnnl")]
        self.assertEqual(dnnl, [os.path.join(os.path.realpath(self.pkg), "lib", "libdnnl.so.3")])
        self.assertEqual([p for p in maps if p.startswith(BUILD_PATHS)], [])

    def elf_files(self):
        out = []
        for d, _, files in os.walk(self.pkg):
            for f in files:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    if fh.read(4) == b"\x7fELF":
                        out.append(p)
        return sorted(out)

    def test_elf_search_paths_use_the_installed_torch(self):
        elfs = self.elf_files()
        self.assertEqual({os.path.relpath(p, self.pkg) for p in elfs},
                         {"_brisk.so", "bin/brisk", *PLUGINS, *("lib/" + n for n in ONEDNN_LIBS)})
        torch_lib = os.path.realpath(os.path.join(self.site, "torch", "lib"))
        bundled = os.path.realpath(os.path.join(self.pkg, "lib"))
        for p in elfs:
            dyn = run(["readelf", "-d", p], timeout=60).stdout
            self.assertNotIn("(RPATH)", dyn, p)
            self.assertFalse(any(b in dyn for b in BUILD_PATHS), f"{p}:\n{dyn}")
            for runpath in re.findall(r"\(RUNPATH\)\s+Library runpath: \[([^\]]*)\]", dyn):
                for entry in runpath.split(":"):
                    self.assertTrue(entry.startswith("$ORIGIN"), f"{p}: RUNPATH {runpath}")
            # ldd prints each library as the loader found it: through the RUNPATH, so a
            # torch library is <site>/brisk/../torch/lib/..., a bundled one <site>/brisk/lib/...
            ldd = run(["ldd", p], timeout=60).stdout
            self.assertNotIn("not found", ldd, f"{p}:\n{ldd}")
            self.assertFalse(any(b in ldd for b in BUILD_PATHS), f"{p}:\n{ldd}")
            for name, path in re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M):
                where = os.path.dirname(os.path.realpath(path))
                if name.startswith(("libtorch", "libc10")):
                    self.assertEqual(where, torch_lib, f"{p}: {name} => {path}")
                if name in ONEDNN_LIBS:
                    self.assertEqual(where, bundled, f"{p}: {name} => {path}")

    def test_console_script_run_check(self):
        r = run([os.path.join(VENV, "bin", "brisk"), "run", MODEL, "--check"])
        # A default plugin or delegate brisk cannot find is only a warning ("... not found").
        self.assertNotIn("not found", r.stderr, r.stderr)
        self.assertIn("check: matches the TorchScript interpreter", r.stdout)

    def test_console_script_bench(self):
        r = run([os.path.join(VENV, "bin", "brisk"), "bench", MODEL, "--rounds", "1", "--iters", "5", "--warmup", "1"])
        self.assertNotIn("not found", r.stderr, r.stderr)
        self.assertIn("check: brisk's output matches the TorchScript interpreter", r.stdout)
        # The plugins it loaded, each with its path: the wheel's (BRISK_PLUGIN_PATH from brisk/_cli.py).
        plugins = next((ln for ln in r.stdout.splitlines() if ln.startswith("plugins: ")), "")
        for name in ("ops_cpu", "onednn"):
            self.assertIn(f"{name} ({os.path.join(self.pkg, 'libbrisk_' + name + '.so')})", plugins, r.stdout)

    def test_python_m_brisk_help(self):
        r = run([VPY, "-m", "brisk", "--help"])
        self.assertIn("usage: brisk", r.stdout)

    def test_other_torch_is_one_import_error(self):
        fake = os.path.join(TMP, "fake_torch")
        os.makedirs(os.path.join(fake, "torch"), exist_ok=True)
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write(f"__version__ = {FAKE_TORCH_VERSION!r}\n")
        env = clean_env(PYTHONPATH=fake)
        for cmd in ([VPY, "-c", "import brisk"], [os.path.join(VENV, "bin", "brisk"), "help"]):
            r = run(cmd, env=env, check=False)
            self.assertNotEqual(r.returncode, 0, cmd)
            line = last_line(r.stderr)
            self.assertTrue(line.startswith("ImportError: brisk "), r.stderr)
            self.assertIn(f"torch {self.built_torch}", line)
            self.assertIn(f"torch is {FAKE_TORCH_VERSION}", line)
            self.assertEqual(len(re.findall(r"^\w+Error: ", r.stderr, re.M)), 1, r.stderr)  # no chained errors

    def test_missing_cli_binary_is_one_line(self):
        exe = os.path.join(self.pkg, "bin", "brisk")
        os.rename(exe, exe + ".away")
        try:
            r = run([os.path.join(VENV, "bin", "brisk"), "help"], check=False)
        finally:
            os.rename(exe + ".away", exe)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("brisk: error: "), r.stderr)


def tearDownModule():
    # Bazel empties $TEST_TMPDIR itself; by hand, BRISK_KEEP_TMP=1 keeps the environment.
    if not os.environ.get("TEST_TMPDIR") and not os.environ.get("BRISK_KEEP_TMP"):
        shutil.rmtree(TMP, ignore_errors=True)


def main():
    """unittest's main, plus one JUnit <testcase> per test in $XML_OUTPUT_FILE, which
    tools/count_tests.py counts (tests/python/junit.py's format; that file is visible to
    tests/differential only)."""
    cases = []

    class Result(unittest.TextTestResult):
        def startTest(self, test):
            self._t0 = time.monotonic()
            super().startTest(test)

        def _case(self, test, kind, err=None):
            text = self._exc_info_to_string(err, test) if err else ""
            cases.append((getattr(test, "_testMethodName", str(test)), time.monotonic() - getattr(self, "_t0", 0),
                          kind, text))

        def addSuccess(self, test):
            super().addSuccess(test)
            self._case(test, None)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._case(test, "failure", err)

        def addError(self, test, err):
            super().addError(test, err)
            self._case(test, "error", err)

    loader = unittest.defaultTestLoader
    module = sys.modules[__name__]
    suite = loader.loadTestsFromNames(sys.argv[1:], module) if sys.argv[1:] else loader.loadTestsFromModule(module)
    result = unittest.TextTestRunner(verbosity=2, resultclass=Result, stream=sys.stdout).run(suite)
    out = os.environ.get("XML_OUTPUT_FILE")
    if out:
        bad = sum(1 for c in cases if c[2])
        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 f'<testsuites><testsuite name="wheel_install_test" tests="{len(cases)}" failures="{bad}">']
        for name, secs, kind, text in cases:
            lines.append(f'<testcase classname="WheelInstallTest" name={quoteattr(name)} time="{secs:.3f}">')
            if kind:
                lines.append(f'<{kind} message={quoteattr(last_line(text) or kind)}>{escape(text)}</{kind}>')
            lines.append("</testcase>")
        lines.append("</testsuite></testsuites>")
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
