# SPDX-License-Identifier: MIT
"""Background processes through the binding: a server one exec starts and
the next reaches over loopback; output by offset; wait, kill, the limit."""
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from psrun import PsrunError, Sandbox  # noqa: E402

ROOT = os.geteuid() == 0


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
class BackgroundTest(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="psrun-py-bg.")
        os.chmod(self.state, 0o700)
        os.environ["PSRUN_SESSION_ROOT"] = self.state
        self.sb = Sandbox(timeout=60, background_limit=2)

    def tearDown(self):
        self.sb.destroy()
        self.assertEqual(os.listdir(self.state), [])
        shutil.rmtree(self.state)

    def test_server_output_wait_kill(self):
        self.sb.write_file("index.html", "hi-from-python\n")
        p = self.sb.exec("echo started; exec busybox httpd -f -p 127.0.0.1:8081 -h /workspace",
                         background=True)
        self.assertEqual(p.id, 1)
        r = self.sb.exec("for i in $(seq 50); do busybox wget -qO- http://127.0.0.1:8081/ "
                         "&& exit 0; sleep 0.1; done; exit 1")
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertIn(b"hi-from-python", r.stdout)
        out = p.output(0)
        self.assertEqual(out.data, b"started\n")
        self.assertEqual(out.next, 8)
        self.assertFalse(out.eof)
        self.assertEqual(p.output(out.next).data, b"")
        [info] = self.sb.processes()
        self.assertTrue(info.running)
        self.assertIn("httpd", info.command)
        with self.assertRaises(PsrunError) as cm:
            p.wait(timeout=0.1)
        self.assertEqual(cm.exception.code, 110)
        p.kill()
        self.assertEqual(p.wait(timeout=10).signal, 9)
        self.assertFalse(self.sb.processes()[0].running)
        with self.assertRaises(PsrunError) as cm:
            p.signal(15)
        self.assertIn("already ended", cm.exception.message)

    def test_limit(self):
        a = self.sb.exec(["sleep", "60"], background=True)
        self.sb.exec(["sleep", "60"], background=True)
        with self.assertRaises(PsrunError) as cm:
            self.sb.exec(["sleep", "60"], background=True)
        self.assertIn("background_limit", cm.exception.message)
        a.kill()
        a.wait(10)
        self.sb.exec(["true"], background=True).wait(10)


if __name__ == "__main__":
    unittest.main()
