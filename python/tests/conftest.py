"""Shared fixtures. The suites run from CTest (python/CMakeLists.txt: `python.pytest`) with
PYTHONPATH=BUILD/python and the .venv's interpreter, or by hand:

    PYTHONPATH=build/python .venv/bin/python -m pytest python/tests
"""
import os
from pathlib import Path

import pytest

import systole

SOURCE_DIR = Path(os.environ.get("SYSTOLE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SHARED_DIR = Path(os.environ.get("SYSTOLE_SHARED_DIR", SOURCE_DIR.parent / "shared"))
# CTest says whether the build has the Verilated RTL (SYSTOLE_RTL); by hand, try to open it.
BUILT_RTL = os.environ.get("SYSTOLE_BUILT_RTL")


@pytest.fixture(scope="session")
def ref():
    return systole.Device("ref", config="small")


@pytest.fixture(scope="session")
def rtl_available():
    if BUILT_RTL is not None:
        return BUILT_RTL.upper() in ("1", "ON", "TRUE", "YES")
    try:
        systole.Device("rtl", config="small")
        return True
    except systole.DeviceError:
        return False


def relative_error(actual, expected):
    """max |actual - expected| / max |expected| over the array (the compiler tests' measure,
    docs/COMPILER.md "Numerics and tolerances")."""
    import numpy as np

    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, (a.shape, e.shape)
    scale = np.max(np.abs(e))
    return float(np.max(np.abs(a - e)) / scale) if scale > 0 else float(np.max(np.abs(a)))
