#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the CRI tier's images offline, as OCI layout tarballs for
`ctr -n k8s.io images import`.

  mkimage.py pause PAUSE-BINARY NAME OUT.tar
      The pod sandbox image: /pause (a static binary) as its command.
  mkimage.py busybox BUSYBOX NAME[,NAME...] OUT.tar
      The container image: the host's static busybox with its applets
      (tests/clients/mkimage.py's root filesystem, the applets hard links
      as in Docker's busybox images: critest masks /bin/ls alone), and a
      small pgrep in sh (critest's execSync timeout spec runs one; Debian's
      busybox has none), under every NAME.

Fixed owners and times, as tests/clients/mkimage.py: the same inputs give
the same digests.
"""
import hashlib
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients"))
import mkimage as base  # noqa: E402  tests/clients/mkimage.py

CREATED = "2023-11-14T22:13:20Z"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
# pgrep PATTERN: the pids whose command name matches the extended regular
# expression, and status 1 for none, as procps' pgrep; never itself.
PGREP = """#!/bin/sh
st=1
for d in /proc/[0-9]*; do
	[ "${d#/proc/}" = "$$" ] && continue
	read -r comm 2>/dev/null <"$d/comm" || continue
	if printf '%s\\n' "$comm" | grep -qE -- "$1"; then
		echo "${d#/proc/}"
		st=0
	fi
done
exit $st
"""


def pause_layer(binary):
    with open(binary, "rb") as f:
        elf = f.read()
    if not base.is_static(elf):
        raise SystemExit(f"mkimage: {binary}: not a static ELF binary")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("dev", "proc", "sys", "etc"):
            tar.addfile(base.info(d, tarfile.DIRTYPE, 0o755))
        tar.addfile(base.info("pause", tarfile.REGTYPE, 0o755, len(elf)), io.BytesIO(elf))
    return out.getvalue()


def write_layout(layer, names, cmd, out):
    layer_digest = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": base.ARCH,
        "os": "linux",
        "created": CREATED,
        "config": {"Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": cmd},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        "history": [{"created": CREATED, "created_by": "tests/cri/mkimage.py"}],
    }, sort_keys=True).encode()
    config_digest = "sha256:" + hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": len(layer)}],
    }, sort_keys=True).encode()
    manifest_digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    manifests = []
    for name in names:
        tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
        manifests.append({
            "mediaType": MEDIA_MANIFEST, "digest": manifest_digest, "size": len(manifest),
            "platform": {"architecture": base.ARCH, "os": "linux"},
            "annotations": {"io.containerd.image.name": name,
                            "org.opencontainers.image.ref.name": tag},
        })
    index = json.dumps({"schemaVersion": 2, "manifests": manifests}, sort_keys=True).encode()
    files = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index)]
    for digest, blob in ((layer_digest, layer), (config_digest, config),
                         (manifest_digest, manifest)):
        files.append(("blobs/sha256/" + digest.split(":")[1], blob))
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            tar.addfile(base.info(d, tarfile.DIRTYPE, 0o755))
        for path, blob in files:
            tar.addfile(base.info(path, tarfile.REGTYPE, 0o644, len(blob)), io.BytesIO(blob))


def main(argv):
    if len(argv) != 5 or argv[1] not in ("pause", "busybox"):
        sys.stderr.write(__doc__)
        return 2
    names = [n for n in argv[3].split(",") if n]
    if not names:
        sys.stderr.write("mkimage: NAME: no image name given\n")
        return 2
    if argv[1] == "pause":
        write_layout(pause_layer(argv[2]), names, ["/pause"], argv[4])
    else:
        rootfs = argv[4] + ".rootfs"
        base.rootfs(argv[2], rootfs, hardlinks=True)
        with tarfile.open(rootfs, "a", format=tarfile.GNU_FORMAT) as tar:
            data = PGREP.encode()
            tar.addfile(base.info("usr/bin/pgrep", tarfile.REGTYPE, 0o755, len(data)),
                        io.BytesIO(data))
        with open(rootfs, "rb") as f:
            layer = f.read()
        os.unlink(rootfs)
        write_layout(layer, names, ["/bin/sh"], argv[4])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
