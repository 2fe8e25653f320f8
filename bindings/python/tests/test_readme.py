# SPDX-License-Identifier: MIT
"""The README's API reference: every `>>>` example runs and prints what it
says (doctest), against the real libpsrun."""
import doctest
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
README = os.path.join(HERE, "..", "README.md")


@unittest.skipUnless(os.geteuid() == 0, "needs root (as a user: tests/rootless/sessions.sh)")
class ReadmeTest(unittest.TestCase):
    def test_examples(self):
        state = tempfile.mkdtemp(prefix="psrun-py-readme.")
        old = os.environ.get("PSRUN_SESSION_ROOT")
        os.environ["PSRUN_SESSION_ROOT"] = state
        try:
            res = doctest.testfile(README, module_relative=False, verbose=False,
                                   optionflags=doctest.ELLIPSIS)
            self.assertGreater(res.attempted, 5, "no examples found in the README")
            self.assertEqual(res.failed, 0, f"{res.failed} README examples failed")
            self.assertEqual(os.listdir(state), [], "a session left behind")
        finally:
            if old is None:
                os.environ.pop("PSRUN_SESSION_ROOT", None)
            else:
                os.environ["PSRUN_SESSION_ROOT"] = old
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
