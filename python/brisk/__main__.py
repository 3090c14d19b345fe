"""`python -m brisk ARGS`: the same as the `brisk` command (brisk/_cli.py)."""
import sys

from brisk._cli import main

if __name__ == "__main__":
    sys.exit(main())
