"""Plugin files a user may hand brisk by mistake: a truncated or damaged .so (dlopen would
fault on it: SIGBUS), and a copy of a loaded plugin from another folder (it would register
every name again and break every later load in the process). Each case runs in a fresh
Python process, so a crash is a failed test rather than a lost run, and the order of
loads is the one under test."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

os.environ.setdefault("OMP_NUM_THREADS", "1")
import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
OPS_CPU = os.path.join(os.path.dirname(brisk.__file__), "libbrisk_ops_cpu.so")

# Loads mlp with each plugin list in turn, runs it against the interpreter, and prints
# one line per load: "ok" or "error: <message>".
SCRIPT = textwrap.dedent("""
    import sys, torch, brisk
    torch.set_num_threads(1)
    zoo, loads = sys.argv[1], sys.argv[2:]
    x = torch.load(zoo + "/mlp.inputs.pt")["args"][0]
    expected = torch.jit.load(zoo + "/mlp.pt")(x)
    for load in loads:  # "default", "path:<plugin file>" or "dir:<folder searched first>"
        kind, _, arg = load.partition(":")
        kw = {"plugins": [arg]} if kind == "path" else {"plugin_path": [arg]} if kind == "dir" else {}
        try:
            m = brisk.load(zoo + "/mlp.pt", **kw)
            got = m(x)
            print("ok" if torch.allclose(got, expected, rtol=1e-5, atol=1e-5) else "wrong result")
        except brisk.Error as e:
            print("error: " + str(e).replace("\\n", " | "))
""")


def run_loads(*loads):
    p = subprocess.run([sys.executable, "-c", SCRIPT, ZOO, *loads], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout.splitlines(), p.stderr


class PluginFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_truncated_plugin_is_one_error(self):
        with open(OPS_CPU, "rb") as f:
            head = f.read(100000)  # head -c 100000 libbrisk_ops_cpu.so > t.so
        damaged = os.path.join(self.dir, "t.so")
        with open(damaged, "wb") as f:
            f.write(head)
        rc, lines, err = run_loads("path:" + damaged, "default")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 2, lines)
        self.assertTrue(lines[0].startswith("error: "), lines)
        self.assertIn("t.so", lines[0])
        self.assertIn("truncated", lines[0])
        self.assertNotIn("|", lines[0], "one line")
        self.assertEqual(lines[1], "ok", "the process goes on loading models")

    def test_copy_in_another_folder(self):
        # `import brisk` loads the default plugins (their options document the keywords),
        # so a copy always comes second: by path it is refused without registering
        # anything, and a search path that finds it first is served by the loaded one.
        copy = os.path.join(self.dir, "libbrisk_ops_cpu.so")
        shutil.copy(OPS_CPU, copy)
        rc, lines, err = run_loads("default", "path:" + copy, "dir:" + self.dir, "default")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 4, lines)
        self.assertEqual(lines[0], "ok")
        self.assertTrue(lines[1].startswith("error: "), lines)
        self.assertIn("second copy of plugin 'ops_cpu'", lines[1])
        self.assertEqual(lines[2:], ["ok", "ok"], "a refused copy leaves later loads working")

if __name__ == "__main__":
    junit.main("plugin_files_test")
