# SPDX-License-Identifier: MIT
"""The Python binding against the real libpsrun (root: sessions). Each test
class uses its own $PSRUN_SESSION_ROOT and checks nothing is left in it."""
import asyncio
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from psrun import AsyncSandbox, PsrunError, Sandbox  # noqa: E402

ROOT = os.geteuid() == 0


@unittest.skipUnless(ROOT, "needs root: psrun sessions are root's")
class SandboxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.state = tempfile.mkdtemp(prefix="psrun-py-test.")
        os.chmod(cls.state, 0o700)
        os.environ["PSRUN_SESSION_ROOT"] = cls.state
        cls.sb = Sandbox(memory_limit="128M", cpu_limit=1, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.sb.destroy()
        left = os.listdir(cls.state)
        shutil.rmtree(cls.state, ignore_errors=True)
        if left:
            raise AssertionError(f"sessions left behind: {left}")

    def test_bad_settings_raise_with_the_field(self):
        with self.assertRaises(PsrunError) as cm:
            Sandbox(memory_limit="lots")
        self.assertEqual(cm.exception.field, "memory_limit")
        self.assertNotIn("\n", str(cm.exception))
        with self.assertRaises(PsrunError) as cm:
            Sandbox.from_config({"network_mode": "everywhere"})
        self.assertIn("network", str(cm.exception))
        with self.assertRaises(PsrunError):
            Sandbox(no_such_key=1)

    def test_paths_stay_in_the_workspace(self):
        self.sb.exec("ln -sf /etc/passwd /workspace/link")
        for path in ("../../etc/passwd", "/etc/passwd", "link"):
            with self.assertRaises(PsrunError, msg=path):
                self.sb.read_file(path)

    def test_exec_string_and_argv(self):
        r = self.sb.exec("echo hi; echo err >&2; exit 3")
        self.assertEqual((r.exit_code, r.reason, r.stdout, r.stderr), (3, "exited", b"hi\n", b"err\n"))
        self.assertFalse(r.ok)
        r = self.sb.exec(["python3", "-c", "import sys; print(sys.argv[1])", "a b;c"])
        self.assertEqual(r.stdout, b"a b;c\n")
        r = self.sb.exec("cat", stdin=b"\x00\xffin")
        self.assertEqual(r.stdout, b"\x00\xffin")

    def test_timeout_and_oom_reasons(self):
        r = self.sb.exec("sleep 30", timeout=0.5)
        self.assertEqual(r.reason, "timeout")
        r = self.sb.exec("python3 -c 'b = bytearray(1 << 30)'")
        self.assertEqual(r.reason, "oom")

    def test_files(self):
        data = bytes(range(256))
        self.assertEqual(self.sb.write_file("d/bin", data), 256)
        self.assertEqual(self.sb.read_file("d/bin"), data)
        self.sb.write_file("d/t.txt", "héllo")
        names = {e.name: e for e in self.sb.list_files("d")}
        self.assertEqual(names["t.txt"].size, 6)
        self.assertEqual(names["bin"].type, "file")
        self.sb.remove("d")
        with self.assertRaises(PsrunError):
            self.sb.list_files("d")

    def test_from_config_and_context_manager(self):
        cfg = {"network_mode": "none", "memory_limit": "64M", "cpu_limit": 1, "timeout": 30,
               "read_only_rootfs": True, "workdir": "/workspace/app", "env": {"GREETING": "hey"}}
        with Sandbox.from_config(cfg) as sb:
            r = sb.exec("pwd; echo $GREETING")
            self.assertEqual(r.stdout, b"/workspace/app\nhey\n")
        with self.assertRaises(PsrunError):
            sb.exec("true")

    def test_from_policy(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write("memory_limit: 64M\nenv:\n  FROM_FILE: yes\n")
            f.flush()
            with Sandbox.from_policy(f.name) as sb:
                self.assertEqual(sb.exec("echo $FROM_FILE").stdout, b"yes\n")

    def test_async(self):
        async def main():
            async with await AsyncSandbox.create(timeout=30) as sb:
                rs = await asyncio.gather(*(sb.exec(f"echo {i}") for i in range(4)))
                return [r.stdout for r in rs]
        self.assertEqual(asyncio.run(main()), [b"0\n", b"1\n", b"2\n", b"3\n"])

    def test_native_backend_is_reported(self):
        self.assertEqual(self.sb.exec("true").backend, "native")


@unittest.skipUnless(ROOT, "needs root: psrun sessions are root's")
class GvisorSandboxTest(unittest.TestCase):
    """The same calls with backend="gvisor": the keyword is the policy key."""

    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="psrun-py-gvisor.")
        os.chmod(self.state, 0o700)
        os.environ["PSRUN_SESSION_ROOT"] = self.state

    def tearDown(self):
        left = os.listdir(self.state)
        shutil.rmtree(self.state, ignore_errors=True)
        self.assertEqual(left, [], "sessions left behind")

    def test_exec_and_files(self):
        try:
            sb = Sandbox(backend="gvisor", timeout=60)
        except PsrunError as e:
            if "runsc not found" in str(e) or "no platform" in str(e):
                self.skipTest(f"runsc cannot run here: {e}")
            raise
        with sb:
            sb.write_file("in.txt", b"\x00data")
            r = sb.exec("od -An -c /workspace/in.txt; echo out > /workspace/out.txt")
            self.assertTrue(r.ok, r.stderr)
            self.assertEqual(r.backend, "gvisor")
            self.assertIn(b"\\0   d   a   t   a", r.stdout)
            self.assertEqual(sb.read_file("out.txt"), b"out\n")
            self.assertEqual(sb.exec("sleep 30", timeout=0.5).reason, "timeout")


if __name__ == "__main__":
    unittest.main()
