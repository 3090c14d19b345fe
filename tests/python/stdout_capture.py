"""What a call prints on file descriptor 1, for comparing brisk's prim::Print with the
interpreter's: both write through C++ (std::cout or a print handler), which Python's
sys.stdout redirection would not see."""
import ctypes
import os
import sys
import tempfile

_libc = ctypes.CDLL(None)


def capture_stdout(fn):
    """Runs fn() with fd 1 redirected to a temporary file; returns (result, printed text).
    Flushes Python's and C's buffers on both sides so nothing crosses the boundary."""
    sys.stdout.flush()
    _libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            result = fn()
        finally:
            sys.stdout.flush()
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        text = f.read().decode(errors="replace")
    return result, text
