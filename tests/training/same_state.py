"""Checks that two `systole train` checkpoints hold the same state, byte for byte: every array
but arr_0 (steps and device cycles, which a pod's modelled exchange changes) — the 8 state
arrays of the MLP with SGD. Shared by the pod tests.
    same_state.py POD.npz ONE.npz WHAT"""
import sys
import zipfile

a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
what = sys.argv[3]
names = sorted(n for n in a.namelist() if n != "arr_0.npy")
assert names == sorted(n for n in b.namelist() if n != "arr_0.npy") and len(names) == 8, names
for n in names:
    assert a.read(n) == b.read(n), f"{n} differs between {what} and one device"
print(f"{what}: {len(names)} state arrays bit-identical to one device")
