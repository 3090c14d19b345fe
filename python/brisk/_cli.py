"""The `brisk` command of the wheel (console script `brisk = brisk._cli:main`, and
`python -m brisk`): replaces this process with the CLI the wheel carries, brisk/bin/brisk
(tools/brisk_main.cc), passing the arguments through (`brisk run model.pt --check`,
`brisk bench model.pt`, `brisk help`).

The CLI finds its plugins through BRISK_PLUGIN_PATH, which gets this package's directory
first (where the wheel puts libbrisk_*.so; the caller's own directories follow, as with
brisk.load). It finds torch's libraries through its search path, `$ORIGIN/../../torch/lib`:
the torch package installed beside brisk. When the torch this Python imports lives
elsewhere (another site directory, a .pth entry), that torch's lib/ goes on
LD_LIBRARY_PATH, so the CLI runs on the same torch `import brisk` checked.
"""
import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def binary():
    """Where the wheel puts the CLI."""
    return os.path.join(_PACKAGE, "bin", "brisk")


def _torch_lib():
    """lib/ of the torch this interpreter imports (brisk/__init__.py has imported it)."""
    torch = sys.modules.get("torch")
    origin = getattr(torch, "__file__", None)
    if not origin:
        import importlib.util  # noqa: PLC0415 - only when brisk was not imported normally
        spec = importlib.util.find_spec("torch")
        origin = spec.origin if spec else None
    return os.path.join(os.path.dirname(origin), "lib") if origin else None


def _environment():
    env = dict(os.environ)
    own = [d for d in env.get("BRISK_PLUGIN_PATH", "").split(os.pathsep) if d]
    env["BRISK_PLUGIN_PATH"] = os.pathsep.join([_PACKAGE] + own)
    torch_lib = _torch_lib()
    beside = os.path.join(os.path.dirname(_PACKAGE), "torch", "lib")
    if torch_lib and os.path.isdir(torch_lib) and os.path.realpath(torch_lib) != os.path.realpath(beside):
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = torch_lib + (os.pathsep + old if old else "")
    return env


def main(argv=None):
    """Runs brisk/bin/brisk with argv (default: sys.argv[1:]); returns 2 only when it cannot."""
    args = sys.argv[1:] if argv is None else list(argv)
    exe = binary()
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        print(f"brisk: error: the brisk command-line binary is missing ({exe} is not an executable file); "
              "reinstall the brisk wheel (in a source tree: bazel run //tools:brisk -- ...)", file=sys.stderr)
        return 2
    env = _environment()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(exe, [exe] + args, env)
    except OSError as e:
        print(f"brisk: error: cannot run {exe}: {e}", file=sys.stderr)
        return 2
    return 2  # not reached: execve does not return


if __name__ == "__main__":
    sys.exit(main())
