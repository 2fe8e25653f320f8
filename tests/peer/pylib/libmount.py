# SPDX-License-Identifier: MIT
# The little of util-linux's Python libmount binding that crun's
# tests/test_mounts.py uses (Table(path).find_target(dir) and the options of
# the entry), for hosts whose distribution ships no python3-libmount (Debian):
# without it that file reports "1..0" and its mount tests never run.
# Reads /proc/self/mountinfo format only; written for psrun's peer tier.


class Entry:
    def __init__(self, fields):
        sep = fields.index("-")
        self.target = fields[4]
        self.vfs_options = fields[5]
        self.fstype = fields[sep + 1]
        self.source = fields[sep + 2]
        self.fs_options = fields[sep + 3] if len(fields) > sep + 3 else ""


class Table:
    def __init__(self, path):
        self.entries = []
        with open(path) as f:
            for line in f:
                fields = line.split()
                if "-" in fields and len(fields) >= 7:
                    self.entries.append(Entry(fields))

    def find_target(self, target):
        # The mount on top: the last entry for that mount point.
        for e in reversed(self.entries):
            if e.target == target:
                return e
        return None
