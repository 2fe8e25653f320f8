# SPDX-License-Identifier: MIT
"""Sandbox(image=...) and from_config with the seed dict's image, tools and
persistent keys, on an OCI layout built offline (tests/integration/mkimage.py)
from the host's static busybox."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from psrun import PsrunError, Sandbox  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..", "..")
MKIMAGE = os.path.join(REPO, "tests", "integration", "mkimage.py")


def static_busybox():
    try:
        out = subprocess.run(["file", "-L", "/bin/busybox"], capture_output=True, text=True)
    except OSError:
        return False
    return "statically linked" in out.stdout


@unittest.skipUnless(os.geteuid() == 0, "needs root (as a user: tests/rootless/sessions.sh)")
@unittest.skipUnless(static_busybox(), "no static /bin/busybox on this host")
class ImageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.state = tempfile.mkdtemp(prefix="psrun-py-image.")
        os.chmod(cls.state, 0o700)
        os.environ["PSRUN_SESSION_ROOT"] = cls.state
        cls.dir = tempfile.mkdtemp(prefix="psrun-py-image-tree.")
        tree = os.path.join(cls.dir, "tree")
        for d in ("bin", "etc", "app", "usr/local/bin"):
            os.makedirs(os.path.join(tree, d))
        shutil.copy("/bin/busybox", os.path.join(tree, "bin", "busybox"))
        for c in ("sh", "cat", "echo", "pwd", "id", "ls"):
            os.symlink("busybox", os.path.join(tree, "bin", c))
        # A "python" of the image: python3 on its PATH, as python images have.
        os.symlink("/bin/busybox", os.path.join(tree, "usr", "local", "bin", "python3"))
        with open(os.path.join(tree, "etc", "image-only"), "w") as f:
            f.write("from-the-image\n")
        cls.layout = os.path.join(cls.dir, "layout")
        subprocess.run([sys.executable, MKIMAGE, cls.layout, "v1", tree,
                        json.dumps({"Env": ["PATH=/usr/local/bin:/bin"], "WorkingDir": "/app"})],
                       check=True, capture_output=True)
        cls.image = f"oci:{cls.layout}:v1"
        cls.store = os.path.join(cls.dir, "store")

    @classmethod
    def tearDownClass(cls):
        left = os.listdir(cls.state)
        shutil.rmtree(cls.state, ignore_errors=True)
        shutil.rmtree(cls.dir, ignore_errors=True)
        if left:
            raise AssertionError(f"sessions left behind: {left}")

    def seed(self, **over):
        # The seed dict of issue 22, with this test's image and store.
        cfg = {"image": self.image, "image_store": self.store, "cpu_limit": 2,
               "memory_limit": "256M", "timeout": 300, "network_mode": "none",
               "tools": ["python", "sh"], "persistent": False, "workdir": "/workspace",
               "env": {"MY_VAR": "x"}}
        cfg.update(over)
        return cfg

    def test_from_config_with_image_and_tools(self):
        with Sandbox.from_config(self.seed()) as sb:
            r = sb.exec("cat /etc/image-only; echo $MY_VAR; test -e /etc/os-release "
                        "|| echo no-host-etc; echo $PATH")
            self.assertEqual(r.stdout.splitlines()[:3], [b"from-the-image", b"x", b"no-host-etc"],
                             r.stderr)
            # The image's PATH first (a session adds its installs' bins after it).
            self.assertTrue(r.stdout.splitlines()[3].startswith(b"/usr/local/bin:/bin"), r.stdout)
            self.assertEqual(sb.exec("pwd").stdout, b"/app\n")

    def test_keyword_image(self):
        with Sandbox(image=self.image, image_store=self.store, workdir="/tmp") as sb:
            self.assertEqual(sb.exec("cat /etc/image-only; pwd").stdout, b"from-the-image\n/tmp\n")

    def test_seed_dict_under_gvisor(self):
        # The seed dict under backend="gvisor": the bundle's root is the image.
        try:
            sb = Sandbox.from_config(self.seed(backend="gvisor"))
        except PsrunError as e:
            if "runsc not found" in str(e) or "no platform" in str(e):
                self.skipTest(f"runsc cannot run here: {e}")
            raise
        with sb:
            sb.write_file("in.txt", b"from-the-host\n")
            r = sb.exec("cat /etc/image-only /workspace/in.txt; test -e /etc/os-release "
                        "|| echo no-host-etc; echo $MY_VAR")
            self.assertEqual(r.backend, "gvisor")
            self.assertEqual(r.stdout, b"from-the-image\nfrom-the-host\nno-host-etc\nx\n",
                             r.stderr)
            sb.exec("echo out > /workspace/out.txt")
            self.assertEqual(sb.read_file("out.txt"), b"out\n")

    def test_missing_tool_is_one_line_at_create(self):
        with self.assertRaises(PsrunError) as cm:
            Sandbox.from_config(self.seed(tools=["python", "node"]))
        msg = str(cm.exception)
        self.assertIn(f"tools: `node` is not in the root of {self.image}", msg)
        self.assertNotIn("\n", msg)
        with self.assertRaises(PsrunError) as cm:
            Sandbox.from_config(self.seed(tools=["rust"]))
        self.assertEqual(cm.exception.field, "tools[0]")
        with self.assertRaises(PsrunError) as cm:
            Sandbox.from_config(self.seed(image="Not An Image"))
        self.assertEqual(cm.exception.field, "image")

    def test_persistent_outlives_the_handle(self):
        sb = Sandbox.from_config(self.seed(persistent=True, name="keep", idle_timeout="10m"))
        sb.exec("echo kept > /workspace/f")
        sb.close()
        again = Sandbox.open("keep")
        try:
            self.assertEqual(again.exec("cat /workspace/f /etc/image-only").stdout,
                             b"kept\nfrom-the-image\n")
        finally:
            again.destroy()
        with self.assertRaises(PsrunError):
            Sandbox.open("keep")
        with self.assertRaises(PsrunError) as cm:
            Sandbox(persistent="yes")
        self.assertIn("persistent", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
