#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_server (tests/fuzz/corpus/fuzz_server/): request sequences in
that fuzzer's input format (u8 type, u16 length LE, payload) that reach deep into the device
host: a HELLO, then allocations, transfers, register writes, a launch and a WAIT.
Run it again after changing the protocol: python3 tests/fuzz/make_server_seeds.py"""
import pathlib
import struct

HELLO, READ_REG, WRITE_REG, READ_MEM, WRITE_MEM, ALLOCATE, FREE, WAIT = range(1, 9)
CTRL, STATUS, CMD_PC_LO, CMD_COUNT, DOORBELL = 0x40, 0x44, 0x60, 0x68, 0x6C
TEXT, DATA = 0x10000, 0x20000


def request(kind, payload=b""):
    return struct.pack("<BH", kind, len(payload)) + payload


def hello():
    return request(HELLO, struct.pack("<HI", 1, 0))


def allocate(address, size):
    return request(ALLOCATE, struct.pack("<QQBQ", size, 256, 1, address))


def write_reg(offset, value):
    return request(WRITE_REG, struct.pack("<II", offset, value))


def insn(opcode, fields=0):
    """A 32-byte instruction: opcode in bits 7:0, `fields` (an int) above it."""
    return (opcode | fields).to_bytes(32, "little")


def load(mem, dram, stride, row, rows, elems):
    return insn(0x01, mem << 18 | dram << 32 | stride << 80 | row << 112 | rows << 152 | elems << 168)


def launch(words):
    text = b"".join(words)
    return (allocate(TEXT, 4096) + request(WRITE_MEM, struct.pack("<Q", TEXT) + text) +
            write_reg(CMD_PC_LO, TEXT) + write_reg(CMD_COUNT, len(words)) + write_reg(DOORBELL, 1) +
            request(WAIT, struct.pack("<I", 1000)) + request(READ_REG, struct.pack("<I", STATUS)))


seeds = {
    "hello": hello(),
    "memory": hello() + allocate(DATA, 4096) +
              request(WRITE_MEM, struct.pack("<Q", DATA) + bytes(range(64))) +
              request(READ_MEM, struct.pack("<QI", DATA, 64)) + request(FREE, struct.pack("<Q", DATA)),
    "halt": hello() + launch([insn(0x0A)]),
    "load_store": hello() + allocate(DATA, 4096) +
                  launch([load(0, DATA, 4, 0, 4, 4), insn(0x02, DATA << 32 | 4 << 80 | 4 << 152 | 4 << 168),
                          insn(0x0A)]),
    "refused": hello() + launch([load(0, 0x80000, 4, 0, 1, 4), insn(0x0A)]),
    "abort": hello() + launch([insn(0x08)] * 8 + [insn(0x0A)]) + write_reg(CTRL, 2),
    "errors": hello() + request(READ_REG, struct.pack("<I", 0x1F0)) + request(0x55) +
              request(0x80 | READ_REG, struct.pack("<I", 0)) + hello(),
}
directory = pathlib.Path(__file__).parent / "corpus" / "fuzz_server"
directory.mkdir(parents=True, exist_ok=True)
for name, data in seeds.items():
    (directory / name).write_bytes(data)
print(f"{len(seeds)} seeds in {directory}")
