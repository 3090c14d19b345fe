"""Writes brisk's wheel from built artifacts (run by //tools/wheel:wheel; stdlib + patchelf).

    build_wheel.py --out dist/brisk-0.1.0-cp311-cp311-linux_x86_64.whl \
        --package-file site/brisk/__init__.py ... --package-file site/brisk/_brisk.so ... \
        --cli bazel-bin/tools/brisk --bundle-lib /opt/brisk/onednn/lib/libdnnl.so.3 ... \
        --torch-lib-dir /opt/brisk/libtorch/lib --requirements tools/requirements.txt

Layout of the wheel (installed into site-packages/, beside torch/):

    brisk/              every --package-file (the .py files, _build_info.py, the stubs,
                        py.typed, the extension _brisk.so and the libbrisk_*.so plugins)
    brisk/bin/brisk     the CLI (--cli), run by the `brisk` console script (brisk/_cli.py)
    brisk/lib/          the non-torch, non-system libraries the ELF files need (oneDNN and
                        its Intel runtime), from --bundle-lib, with their licenses
    brisk-V.dist-info/  METADATA (Requires-Dist: torch==<the torch of _build_info.py>,
                        extra `serve`), WHEEL, entry_points.txt, RECORD, LICENSE if given

Every ELF file's search path is rewritten (patchelf) to find torch's libraries in the
installed torch package, `$ORIGIN/../torch/lib` from brisk/ (`$ORIGIN/../../torch/lib`
from brisk/bin and brisk/lib), and the bundled ones in brisk/lib. Nothing keeps a path of
the build machine (/opt/brisk/libtorch, /opt/brisk/onednn). A library an ELF file needs
is classified by its name: a bundled one (--bundle-lib), one of torch's (present in
--torch-lib-dir), else a system library found by the dynamic loader's default search
(it must not sit in a non-system directory of the file's old search path: that is an
undeclared dependency, an error). The zip is reproducible: sorted entries, fixed times.
"""
import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from build_info import read_build_info  # beside this file (sys.path[0])

# Directories the dynamic loader searches without being told (Debian x86-64), where an
# ELF file's system libraries may live.
SYSTEM_LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/lib/x86_64-linux-gnu",
                   "/usr/lib/x86_64-linux-gnu", "/usr/local/lib")

SUMMARY = "brisk: a static-graph CPU inference runtime for TorchScript models and torch.export PT2 archives"

DESCRIPTION = """\
brisk loads a TorchScript file (torch.jit.save) or a torch.export PT2 archive and runs it on
its own kernels, with oneDNN delegates and reduced-precision plugins.

    import torch, brisk
    m = brisk.load("model.pt")
    y = m(torch.randn(1, 3, 224, 224))

The `brisk` command (also `python -m brisk`) runs, benchmarks and inspects models:
`brisk run model.pt --check`, `brisk bench model.pt`, `brisk help`.

This wheel is built against one torch release and requires exactly it; it finds torch's
libraries in the installed torch package. It needs a Debian 12 x86-64 system with brisk's
runtime libraries (glog, gflags, TBB).
"""

FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def fail(msg):
    raise SystemExit(f"build_wheel.py: error: {msg}")


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


