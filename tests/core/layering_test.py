"""No layer of core includes a layer above it; plugins see only the plugin API.

The layer order is core/layers.txt. The plugin API is the headers of the three targets
plugins compile against (//core/common:api, //core/graph:api, //core/kernels:plugin_api),
read from their BUILD files so that the rule cannot drift from what the build offers.
planners/ and threading/ sit beside core and include nothing of it. Every file is read
through a `layering_sources` filegroup, so Bazel re-runs this test when any of them
changes.
"""
import os
import re
import sys
import unittest

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PLUGIN_DIRS = ("ops_cpu/", "delegates/", "ops_quantized/")
CORE_FREE_DIRS = ("planners/", "threading/")


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def layers():
    """[(rank, unit)] from core/layers.txt."""
    out = []
    for line in read("core/layers.txt").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.extend((len({r for r, _ in out}), u) for u in line.split())
    return out


def unit_of(path, units):
    """The longest unit containing `path`, or None outside core's layers."""
    best = None
    for rank, u in units:
        if path == u or path.startswith(u.rstrip("/") + "/"):
            if best is None or len(u) > len(best[1]):
                best = (rank, u)
    return best


def plugin_api():
    headers = set()
    for build, target in (("core/common", "api"), ("core/graph", "api"), ("core/kernels", "plugin_api")):
        text = read(build + "/BUILD.bazel")
        m = re.search(r'name = "%s",\s*hdrs = \[(.*?)\]' % target, text, re.S)
        assert m, f"{build}:{target} has no hdrs list"
        headers.update(f"{build}/{h}" for h in re.findall(r'"([^"]+\.h)"', m.group(1)))
    return headers


def sources():
    for d, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith((".h", ".cc")):
                rel = os.path.relpath(os.path.join(d, f), ROOT)
                if rel.startswith(("core/", "planners/", "threading/") + PLUGIN_DIRS):
                    yield rel


def includes(rel):
    return INCLUDE.findall(read(rel))


class Layering(unittest.TestCase):
    def setUp(self):
        self.files = sorted(sources())
        self.assertGreater(len([f for f in self.files if f.startswith("core/")]), 100,
                           "the test sees too few of core's files: a layering_sources filegroup is missing")

    def test_no_layer_includes_a_layer_above_it(self):
        units = layers()
        bad = []
        for f in self.files:
            own = unit_of(f, units)
            if own is None:
                continue
            for h in includes(f):
                other = unit_of(h, units)
                if other is None or other[1] == own[1]:
                    continue
                if other[0] >= own[0]:
                    bad.append(f"{f} ({own[1]}) includes {h} ({other[1]}, "
                               f"{'a peer' if other[0] == own[0] else 'above it'})")
        self.assertEqual(bad, [], "\n".join(bad))

    def test_every_core_file_has_a_layer(self):
        units = layers()
        stray = [f for f in self.files if f.startswith("core/") and unit_of(f, units) is None]
        self.assertEqual(stray, [], "files of core in no layer of core/layers.txt")

    def test_plugins_include_only_the_plugin_api(self):
        api = plugin_api()
        bad = [f"{f} includes {h}" for f in self.files if f.startswith(PLUGIN_DIRS)
               for h in includes(f) if h.startswith("core/") and h not in api]
        self.assertEqual(bad, [], "\n".join(bad))

    def test_planners_and_threading_include_nothing_of_core(self):
        bad = [f"{f} includes {h}" for f in self.files if f.startswith(CORE_FREE_DIRS)
               for h in includes(f) if h.startswith("core/")]
        self.assertEqual(bad, [], "\n".join(bad))


if __name__ == "__main__":
    unittest.main(verbosity=2)
