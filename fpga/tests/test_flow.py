"""Unit tests of fpga/flow.py and the board folders: no synthesis, seconds (ctest fpga.flow.unit).

    python3 -m unittest discover -s fpga/tests -t fpga
"""

import json
import re
import tempfile
import unittest
from pathlib import Path

import flow


def top_ports(source: Path, top: str) -> list[str]:
    """The port names of `module top` (ANSI ports, one per line as the board tops write them)."""
    text = source.read_text()
    body = text[text.index(f"module {top}"):]
    start = body.index(") (") + 3
    ports = body[start: body.index(");", start)]
    names = []
    for line in ports.splitlines():
        line = line.split("//")[0]
        m = re.search(r"\b(input|output|inout)\b.*?([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*$", line)
        if m:
            names.append(m.group(2))
    return names


def constrained(board: dict) -> set[str]:
    text = (board["dir"] / board["constraints"]).read_text()
    pattern = {"ice40": r"set_io\s+(?:-\S+\s+)*([A-Za-z_][\w\[\]]*)",
               "ecp5": r'LOCATE\s+COMP\s+"([^"]+)"',
               "gowin": r'IO_LOC\s+"([^"]+)"',
               # only lines that give a port its package pin, not the timing exceptions
               "xilinx": r"^set_property\s.*PACKAGE_PIN\s+\w+.*get_ports\s*\{\s*([^\s}]+)\s*\}"
               }[board["family"]]
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return {re.sub(r"\[\d+\]$", "", n) for n in re.findall(pattern, text, re.MULTILINE)}


class Boards(unittest.TestCase):
    def boards(self):
        names = sorted(p.parent.name for p in flow.BOARDS.glob("*/board.toml"))
        self.assertEqual(names, ["arty_a7", "icebreaker", "tangnano20k", "ulx3s"])
        return [flow.load_board(n) for n in names]

    def test_every_board_agrees_with_its_configuration(self):
        for board in self.boards():
            with self.subTest(board=board["name"]):
                config = flow.load_config(board["config"])
                flow.check_board(board, config)  # raises when the clocks disagree
                params = flow.config_params(board["config"])
                self.assertEqual(set(flow.CORE_PARAMS) - set(params), set())
                self.assertEqual(int(params["CLOCK_MHZ"]), board["clock_mhz"])
                # the top's elaboration check names the same clock as board.toml
                top = (board["dir"] / board["sources"][0]).read_text()
                self.assertIn(f"CLOCK_MHZ != {board['clock_mhz']}", top)
                self.assertIn(board["family"], flow.FAMILIES)
                for key in ("LUT", "FF", "BRAM"):
                    self.assertGreater(board["available"][key], 0)

    def test_every_top_port_has_a_pin(self):
        for board in self.boards():
            with self.subTest(board=board["name"]):
                ports = top_ports(board["dir"] / board["sources"][0], board["top"])
                self.assertGreaterEqual(len(ports), 3)
                self.assertEqual(set(ports) - constrained(board), set(),
                                 f"ports without a pin in {board['constraints']}")

    def test_a_clock_mismatch_is_refused(self):
        board = self.boards()[0]
        config = flow.load_config(board["config"])
        config["clock"]["mhz"] = board["clock_mhz"] + 1
        with self.assertRaisesRegex(flow.FlowError, "agree"):
            flow.check_board(board, config)

    def test_unknown_board_names_the_known_ones(self):
        with self.assertRaisesRegex(flow.FlowError, "known: arty_a7, icebreaker, tangnano20k, ulx3s"):
            flow.load_board("arty")


