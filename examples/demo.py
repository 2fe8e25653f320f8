# SPDX-License-Identifier: MIT
"""What untrusted code sees inside psrun's default sandbox."""
import ctypes
import os
import socket

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000


def attempt(what, fn):
    try:
        result = fn()
        print(f"  {what:<38} allowed: {result}")
    except OSError as e:
        print(f"  {what:<38} blocked: {e.strerror}")


print(f"hello from pid {os.getpid()}, uid {os.getuid()}, in {os.getcwd()}")
attempt("write /workspace/notes.txt", lambda: open("notes.txt", "w").write("kept in the sandbox"))
attempt("read the host's /etc/shadow", lambda: open("/etc/shadow").read(10))
attempt("write /usr/bin/python3", lambda: open("/usr/bin/python3", "ab"))
attempt("list /home", lambda: os.listdir("/home"))
attempt("connect to 192.0.2.1:80", lambda: socket.create_connection(("192.0.2.1", 80), 1))
def unshare_user():
    if libc.unshare(CLONE_NEWUSER) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return "a new user namespace"


attempt("create a user namespace", unshare_user)
print(f"  network interfaces: {[name for _, name in socket.if_nameindex()]}")
print(f"  sum of squares below 10**6: {sum(i * i for i in range(10**6))}")
