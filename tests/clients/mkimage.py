#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the harness's test image from the host's static busybox, offline.

  mkimage.py rootfs BUSYBOX OUT.tar
      A root filesystem tarball for `docker import`: /bin/busybox, a symlink
      for each of its applets, /etc/passwd and /etc/group (root and a uid
      1000 user), and the empty directories a runtime mounts over.
  mkimage.py oci ROOTFS.tar NAME OUT.tar
      An OCI image layout tarball with ROOTFS.tar as its only layer, for
      `ctr images import`, so the containerd stage does not depend on docker.

Everything is written with fixed owners and times, so the same busybox gives
the same image digest every run.
"""
import hashlib
import io
import json
import platform
import struct
import subprocess
import sys
import tarfile

MTIME = 1700000000
# The image runs the host's busybox, so it declares the host's architecture.
GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386",
          "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}
ARCH = GOARCH.get(platform.machine(), platform.machine())

PASSWD = (
    "root:x:0:0:root:/root:/bin/sh\n"
    "user:x:1000:1000:user:/home/user:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
)
GROUP = "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n"
DIRS = ["bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "root", "home",
        "home/user", "tmp", "proc", "sys", "dev", "run", "var", "var/tmp"]


def info(name, kind, mode, size=0, uid=0, gid=0, target=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.size = size
    ti.uid, ti.gid = uid, gid
    ti.uname = ti.gname = ""
    ti.mtime = MTIME
    ti.linkname = target
    return ti


def is_static(elf):
    """No PT_INTERP program header: runs without a dynamic loader."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:  # 64-bit ELF only
        return False
    order = "<" if elf[5] == 1 else ">"
    phoff, = struct.unpack_from(order + "Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from(order + "HH", elf, 0x36)
    for i in range(phnum):
        p_type, = struct.unpack_from(order + "I", elf, phoff + i * phentsize)
        if p_type == 3:
            return False
    return True


def rootfs(busybox, out, hardlinks=False):
    """hardlinks: each applet a hard link to /bin/busybox, as in Docker's
    busybox images (a mask on one applet then masks that name alone), not a
    symbolic link."""
    with open(busybox, "rb") as f:
        binary = f.read()
    if not is_static(binary):
        sys.exit(f"mkimage.py: {busybox} is not a static 64-bit executable "
                 "(the image has no libc; install busybox-static)")
    # --list-full gives each applet with its usual directory (bin/sh,
    # usr/bin/tail, sbin/ip, ...).
    applets = subprocess.run([busybox, "--list-full"], check=True,
                             capture_output=True, text=True).stdout.split()
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        for d in DIRS:
            mode = 0o1777 if d in ("tmp", "var/tmp") else 0o755
            owner = 1000 if d == "home/user" else 0
            tar.addfile(info(d, tarfile.DIRTYPE, mode, uid=owner, gid=owner))
        tar.addfile(info("bin/busybox", tarfile.REGTYPE, 0o755, len(binary)),
                    io.BytesIO(binary))
        for path in sorted(set(applets)):
            if path == "bin/busybox" or "/" not in path:
                continue
            if path.split("/")[0] not in ("bin", "sbin", "usr"):
                continue
            if hardlinks:
                tar.addfile(info(path, tarfile.LNKTYPE, 0o755, target="bin/busybox"))
            else:
                tar.addfile(info(path, tarfile.SYMTYPE, 0o777, target="/bin/busybox"))
        for name, text in (("etc/passwd", PASSWD), ("etc/group", GROUP)):
            data = text.encode()
            tar.addfile(info(name, tarfile.REGTYPE, 0o644, len(data)), io.BytesIO(data))


def oci(rootfs_tar, name, out):
    with open(rootfs_tar, "rb") as f:
        layer = f.read()
    layer_digest = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": ARCH,
        "os": "linux",
        "created": "2023-11-14T22:13:20Z",
        "config": {"Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": ["/bin/sh"]},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        "history": [{"created": "2023-11-14T22:13:20Z", "created_by": "mkimage.py"}],
    }, sort_keys=True).encode()
    config_digest = "sha256:" + hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": len(layer)}],
    }, sort_keys=True).encode()
    manifest_digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
    index = json.dumps({
        "schemaVersion": 2,
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest, "size": len(manifest),
            "platform": {"architecture": ARCH, "os": "linux"},
            # containerd names the image after io.containerd.image.name;
            # other tools read the OCI ref name.
            "annotations": {"io.containerd.image.name": name,
                            "org.opencontainers.image.ref.name": tag},
        }],
    }, sort_keys=True).encode()
    files = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index)]
    for digest, blob in ((layer_digest, layer), (config_digest, config),
                         (manifest_digest, manifest)):
        files.append(("blobs/sha256/" + digest.split(":")[1], blob))
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            tar.addfile(info(d, tarfile.DIRTYPE, 0o755))
        for path, blob in files:
            tar.addfile(info(path, tarfile.REGTYPE, 0o644, len(blob)), io.BytesIO(blob))


def main(argv):
    if len(argv) == 4 and argv[1] == "rootfs":
        rootfs(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "oci":
        oci(argv[2], argv[3], argv[4])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
