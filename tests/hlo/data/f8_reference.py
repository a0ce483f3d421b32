"""Writes f8_reference.txt beside this file: what ml_dtypes (the f8 types JAX and XLA use)
makes of float32 values converted to float8_e4m3fn and float8_e5m2 — every value of each
format, the midpoints between neighbours (ties to even) and just beside them, values beyond
the largest finite one, infinities, NaN, subnormals and random float32 values. The HLO
interpreter's rounding (hlo::RoundToType) is checked against it in tests/hlo/f8_test.cpp.

    .venv/bin/python tests/hlo/data/f8_reference.py
"""
import os

import ml_dtypes
import numpy as np


def cases(f8):
    values = np.arange(256, dtype=np.uint8).view(f8).astype(np.float32)
    finite = np.unique(values[np.isfinite(values)])
    middles = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    beside = np.concatenate([np.nextafter(middles.astype(np.float32), np.float32(np.inf)),
                             np.nextafter(middles.astype(np.float32), np.float32(-np.inf))])
    top = float(finite.max())
    rng = np.random.default_rng(8)
    random = (rng.standard_normal(2000) * np.exp2(rng.integers(-20, 20, 2000))).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, top * 1.03, top * 1.07, top * 2, 1e30,
                         -top * 1.07, 1e-30, -1e-30, 2.0 ** -150], np.float32)
    return np.concatenate([values, middles.astype(np.float32), beside, random, specials]).astype(np.float32)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    lines = ["# type  float32 input bits  result as float32 bits (nan: any NaN); written by f8_reference.py"]
    for name, f8 in (("f8e4m3fn", ml_dtypes.float8_e4m3fn), ("f8e5m2", ml_dtypes.float8_e5m2)):
        inputs = cases(f8)
        results = inputs.astype(f8).astype(np.float32)
        for x, y in zip(inputs, results):
            expected = "nan" if np.isnan(y) else f"0x{int(np.float32(y).view(np.uint32)):08x}"
            lines.append(f"{name} 0x{int(np.float32(x).view(np.uint32)):08x} {expected}")
    with open(os.path.join(here, "f8_reference.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote f8_reference.txt: {len(lines) - 1} cases (ml_dtypes {ml_dtypes.__version__})")


if __name__ == "__main__":
    main()
