"""Shared set-up of the Python binding tests: skip (exit 77, which CTest
reports as skipped) when numpy is missing; import vocis from the source tree."""
import os
import sys

SKIP = 77


def require_numpy():
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("SKIPPED: %s has no numpy (Debian: apt-get install python3-numpy)" % sys.executable)
        sys.exit(SKIP)


def import_vocis():
    """The package from bindings/python of this source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.normpath(os.path.join(here, "..", "..", "bindings", "python")))
    import vocis
    return vocis
