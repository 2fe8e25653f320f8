# SPDX-License-Identifier: MIT
"""The package as a user installs it: into a venv (--system-site-packages,
for Debian's setuptools and wheel), offline, imported from outside the
source tree, with PSRUN_LIBRARY unset finding the libpsrun.so of an
installed prefix (not the build tree's): next to the psrun on PATH (its
../lib), and on the system's library path without a psrun on PATH. The
check is the library the process maps."""
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


@unittest.skipUnless(ROOT, "needs root (as a user: tests/rootless/sessions.sh)")
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
            # psrun as a package installs it, outside the source tree: the
            # binary in PREFIX/bin, the library in PREFIX/lib.
            prefix = os.path.join(tmp, "prefix")
            os.makedirs(os.path.join(prefix, "bin"))
            os.makedirs(os.path.join(prefix, "lib"))
            shutil.copy2(os.path.join(build, "psrun"), os.path.join(prefix, "bin", "psrun"))
            installed = os.path.join(prefix, "lib", "libpsrun.so")
            shutil.copy2(os.path.join(build, "libpsrun.so"), installed)
            os.symlink("libpsrun.so", installed + ".0")
            # Where each lookup must find it with PSRUN_LIBRARY unset: next
            # to the psrun on PATH (its ../lib), and on the system's library
            # path with no psrun on PATH.
            cases = [("psrun on PATH", {"PATH": os.path.join(prefix, "bin") + ":/usr/bin:/bin"}),
                     ("library path", {"PATH": "/usr/bin:/bin",
                                       "LD_LIBRARY_PATH": os.path.join(prefix, "lib")})]
            for name, extra in cases:
                with self.subTest(name):
                    self._run_from_venv(venv, tmp, dict(extra), installed, build)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _run_from_venv(self, venv, tmp, extra, installed, build):
        state = tempfile.mkdtemp(prefix="state.", dir=tmp)
        os.chmod(state, 0o700)
        env = {k: v for k, v in os.environ.items()
               if k not in ("PSRUN_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
        env.update(extra, PSRUN_SESSION_ROOT=state)
        # The library the package loaded, as the process maps it.
        code = ("import psrun, sys\n"
                "assert '/site-packages/' in psrun.__file__, psrun.__file__\n"
                "sb = psrun.Sandbox(timeout=30)\n"
                "try:\n"
                "    r = sb.exec('echo installed')\n"
                "    sys.stdout.write(r.stdout.decode())\n"
                "finally:\n"
                "    sb.destroy()\n"
                "maps = {l.split()[-1] for l in open('/proc/self/maps') if 'libpsrun' in l}\n"
                "sys.stdout.write(' '.join(sorted(maps)) + '\\n')\n")
        run = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], cwd=tmp,
                             env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(lines[0], "installed")
        maps = lines[1].split()
        self.assertEqual([os.path.realpath(m) for m in maps], [os.path.realpath(installed)],
                         f"libpsrun mapped from {maps}, not the installed {installed}")
        self.assertFalse(any(m.startswith(build + os.sep) for m in maps), maps)
        self.assertEqual(os.listdir(state), [], "a session left behind")


if __name__ == "__main__":
    unittest.main()
