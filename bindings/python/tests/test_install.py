# SPDX-License-Identifier: MIT
"""The package as a user installs it: into a venv (--system-site-packages,
for Debian's setuptools and wheel), offline, imported from outside the
source tree, finding libpsrun.so next to the psrun on PATH."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "..")
ROOT = os.geteuid() == 0


def _builder():
    """An interpreter that can build the wheel offline, or None."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import setuptools, wheel, venv, ensurepip"],
                capture_output=True).returncode == 0:
            return py
    return None


@unittest.skipUnless(ROOT, "needs root: psrun sessions are root's")
class InstallTest(unittest.TestCase):
    def test_venv_install_runs_a_sandbox(self):
        lib = os.environ.get("PSRUN_LIBRARY")
        if not lib or not os.path.exists(os.path.join(os.path.dirname(lib), "psrun")):
            self.skipTest("needs PSRUN_LIBRARY in a build directory with psrun in it")
        py = _builder()
        if not py:
            self.skipTest("no python3 here with setuptools, wheel and venv (python3-wheel)")
        build = os.path.dirname(os.path.abspath(lib))
        tmp = tempfile.mkdtemp(prefix="psrun-py-install.")
        try:
            venv = os.path.join(tmp, "venv")
            subprocess.run([py, "-m", "venv", "--system-site-packages", venv], check=True,
                           capture_output=True)
            # A copy of the package: the build leaves nothing in the tree.
            src = os.path.join(tmp, "src")
            shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info",
                                                                    "__pycache__"))
            pip = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                                  "--no-build-isolation", "--no-index", src],
                                 capture_output=True, text=True)
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            state = os.path.join(tmp, "state")
            os.mkdir(state, 0o700)
            env = dict(os.environ, PATH=build + os.pathsep + os.environ.get("PATH", ""),
                       PSRUN_SESSION_ROOT=state)
            env.pop("PSRUN_LIBRARY", None)
            env.pop("PYTHONPATH", None)
            code = ("import psrun, sys\n"
                    "assert '/site-packages/' in psrun.__file__, psrun.__file__\n"
                    "sb = psrun.Sandbox(timeout=30)\n"
                    "try:\n"
                    "    r = sb.exec('echo installed')\n"
                    "    sys.stdout.write(r.stdout.decode())\n"
                    "finally:\n"
                    "    sb.destroy()\n")
            run = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], cwd=tmp,
                                 env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertEqual(run.stdout, "installed\n")
            self.assertEqual(os.listdir(state), [], "a session left behind")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
