"""Writes brisk/_build_info.py: brisk's version and the torch version brisk is compiled
against, which brisk/__init__.py compares with the imported torch's before it loads the
extension.

    build_info.py --version 0.1.0 --torch-version-header .../torch/headeronly/version.h --out F

The torch version comes from the headers Bazel compiles with (@torch, the wheel's
include/), not from a constant, so the file cannot disagree with the build. Run by
python/BUILD.bazel's :site_build_info; build_wheel.py reads the result. Stdlib only.
"""
import argparse
import re
import sys


def torch_version_from_header(path):
    """MAJOR.MINOR.PATCH from torch/headeronly/version.h's TORCH_VERSION_* macros."""
    with open(path) as f:
        text = f.read()
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"^\s*#\s*define\s+TORCH_VERSION_%s\s+(\d+)\s*$" % name, text, re.M)
        if not m:
            raise SystemExit(f"build_info.py: error: no TORCH_VERSION_{name} in {path}")
        parts.append(m.group(1))
    return ".".join(parts)


def read_build_info(path):
    """(version, torch_version) of a written _build_info.py."""
    values = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), values)  # noqa: S102 - our own generated file
    return values["version"], values["torch_version"]


def render(version, torch_version):
    return (
        '"""Written at build time by tools/wheel/build_info.py: do not edit."""\n'
        f"version = {version!r}  # brisk's (tools/wheel/version.bzl)\n"
        f"torch_version = {torch_version!r}  # the torch brisk's C++ was compiled against\n")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", required=True)
    p.add_argument("--torch-version-header", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    if not re.fullmatch(r"\d+(\.\d+)*", a.version):
        raise SystemExit(f"build_info.py: error: version {a.version!r} is not N.N.N")
    with open(a.out, "w") as f:
        f.write(render(a.version, torch_version_from_header(a.torch_version_header)))


if __name__ == "__main__":
    main(sys.argv[1:])
