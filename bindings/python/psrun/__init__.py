# SPDX-License-Identifier: MIT
"""psrun for Python: sandboxes over libpsrun's session API (ctypes, stdlib only).

    from psrun import Sandbox
    with Sandbox(memory_limit="512M", cpu_limit=2, timeout=120) as sb:
        print(sb.exec("python3 -c 'print(1)'").stdout)
"""
from ._sandbox import (AsyncSandbox, Cancel, Cancelled, ExecResult, FileEntry, FileList, GcStats,
                       InstallDenied, PsrunError, Sandbox, Violation, gc)

__all__ = ["Sandbox", "AsyncSandbox", "Cancel", "Cancelled", "ExecResult", "FileEntry",
           "FileList", "GcStats", "InstallDenied", "PsrunError", "Violation", "gc"]