def tcl_commands(script: str) -> list[str]:
    """The Tcl script's commands, continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line.strip() for line in joined.splitlines()
            if line.strip() and not line.strip().startswith("#")]


class Vivado(unittest.TestCase):
    """The Arty A7's Vivado script, which nobody can run here: everything it reads must exist
    and be what the open flow synthesizes."""

    def setUp(self):
        self.board = flow.load_board("arty_a7")
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name) / "vivado"
        self.script = flow.write_vivado_script(self.board, self.out).read_text()
        self.commands = tcl_commands(self.script)

    def tearDown(self):
        self.tmp.cleanup()

    def command(self, name: str) -> str:
        found = [c for c in self.commands if c.split()[0] == name]
        self.assertEqual(len(found), 1, f"one {name} in the script")
        return found[0]

    def test_the_script_finds_the_repository_from_its_own_place(self):
        m = re.search(r"set root \[file normalize \[file join \$here (\S+)\]\]", self.script)
        self.assertIsNotNone(m)
        self.assertEqual(Path(self.out, m.group(1)).resolve(), flow.ROOT)

    def test_every_file_it_reads_exists_and_the_sources_are_the_flows(self):
        read = re.findall(r"\$root/(\S+)", self.command("read_verilog"))
        sources = flow.rtl_sources(host=True) + ["fpga/boards/arty_a7/arty_a7_top.sv"]
        self.assertEqual(read, sources)
        xdc = re.findall(r"\$root/(\S+)", self.command("read_xdc"))
        self.assertEqual(xdc, ["fpga/boards/arty_a7/arty_a7.xdc"])
        for path in read + xdc + ["rtl/generated"]:
            self.assertTrue((flow.ROOT / path).exists(), path)
        # every `include resolves in the include directory the script names
        self.assertIn("-include_dirs [list $root/rtl/generated]", self.command("synth_design"))
        for path in read:
            for inc in re.findall(r'`include\s+"([^"]+)"', (flow.ROOT / path).read_text()):
                self.assertTrue((flow.ROOT / "rtl" / "generated" / inc).exists(), (path, inc))

    def test_synthesis_gets_the_configurations_parameters_and_the_part(self):
        synth = self.command("synth_design")
        generics = dict(re.findall(r"-generic (\w+)=(\S+)", synth))
        params = flow.config_params("arty_a7")
        self.assertEqual(generics, {k: params[k] for k in flow.CORE_PARAMS})
        self.assertIn("-top arty_a7_top", synth)
        self.assertIn("set part xc7a35ticsg324-1L", self.commands)
        self.assertEqual(self.board["vivado_part"].upper().replace("-", ""),
                         self.board["device"].upper().replace("-", ""))

    def test_it_fails_on_negative_slack_before_writing_a_bitstream(self):
        order = [c.split()[0] for c in self.commands]
        for step in ("synth_design", "opt_design", "place_design", "route_design",
                     "report_utilization", "report_timing_summary", "write_bitstream"):
            self.assertIn(step, order)
        self.assertLess(order.index("route_design"), order.index("report_timing_summary"))
        check = next(i for i, c in enumerate(self.commands) if c.startswith("if {$wns < 0"))
        self.assertLess(check, order.index("write_bitstream"))
        self.assertIn("exit 1", self.commands[check + 2])

    def test_the_mmcm_makes_the_configured_clock_from_the_constrained_oscillator(self):
        top = (self.board["dir"] / "arty_a7_top.sv").read_text()
        p = {k: float(v) for k, v in re.findall(r"\.(CLKIN1_PERIOD|DIVCLK_DIVIDE|CLKFBOUT_MULT_F|"
                                                r"CLKOUT0_DIVIDE_F)\(([\d.]+)\)", top)}
        self.assertEqual(len(p), 4)
        vco = 1000 / p["CLKIN1_PERIOD"] * p["CLKFBOUT_MULT_F"] / p["DIVCLK_DIVIDE"]
        self.assertTrue(600 <= vco <= 1200, f"VCO {vco} MHz outside the -1 grade's range")
        self.assertAlmostEqual(vco / p["CLKOUT0_DIVIDE_F"], self.board["clock_mhz"])
        xdc = (self.board["dir"] / self.board["constraints"]).read_text()
        m = re.search(r"create_clock .*-period ([\d.]+) .*get_ports \{ (\w+) \}", xdc)
        self.assertEqual((float(m.group(1)), m.group(2)),
                         (p["CLKIN1_PERIOD"], self.board["clock_port"]))


class SynthesisOnlyBuild(unittest.TestCase):
    """`build arty_a7` on a synthesis already made (--from-synth, so no Yosys run): the exit
    status rule of a family without open place and route: 0 and status `synthesized` when the
    counts fit, a FlowError (exit 1) and `does_not_fit` when they do not; the Vivado script
    is written either way."""

    def build(self, cells: dict[str, int]) -> tuple[int | None, dict]:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "arty_a7"
            out.mkdir()
            (out / "synth_stat.json").write_text(json.dumps({"design": {"num_cells_by_type": cells}}))
            (out / "synth.log").write_text("   Estimated number of LCs:        123\n")
            (out / "synth.json").write_text("{}")  # what --from-synth starts from
            args = type("Args", (), {"board": "arty_a7", "out": d, "from_synth": True,
                                     "synth_only": False, "extra_source": [], "timeout": 60,
                                     "seed": 1, "seeds": 0})
            try:
                rc = flow.build(args)
            except flow.FlowError:
                rc = None
            report = json.loads((out / "report.json").read_text())
            self.assertTrue((out / "vivado" / "build.tcl").is_file())
        return rc, report

    def test_a_design_that_fits_ends_synthesized_with_exit_0(self):
        rc, report = self.build({"LUT6": 20000, "FDRE": 100, "RAMB36E1": 50, "DSP48E1": 90})
        self.assertEqual(rc, 0)
        self.assertEqual(report["status"], "synthesized")
        self.assertIn("no Fmax", report["message"])
        self.assertNotIn("clocks", report)
        self.assertEqual(report["synthesis"]["lut_sites_estimate"], 123)

    def test_a_design_that_does_not_fit_fails(self):
        rc, report = self.build({"LUT6": 20000, "RAM32M": 201, "RAMB36E1": 51})
        self.assertIsNone(rc)
        self.assertEqual(report["status"], "does_not_fit")
        self.assertIn("LUT 20804 of 20800", report["message"])
        self.assertIn("BRAM 102 of 100", report["message"])


class PackerFitCheck(unittest.TestCase):
    """`build tangnano20k --synth-only` on a synthesis already made: when the synthesis counts
    fit, the fit check takes nextpnr's packer's counts (pack_check, stubbed here with what
    --pack-only reported), so a design the packer does not fit fails although synthesis
    counted it in."""

    def build(self, packed_luts: int, netlist: dict | None = None) -> tuple[int | None, dict]:
        cells = {"LUT4": 20000, "DFF": 100, "SDPX9B": 40}  # fits by the synthesis counts
        def fake_pack_check(board, out, mhz, timeout):
            util = {"LUT4": {"used": packed_luts, "available": 20736},
                    "DFF": {"used": 150, "available": 15552},
                    "BSRAM": {"used": 40, "available": 46}}
            return {"wall_s": 0.1, "utilization": util,
                    "resources": {k: v["used"] for k, v in
                                  flow.pnr_resources(board, util).items()}}
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "tangnano20k"
            out.mkdir()
            (out / "synth_stat.json").write_text(json.dumps({"design": {"num_cells_by_type": cells}}))
            (out / "synth.json").write_text(json.dumps(netlist or {}))
            args = type("Args", (), {"board": "tangnano20k", "out": d, "from_synth": True,
                                     "synth_only": True, "extra_source": [], "timeout": 60,
                                     "seed": 1, "seeds": 0})
            real = flow.pack_check
            flow.pack_check = fake_pack_check
            try:
                rc = flow.build(args)
            except flow.FlowError:
                rc = None
            finally:
                flow.pack_check = real
            report = json.loads((out / "report.json").read_text())
        return rc, report

    def test_the_packers_count_decides(self):
        rc, report = self.build(packed_luts=20800)
        self.assertEqual(rc, 0)  # --synth-only reports, does not fail
        self.assertEqual(report["status"], "does_not_fit")
        self.assertIn("LUT 20800 of 20736", report["message"])
        self.assertIn("nextpnr's packing", report["message"])
        self.assertEqual(report["resources"]["LUT"]["used"], 20800)

    def test_a_design_the_packer_fits_goes_on(self):
        rc, report = self.build(packed_luts=20500)
        self.assertEqual(rc, 0)
        self.assertEqual(report["status"], "synthesized")
        self.assertTrue(report["fits"])
        self.assertEqual(report["pack_check"]["resources"]["LUT"], 20500)
        self.assertEqual(report["synthesis"]["resources"]["LUT"], 20000)


    @staticmethod
    def netlist(ffs_from_ff: int) -> dict:
        """A Gowin top: a LUT feeding one DFF, a LUT RAM feeding another, then a chain of
        ffs_from_ff DFFs each fed by the one before (the first by the LUT's DFF)."""
        def cell(kind, outputs, inputs):
            dirs = {p: "output" for p in outputs} | {p: "input" for p in inputs}
            return {"type": kind, "port_directions": dirs, "connections": outputs | inputs}
        cells = {"lut": cell("LUT2", {"F": [10]}, {"I0": [2], "I1": [3]}),
                 "ram": cell("RAM16SDP4", {"DO": [11, 12, 13, 14]}, {"DI": [2, 3, 4, 5]}),
                 "ff_lut": cell("DFF", {"Q": [20]}, {"D": [10], "CLK": [1]}),
                 "ff_ram": cell("DFFE", {"Q": [21]}, {"D": [11], "CE": [3], "CLK": [1]})}
        for i in range(ffs_from_ff):
            cells[f"ff{i}"] = cell("DFFR", {"Q": [100 + i]}, {"D": [20 if i == 0 else 99 + i],
                                                               "RESET": [2], "CLK": [1]})
        return {"modules": {"tangnano20k_top": {"cells": cells}}}

    def test_flip_flops_fed_by_no_lut_count(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "synth.json"
            path.write_text(json.dumps(self.netlist(3)))
            self.assertEqual(flow.gowin_unpaired_ffs(path, "tangnano20k_top"),
                             {"other": 3, "from_lut_ram": 1})

    def test_flip_flops_fed_by_no_lut_take_lut_positions(self):
        # 20 700 LUT4 sites fit the packer's count; with 40 flip-flops fed by flip-flops and
        # one by LUT RAM they need 20 741 LUT positions of 20 736: does not fit. 30 fit (20 731).
        rc, report = self.build(packed_luts=20700, netlist=self.netlist(40))
        self.assertEqual(rc, 0)
        self.assertEqual(report["status"], "does_not_fit")
        self.assertFalse(report["fits"])
        self.assertIn("LUT positions 20741 of 20736", report["message"])
        self.assertEqual(report["pack_check"]["lut_positions"]["of_which_from_lut_ram"], 1)
        rc, report = self.build(packed_luts=20700, netlist=self.netlist(30))
        self.assertEqual(report["status"], "synthesized")
        self.assertTrue(report["fits"])
        self.assertEqual(report["pack_check"]["lut_positions"]["needed_at_least"], 20731)


class Counting(unittest.TestCase):
    def test_synthesis_counts_per_family(self):
        ice = flow.synth_resources(flow.FAMILIES["ice40"], {
            "SB_LUT4": 100, "SB_CARRY": 7, "SB_DFF": 3, "SB_DFFE": 4, "SB_DFFSR": 1,
            "SB_RAM40_4K": 2, "SB_SPRAM256KA": 4, "SB_MAC16": 1})
        self.assertEqual(ice, {"LUT": 100, "FF": 8, "BRAM": 2, "DSP": 1, "SPRAM": 4})
        ecp = flow.synth_resources(flow.FAMILIES["ecp5"], {
            "LUT4": 10, "CCU2C": 3, "TRELLIS_FF": 5, "DP16KD": 2, "MULT18X18D": 1})
        self.assertEqual(ecp["LUT"], 16)  # a CCU2C is two LUT4s
        self.assertEqual(ecp["FF"], 5)
        xc7 = flow.synth_resources(flow.FAMILIES["xilinx"], {
            "LUT6": 10, "LUT2": 5, "MUXF7": 3, "CARRY4": 2, "RAM32M": 2, "RAM64X1D": 1,
            "SRLC32E": 1, "FDRE": 7, "FDSE": 1, "FDCE": 1, "RAMB36E1": 3, "RAMB18E1": 1,
            "DSP48E1": 4, "BUFG": 1, "IBUF": 2})
        # LUTs: logic + 4 per RAM32M + 2 per RAM64X1D + 1 per SRL; BRAM in 18-kbit halves
        self.assertEqual(xc7, {"LUT": 26, "FF": 9, "BRAM": 7, "DSP": 4, "SPRAM": 0})

    def test_fit_check_names_each_overflow(self):
        board = flow.load_board("icebreaker")
        over = flow.fits(board, {"LUT": 50000, "FF": 100, "BRAM": 77})
        self.assertEqual(len(over), 2)
        self.assertTrue(over[0].startswith("LUT 50000 of 5280"))
        self.assertEqual(flow.fits(board, {"LUT": 10, "FF": 10}), [])

    def test_a_synthesis_only_report_is_checked(self):
        """check-report accepts a Xilinx report with the reason for no Fmax and the script, and
        refuses one that invents clocks."""
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "arty_a7"
            script = flow.write_vivado_script(flow.load_board("arty_a7"), out / "vivado")
            report = {k: "" for k in flow.REPORT_KEYS} | {
                "board": "arty_a7", "family": "xilinx", "status": "synthesized", "fits": True,
                "tools": {"yosys": "Yosys 0.23"}, "wall_s": {},
                "resources": {k: {"used": 1, "available": 2} for k in ("LUT", "FF", "BRAM")},
                "place_and_route": flow.NO_OPEN_PNR["xilinx"], "vivado_script": str(script)}
            args = type("Args", (), {"out": d, "board": "arty_a7"})
            (out / "report.json").write_text(json.dumps(report))
            self.assertEqual(flow.check_report(args), 0)
            report["clocks"] = [{"name": "clk", "achieved_mhz": 100, "constraint_mhz": 30,
                                 "met": True}]
            (out / "report.json").write_text(json.dumps(report))
            with self.assertRaisesRegex(flow.FlowError, "clocks, a bitstream"):
                flow.check_report(args)
            del report["clocks"]
            report["fits"] = False
            (out / "report.json").write_text(json.dumps(report))
            with self.assertRaisesRegex(flow.FlowError, "synthesized but fits is not true"):
                flow.check_report(args)

    def test_area_table_sums_submodules(self):
        stat = {"modules": {
            "\\top": {"num_cells_by_type": {"SB_LUT4": 5, "SB_DFF": 1, "\\leaf": 2}},
            "\\leaf": {"num_cells_by_type": {"SB_LUT4": 10, "SB_DFFE": 3, "SB_RAM40_4K": 1}}}}
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "stat.json"
            path.write_text(json.dumps(stat))
            table = flow.area_table(path, "top")
        self.assertIn("| `leaf` | 2 | 20 | 0 | 6 | 2 |", table)
        self.assertIn("| **total** | | 25 | 0 | 7 | 2 |", table)

    def test_area_table_skips_the_hierarchy_yosys_0_23_writes_into_its_json(self):
        stat = json.dumps({"modules": {
            "\\top": {"num_cells_by_type": {"LUT6": 5, "FDRE": 1, "\\leaf": 2}},
            "\\leaf": {"num_cells_by_type": {"LUT3": 10, "CARRY4": 1, "RAMB36E1": 1}}}},
            indent=3)
        junk = "\n     top      1\n       $paramod$3b63\\leaf      2\n"
        stat = stat.replace("\n   }\n}", "\n   }," + junk + '   "design": {}\n}')
        with self.assertRaises(json.JSONDecodeError):
            json.loads(stat)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "stat.json"
            path.write_text(stat)
            table = flow.area_table(path, "top")
        self.assertIn("| `leaf` | 2 | 20 | 2 | 0 | 2 |", table)
        self.assertIn("| **total** | | 25 | 2 | 1 | 2 |", table)


if __name__ == "__main__":
    unittest.main()
