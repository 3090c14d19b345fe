"""The brisk wheel's version and tags: the one place they are written.

Read by tools/wheel/BUILD.bazel (the wheel's file name and METADATA) and by
python/BUILD.bazel (brisk/_build_info.py, so `brisk.__version__` of the in-tree package
and of the wheel agree). The torch version is not here: it is read from the torch headers
brisk compiles against (python/BUILD.bazel's :site_build_info), and the wheel build
checks it against tools/requirements.txt's pin.
"""

BRISK_VERSION = "0.1.0"

# The extension is compiled against Debian 12's Python 3.11 headers (python/BUILD.bazel's
# PYTHON_COPTS); build_wheel.py refuses to run under another interpreter version.
PYTHON_TAG = "cp311"

# Not manylinux: the binaries need Debian 12's glog, gflags and TBB libraries (listed by
# `build_wheel.py --verbose`), which the wheel does not carry.
PLATFORM_TAG = "linux_x86_64"

# The `serve` extra's pin (`pip install brisk[serve]`). tools/requirements-serve.txt did
# not exist when the wheel was written; 2.60.0 is PyPI's Ray at that time (and the one in
# /opt/brisk/venv). Keep it equal to that file's pin once it lands.
SERVE_RAY_VERSION = "2.60.0"

WHEEL_NAME = "brisk-%s-%s-%s-%s.whl" % (BRISK_VERSION, PYTHON_TAG, PYTHON_TAG, PLATFORM_TAG)
