# SPDX-License-Identifier: MIT
"""The Python binding against the real libpsrun (root: sessions). Each test
class uses its own $PSRUN_SESSION_ROOT and checks nothing is left in it."""
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import psrun  # noqa: E402
from psrun import AsyncSandbox, InstallDenied, PsrunError, Sandbox  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..", "..")

ROOT = os.geteuid() == 0


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
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
        with self.assertRaises(PsrunError) as cm:
            Sandbox(approve=["install"])
        self.assertEqual(cm.exception.field, "approve")
        with self.assertRaises(PsrunError) as cm:
            Sandbox(network_pool="10.0.0.0/33")
        self.assertEqual(cm.exception.field, "network_pool")
        with self.assertRaises(PsrunError) as cm:
            Sandbox(name_check="maybe")
        self.assertEqual(cm.exception.field, "name_check")
        self.assertIn("boolean", str(cm.exception))
        with self.assertRaises(PsrunError) as cm:
            Sandbox(name_check=False, install_network="none")
        self.assertEqual(cm.exception.field, "name_check")
        self.assertIn("only used with `network: restricted`", str(cm.exception))

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

    def test_violations(self):
        # ptrace(PTRACE_TRACEME), syscall 101 on x86_64, refused twice.
        r = self.sb.exec(["python3", "-c", "import ctypes; s = ctypes.CDLL(None).syscall; "
                          "print(s(101, 0, 0, 0, 0), s(101, 0, 0, 0, 0))"])
        self.assertEqual(r.stdout, b"-1 -1\n")
        self.assertEqual([(v.layer, v.what, v.count) for v in r.violations], [("seccomp", "ptrace", 2)])
        self.assertGreater(r.violations[0].pid, 1)
        self.assertEqual(r.violations_more, 0)
        self.assertIsInstance(r.violations_unavailable, dict)
        r = self.sb.exec("sleep 5", timeout=0.3)
        self.assertEqual([(v.layer, v.what) for v in r.violations], [("limits", "timeout 300ms reached")])
        self.assertEqual(self.sb.exec("true").violations, [])

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

    def test_planted_sizes_cost_the_caller_only_what_it_asks(self):
        import resource

        def peak_kib():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        # A 3 GiB sparse file costs the sandbox no disk.
        r = self.sb.exec("truncate -s 3G /workspace/sparse && printf END >> /workspace/sparse")
        self.assertEqual(r.exit_code, 0, r.stderr)
        before = peak_kib()
        with self.assertRaises(PsrunError) as cm:
            self.sb.read_file("sparse")
        self.assertEqual(cm.exception.field, "path")
        self.assertIn("read it in parts", str(cm.exception))
        size = (3 << 30) + 3
        self.assertEqual(self.sb.read_file("sparse", size - 8, 1 << 20), b"\0" * 5 + b"END")
        self.assertEqual(self.sb.read_file("sparse", 1 << 31, 4), b"\0" * 4)
        with self.assertRaises(PsrunError):
            self.sb.read_file("sparse", 0, 0)
        # Streamed in chunks: the first 96 MiB, one chunk in memory at a time.
        seen = 0
        for chunk in self.sb.iter_file("sparse", 1 << 20):
            self.assertLessEqual(len(chunk), 1 << 20)
            seen += len(chunk)
            if seen >= 96 << 20:
                break
        self.assertEqual(seen, 96 << 20)
        tail = b"".join(self.sb.iter_file("sparse", 4096, size - 4))
        self.assertEqual(tail, b"\0END")
        self.assertLess(peak_kib() - before, 16 * 1024)
        self.sb.remove("sparse")

        # A deep tree of long names: 48 levels of 255-byte names, 1,400
        # files at the bottom (17 MiB of names as paths).
        r = self.sb.exec(["python3", "-c",
                          "import os\nos.chdir('/workspace')\n"
                          "for _ in range(48): os.mkdir('d' * 255); os.chdir('d' * 255)\n"
                          "for i in range(1400): open('f' * 250 + str(i), 'w').close()"])
        self.assertEqual(r.exit_code, 0, r.stderr)
        before = peak_kib()
        listing = self.sb.list_files(recursive=True)
        self.assertTrue(listing.truncated)
        self.assertLessEqual(sum(len(e.name) + 1 for e in listing), 16 << 20)
        self.assertLess(peak_kib() - before, 96 * 1024)
        few = self.sb.list_files(recursive=True, max_entries=5)
        self.assertEqual((len(few), few.truncated), (5, True))
        top = self.sb.list_files()
        self.assertIn("d" * 255, [e.name for e in top])
        self.assertFalse(top.truncated)
        self.sb.remove("d" * 255)

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

    def test_install_refusals_carry_the_field(self):
        for spec in ("--index-url=http://evil.test/", "x; id", "http://evil.test/x.whl", "../x"):
            with self.assertRaises(PsrunError, msg=spec) as cm:
                self.sb.install_package(spec)
            self.assertEqual(cm.exception.field, "package", str(cm.exception))
            self.assertNotIsInstance(cm.exception, InstallDenied)
        with self.assertRaises(PsrunError) as cm:
            self.sb.install_package("serde", tool="cargo")
        self.assertEqual(cm.exception.field, "tool")

    def test_install_without_any_network_says_why(self):
        with Sandbox(install_network="none") as sb:
            with self.assertRaises(PsrunError) as cm:
                sb.install_package("requests")
            self.assertEqual(cm.exception.code, 101)  # ENETUNREACH
            self.assertIn("cannot be installed", str(cm.exception))
            self.assertIsNone(sb.exec("true").network)

    def test_approval(self):
        # Never a yes here: the default install network would reach the real
        # registry (tests/net approves installs from its fake index).
        with Sandbox(approve_actions=["install"]) as sb:
            with self.assertRaises(InstallDenied) as cm:
                sb.install_package("psfake")
            self.assertIn("no approver is set", str(cm.exception))
            self.assertEqual(cm.exception.code, 1)
        asked = []
        answers = iter([False, "not on a Friday", RuntimeError("boom")])

        def approve(action):
            asked.append(action)
            a = next(answers)
            if isinstance(a, Exception):
                raise a
            return a
        with Sandbox(approve_actions=["install"], approve=approve) as sb:
            with self.assertRaises(InstallDenied) as cm:
                sb.install_package("psfake==1.0")
            self.assertRegex(str(cm.exception),
                             r"^install: `psfake==1.0` \(python\) was denied by the approver$")
            with self.assertRaises(InstallDenied) as cm:
                sb.install_package("left-pad", tool="node")
            self.assertTrue(str(cm.exception).endswith("denied by the approver: not on a Friday"))
            with self.assertRaises(InstallDenied) as cm:
                sb.install_package("psfake")
            self.assertIn("the approver raised RuntimeError: boom", str(cm.exception))
            command = asked[0].pop("command")
            self.assertEqual(asked[0], {"action": "install", "session": sb.id, "tool": "python",
                                        "package": "psfake==1.0",
                                        "index": "https://pypi.org/simple"})
            self.assertEqual(command[:4], ["python3", "-I", "-m", "pip"])
            self.assertEqual(command[-2:], ["--", "psfake==1.0"])
            self.assertEqual(asked[1]["index"], "https://registry.npmjs.org/")
            self.assertEqual(asked[1]["tool"], "node")
            self.assertEqual(len(asked), 3)
            self.assertEqual(sb.list_files(), [])

    @unittest.skipUnless(os.path.exists("/usr/bin/python3"), "no /usr/bin/python3")
    def test_the_embedders_own_interpreter_runs_inside(self):
        # The embedder is /usr/bin/python3, the supervisor libpsrun.so
        # (below): the guard against running the supervisor's own file does
        # not refuse the sandbox its python3.
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from psrun import Sandbox\n"
                "with Sandbox() as sb:\n"
                "    r = sb.exec('python3 -c \"print(6 * 7)\"')\n"
                "    print(r.reason, r.stdout.decode().strip(), r.error)\n"
                % os.path.join(HERE, ".."))
        out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(out.stdout.strip(), "exited 42", out.stdout + out.stderr)

    def test_the_supervisor_is_libpsrun_not_this_interpreter(self):
        # Not a fork of this process, which has touched 64 MiB and holds a
        # secret in its environment: libpsrun.so executed, a few MB.
        ballast = bytearray(64 << 20)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1
        os.environ["PSRUN_PY_TEST_SECRET"] = "no"
        os.environ["SECRET_OF_THE_EMBEDDER"] = "hunter2"
        try:
            with Sandbox() as sb:
                with open(os.path.join(self.state, sb.id, "info")) as f:
                    pid = int(next(l.split()[1] for l in f if l.startswith("pid ")))
                exe = os.readlink(f"/proc/{pid}/exe")
                self.assertTrue(exe.endswith(".so") or exe.startswith("/memfd:psrun-session"),
                                exe)
                with open(f"/proc/{pid}/status") as f:
                    rss = int(next(l.split()[1] for l in f if l.startswith("VmRSS:")))
                self.assertLess(rss, 32 * 1024, f"supervisor RSS {rss} KiB")
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
                self.assertIn(b"PSRUN_PY_TEST_SECRET=no", env)
                self.assertFalse(any(e.startswith(b"SECRET_OF_THE_EMBEDDER=") for e in env))
                self.assertEqual(sb.exec("echo ok").stdout, b"ok\n")
        finally:
            del os.environ["PSRUN_PY_TEST_SECRET"]
            del os.environ["SECRET_OF_THE_EMBEDDER"]
        del ballast

    def test_agent_loop_example(self):
        env = dict(os.environ)
        env.pop("AGENT_LOOP_INDEX", None)
        out = subprocess.run([sys.executable, os.path.join(REPO, "examples", "agent_loop.py")],
                             capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(out.returncode, 0, out.stdout[-2000:] + out.stderr[-2000:])
        for want in ("reason=timeout", "reason=oom", "skipped: no package index",
                     "contained: fork bomb", "done: every step as expected"):
            self.assertIn(want, out.stdout)

    def test_async(self):
        async def main():
            async with await AsyncSandbox.create(timeout=30) as sb:
                rs = await asyncio.gather(*(sb.exec(f"echo {i}") for i in range(4)))
                return [r.stdout for r in rs]
        self.assertEqual(asyncio.run(main()), [b"0\n", b"1\n", b"2\n", b"3\n"])

    def test_async_takes_sandbox_keys(self):
        async def main():
            async with AsyncSandbox(timeout=30, memory_limit="128M") as sb:
                r = await sb.exec("echo keys")
                return r.stdout
        self.assertEqual(asyncio.run(main()), b"keys\n")
        with self.assertRaises(TypeError):
            AsyncSandbox(self.sb, timeout=30)
        with self.assertRaises(PsrunError) as e:
            AsyncSandbox(memory_limit="lots")
        self.assertIn("memory_limit", str(e.exception))

    def test_errors_name_the_key_not_a_cli_option(self):
        with self.assertRaises(PsrunError) as e:
            Sandbox(memory_limit="4Gi")
        self.assertTrue(str(e.exception).startswith('memory_limit: "4Gi" is not a size'),
                        str(e.exception))
        self.assertEqual(e.exception.field, "memory_limit")

    def test_native_backend_is_reported(self):
        r = self.sb.exec("true")
        self.assertEqual(r.backend, "native")
        # What held in the exec, as psrun run's result says it.
        self.assertEqual(r.layers["seccomp"], "on")
        self.assertEqual(set(r.layers), {"seccomp", "landlock", "apparmor"})
        # Root's session: nothing rootless (tests/rootless/sessions.sh has
        # a user's, with its identity and limits).
        self.assertIsNone(r.rootless)


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
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
            # runsc exec applies the policy's profile to the init only.
            self.assertEqual(r.layers, {"seccomp": "not in execs", "landlock": "gvisor",
                                        "apparmor": "off"})
            self.assertIn(b"\\0   d   a   t   a", r.stdout)
            self.assertEqual(sb.read_file("out.txt"), b"out\n")
            self.assertEqual(sb.exec("sleep 30", timeout=0.5).reason, "timeout")


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
class GcTest(unittest.TestCase):
    """psrun.gc() cleans up after a session whose supervisor was killed."""

    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="psrun-py-gc.")
        os.chmod(self.state, 0o700)

    def tearDown(self):
        left = os.listdir(self.state)
        shutil.rmtree(self.state, ignore_errors=True)
        self.assertEqual(left, [], "sessions left behind")

    def test_gc_removes_a_session_whose_supervisor_was_killed(self):
        sb = Sandbox(state_dir=self.state, timeout=60)
        with open(os.path.join(self.state, sb.id, "info")) as f:
            pid = int(f.readline().split()[1])
        os.kill(pid, 9)
        for _ in range(200):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except FileNotFoundError:
                break
            time.sleep(0.01)
        self.assertEqual(os.listdir(self.state), [sb.id], "nothing was left to collect")
        # The supervisor's lock is free once every process holding it is
        # gone (its init dies of its parent's death, a moment later): until
        # then gc leaves the session alone, as it must a live one.
        for _ in range(500):
            st = psrun.gc(state_dir=self.state)
            if st.sessions:
                break
            time.sleep(0.01)
        self.assertEqual(st.sessions, 1)
        self.assertGreaterEqual(st.total, 1)
        self.assertEqual(os.listdir(self.state), [])
        self.assertEqual(psrun.gc(state_dir=self.state).sessions, 0)
        try:
            sb.destroy()  # the handle; its session is gone already
        except PsrunError:
            pass

    def test_gc_errors_raise(self):
        # An OCI root that is a symbolic link is refused, not followed.
        other = tempfile.mkdtemp(prefix="psrun-py-gc-root.")
        link = other + ".link"
        os.symlink(other, link)
        try:
            with self.assertRaises(PsrunError) as cm:
                psrun.gc(state_dir=self.state, oci_root=link)
            self.assertIn(link, str(cm.exception))
        finally:
            os.unlink(link)
            os.rmdir(other)


if __name__ == "__main__":
    unittest.main()
