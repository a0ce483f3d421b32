"""Every `make TARGET` the documentation names is a target of the Makefile, listed by `make help`.

The Makefile is the project's front door (README: `make run`, `make test`); a target that a
rewrite drops silently (7bdf8f3 lost bench, hls, fpga* and generate, and `make test` still
passed) is found here instead of by a reader.
"""
import pathlib
import re
import sys
import unittest

ROOT = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else ".").resolve()
DOCS = ["README.md", "rtl/README.md", "fpga/README.md", "python/README.md", "hls/README.md", "docs/*.md"]


def documented_targets():
    """(target, file) for every `make TARGET` in backquotes in the documentation."""
    found = []
    for pattern in DOCS:
        for path in sorted(ROOT.glob(pattern)):
            for target in re.findall(r"`make ([a-z][a-z0-9-]*)", path.read_text()):
                found.append((target, path.relative_to(ROOT)))
    return found


def makefile_targets():
    """Targets with a `## help` text (what `make help` lists) and all other rule names."""
    text = (ROOT / "Makefile").read_text()
    helped = set(re.findall(r"^([a-z][a-z0-9-]*):.*## ", text, re.M))
    rules = set(re.findall(r"^([a-z][a-z0-9-]*):", text, re.M))
    return helped, rules


class MakeTargets(unittest.TestCase):
    def test_every_documented_target_exists_and_make_help_lists_it(self):
        helped, rules = makefile_targets()
        documented = documented_targets()
        self.assertGreater(len(documented), 20, "the documentation names make targets")
        for target, path in documented:
            with self.subTest(target=target, file=str(path)):
                self.assertIn(target, rules, f"{path} names `make {target}`, which the Makefile lacks")
                self.assertIn(target, helped, f"`make {target}` has no `## ` help text, so `make help` omits it")


if __name__ == "__main__":
    unittest.main()
