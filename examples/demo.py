# SPDX-License-Identifier: MIT
"""What untrusted code sees inside psrun's default sandbox."""
import os
import socket


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
attempt("create a user namespace", lambda: os.unshare(os.CLONE_NEWUSER))
print(f"  network interfaces: {[name for _, name in socket.if_nameindex()]}")
print(f"  sum of squares below 10**6: {sum(i * i for i in range(10**6))}")
