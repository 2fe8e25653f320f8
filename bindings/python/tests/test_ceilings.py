# SPDX-License-Identifier: MIT
"""Per-call values narrow the sandbox's policy, never widen it: an exec's or
an install's timeout above the policy's raises PsrunError naming the field
and the ceiling, and nothing runs."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from psrun import PsrunError, Sandbox  # noqa: E402

ROOT = os.geteuid() == 0


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
class CeilingTest(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="psrun-py-ceil.")
        os.chmod(self.state, 0o700)
        self.old = os.environ.get("PSRUN_SESSION_ROOT")
        os.environ["PSRUN_SESSION_ROOT"] = self.state

    def tearDown(self):
        if self.old is None:
            os.environ.pop("PSRUN_SESSION_ROOT", None)
        else:
            os.environ["PSRUN_SESSION_ROOT"] = self.old
        left = os.listdir(self.state)
        shutil.rmtree(self.state, ignore_errors=True)
        self.assertEqual(left, [], "sessions left behind")

    def test_a_timeout_above_the_policy_is_refused(self):
        sb = Sandbox(timeout=10)
        try:
            with self.assertRaises(PsrunError) as cm:
                sb.exec("touch /workspace/ran", timeout=20)
            self.assertEqual(str(cm.exception),
                             "timeout_ms: 20000 is above the policy's timeout 10s")
            self.assertEqual(cm.exception.field, "timeout_ms")
            with self.assertRaises(PsrunError) as cm:
                sb.install_package("psfake", timeout=11)
            self.assertEqual(str(cm.exception),
                             "timeout_ms: 11000 is above the policy's timeout 10s")
            r = sb.exec("test -e /workspace/ran && echo ran || echo no", timeout=10)
            self.assertEqual(r.stdout, b"no\n" if isinstance(r.stdout, bytes) else "no\n")
        finally:
            sb.destroy()


if __name__ == "__main__":
    unittest.main()