class Patchelf:
    def __init__(self, exe):
        self.exe = shutil.which(exe) or fail(f"{exe} not found (tools/setup.sh installs patchelf)")

    def _run(self, *args):
        r = subprocess.run([self.exe, *args], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"patchelf {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def needed(self, path):
        return self._run("--print-needed", path).split()

    def rpath(self, path):
        return [d for d in self._run("--print-rpath", path).strip().split(":") if d]

    def set_rpath(self, path, dirs):
        if dirs:
            self._run("--set-rpath", ":".join(dirs), path)
        else:
            self._run("--remove-rpath", path)


def torch_pin(requirements):
    """The X of `torch==X` in a requirements file."""
    with open(requirements) as f:
        for line in f:
            m = re.fullmatch(r"torch\s*==\s*([^\s;#]+)", line.split("#", 1)[0].strip())
            if m:
                return m.group(1)
    fail(f"{requirements} pins no torch==VERSION")


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class Elf:
    """One ELF file of the wheel: where it goes, what it needs."""

    def __init__(self, src, dest, origin_dir):
        self.src, self.dest, self.origin_dir = src, dest, origin_dir
        self.torch = self.bundled = False


def classify(pe, elf, torch_lib_dir, bundle, system_seen):
    """Sets elf.torch / elf.bundled; returns the names of the bundled libraries it needs."""
    torch_real = os.path.realpath(torch_lib_dir)
    old_dirs = [d.replace("$ORIGIN", elf.origin_dir).replace("${ORIGIN}", elf.origin_dir)
                for d in pe.rpath(elf.src)]
    wants = []
    for name in pe.needed(elf.src):
        if name in bundle:
            elf.bundled = True
            wants.append(name)
        elif os.path.exists(os.path.join(torch_real, name)):
            elf.torch = True
        else:
            for d in old_dirs:
                if os.path.exists(os.path.join(d, name)) and os.path.realpath(d) not in map(os.path.realpath,
                                                                                             SYSTEM_LIB_DIRS):
                    fail(f"{elf.dest} needs {name}, found in {d} (its build-time search path), which is neither "
                         f"torch's library directory nor a system one: pass it as --bundle-lib")
            system_seen.setdefault(name, set()).add(elf.dest)
    return wants


def relative_dir(target, from_dir):
    """`$ORIGIN`-relative path from the wheel directory from_dir to the wheel directory target."""
    rel = os.path.relpath(target, from_dir)
    return "$ORIGIN" if rel == "." else "$ORIGIN/" + rel


def main(argv):
    p = argparse.ArgumentParser(description="Writes brisk's wheel from built artifacts.")
    p.add_argument("--out", required=True, help="the wheel file to write (its name is checked)")
    p.add_argument("--package-file", action="append", default=[], required=True,
                   help="a file of the brisk/ package (repeatable): must include _build_info.py")
    p.add_argument("--cli", required=True, help="the brisk CLI binary (-> brisk/bin/brisk)")
    p.add_argument("--bundle-lib", action="append", default=[],
                   help="a library to carry in brisk/lib when an ELF file needs it (repeatable)")
    p.add_argument("--bundle-license", action="append", default=[], metavar="NAME=FILE",
                   help="a bundled library's license (-> brisk/lib/LICENSE.NAME.txt)")
    p.add_argument("--torch-lib-dir", required=True, help="torch's lib/ that brisk was linked against")
    p.add_argument("--requirements", help="requirements file whose torch pin must equal the build's torch")
    p.add_argument("--serve-ray-version", required=True, help="ray[serve] version of the `serve` extra")
    p.add_argument("--python-tag", default="cp311")
    p.add_argument("--platform-tag", default="linux_x86_64")
    p.add_argument("--license", help="brisk's license file (-> dist-info/LICENSE)")
    p.add_argument("--patchelf", default="patchelf")
    p.add_argument("--verbose", action="store_true", help="print each ELF file's libraries and search path")
    a = p.parse_args(argv)

    here_tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    if a.python_tag != here_tag:
        fail(f"the wheel is tagged {a.python_tag} but this is Python {sys.version.split()[0]} ({here_tag}): "
             "run it with the Python the extension was built for (/opt/brisk/venv/bin/python3)")

    by_name = {}
    for f in a.package_file:
        name = os.path.basename(f)
        if name in by_name:
            fail(f"two package files named {name}: {by_name[name]} and {f}")
        by_name[name] = f
    if "_build_info.py" not in by_name or "__init__.py" not in by_name:
        fail("the package files must include __init__.py and _build_info.py")
    version, torch_version = read_build_info(by_name["_build_info.py"])
    if a.requirements:
        pinned = torch_pin(a.requirements)
        if pinned != torch_version:
            fail(f"brisk was compiled against torch {torch_version} (the headers of --torch-lib-dir's torch) but "
                 f"{a.requirements} pins torch=={pinned}; run tools/setup.sh and rebuild")

    dist_name = f"brisk-{version}"
    wheel_name = f"{dist_name}-{a.python_tag}-{a.python_tag}-{a.platform_tag}.whl"
    if os.path.basename(a.out) != wheel_name:
        fail(f"--out is named {os.path.basename(a.out)}, but this wheel is {wheel_name} "
             "(tools/wheel/version.bzl and brisk/_build_info.py disagree?)")
    dist_info = f"{dist_name}.dist-info"

    bundle = {}
    for f in a.bundle_lib:
        bundle[os.path.basename(f)] = f
    pe = Patchelf(a.patchelf)

    with tempfile.TemporaryDirectory(prefix="brisk_wheel.") as stage:
        entries = {}  # wheel path -> staged file
        elfs = []

        def add(src, dest):
            if dest in entries:
                fail(f"{dest} twice in the wheel")
            staged = os.path.join(stage, dest)
            os.makedirs(os.path.dirname(staged), exist_ok=True)
            shutil.copyfile(src, staged)  # follows Bazel's symlinks; drops read-only modes
            entries[dest] = staged
            if is_elf(staged):
                elfs.append(Elf(staged, dest, os.path.dirname(os.path.realpath(src))))

        for name in sorted(by_name):
            add(by_name[name], "brisk/" + name)
        add(a.cli, "brisk/bin/brisk")

        # Which bundled libraries are needed, transitively (libdnnl.so.3 needs libimf.so).
        system_seen = {}
        queue = list(elfs)
        carried = set()
        while queue:
            elf = queue.pop(0)
            for name in classify(pe, elf, a.torch_lib_dir, bundle, system_seen):
                if name not in carried:
                    carried.add(name)
                    before = len(elfs)
                    add(bundle[name], "brisk/lib/" + name)
                    queue.extend(elfs[before:])
        for name in sorted(set(bundle) - carried):
            if a.verbose:
                print(f"build_wheel.py: {name} is not needed by any file; not carried", file=sys.stderr)
        for spec in a.bundle_license:
            name, _, f = spec.partition("=")
            if not f:
                fail(f"--bundle-license {spec!r}: expected NAME=FILE")
            add(f, f"brisk/lib/LICENSE.{name}.txt")

        for elf in elfs:
            here = os.path.dirname(elf.dest)
            dirs = []
            if elf.torch:
                dirs.append(relative_dir("torch/lib", here))
            if elf.bundled:
                dirs.append(relative_dir("brisk/lib", here))
            pe.set_rpath(elf.src, dirs)
            got = pe.rpath(elf.src)
            if got != dirs:
                fail(f"{elf.dest}: search path is {got} after patchelf, expected {dirs}")
            if a.verbose:
                print(f"build_wheel.py: {elf.dest}: RUNPATH {':'.join(dirs) or '(none)'}; needs "
                      f"{' '.join(pe.needed(elf.src))}", file=sys.stderr)
        if a.verbose and system_seen:
            print("build_wheel.py: system libraries (not carried): " + " ".join(sorted(system_seen)),
                  file=sys.stderr)

        meta = [
            "Metadata-Version: 2.1",
            "Name: brisk",
            f"Version: {version}",
            f"Summary: {SUMMARY}",
            f"Requires-Python: =={sys.version_info.major}.{sys.version_info.minor}.*",
            f"Requires-Dist: torch=={torch_version}",
            "Provides-Extra: serve",
            f'Requires-Dist: ray[serve]=={a.serve_ray_version}; extra == "serve"',
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: Programming Language :: C++",
            "Classifier: Programming Language :: Python :: 3.11",
        ]
        if a.license:
            meta.append("License-File: LICENSE")
        meta += ["Description-Content-Type: text/markdown", "", DESCRIPTION]
        generated = {
            f"{dist_info}/METADATA": "\n".join(meta),
            f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: brisk tools/wheel/build_wheel.py\n"
                                  f"Root-Is-Purelib: false\nTag: {a.python_tag}-{a.python_tag}-{a.platform_tag}\n",
            f"{dist_info}/entry_points.txt": "[console_scripts]\nbrisk = brisk._cli:main\n",
            f"{dist_info}/top_level.txt": "brisk\n",
        }
        if a.license:
            with open(a.license) as f:
                generated[f"{dist_info}/LICENSE"] = f.read()

        executable = {e.dest for e in elfs}
        record = []
        tmp_out = a.out + ".tmp"
        with zipfile.ZipFile(tmp_out, "w", zipfile.ZIP_DEFLATED) as z:
            def write(path, data, mode):
                info = zipfile.ZipInfo(path, FIXED_ZIP_TIME)
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data, compresslevel=6)
                record.append(f"{path},{record_hash(data)},{len(data)}")

            for dest in sorted(entries):
                with open(entries[dest], "rb") as f:
                    write(dest, f.read(), 0o755 if dest in executable else 0o644)
            for dest in sorted(generated):
                write(dest, generated[dest].encode(), 0o644)
            record.append(f"{dist_info}/RECORD,,")
            info = zipfile.ZipInfo(f"{dist_info}/RECORD", FIXED_ZIP_TIME)
            info.external_attr = 0o100644 << 16
            z.writestr(info, "\n".join(record) + "\n", compress_type=zipfile.ZIP_DEFLATED)
        os.replace(tmp_out, a.out)
    if a.verbose:
        print(f"build_wheel.py: wrote {a.out} ({os.path.getsize(a.out) / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
