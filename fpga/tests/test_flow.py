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
               "gowin": r'IO_LOC\s+"([^"]+)"'}[board["family"]]
    return {re.sub(r"\[\d+\]$", "", n) for n in re.findall(pattern, text)}


class Boards(unittest.TestCase):
    def boards(self):
        names = sorted(p.parent.name for p in flow.BOARDS.glob("*/board.toml"))
        self.assertEqual(names, ["icebreaker", "tangnano20k", "ulx3s"])
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
        with self.assertRaisesRegex(flow.FlowError, "known: icebreaker, tangnano20k, ulx3s"):
            flow.load_board("arty")


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

    def test_fit_check_names_each_overflow(self):
        board = flow.load_board("icebreaker")
        over = flow.fits(board, {"LUT": 50000, "FF": 100, "BRAM": 77})
        self.assertEqual(len(over), 2)
        self.assertTrue(over[0].startswith("LUT 50000 of 5280"))
        self.assertEqual(flow.fits(board, {"LUT": 10, "FF": 10}), [])

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


if __name__ == "__main__":
    unittest.main()
