#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a one-layer OCI image layout offline, for the image-root tests.

mkimage.py OUT TAG TREE CONFIG_JSON : TREE (a directory) tarred as one
gzip layer, CONFIG_JSON the image config's `config` object (Env,
WorkingDir, User), tagged TAG in the layout OUT. Prints the manifest digest.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def put(out, data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest, len(data)


def main():
    out, tag, tree, config = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(tree)):
            t.add(os.path.join(tree, name), arcname=name)
    diff = "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()
    ldigest, lsize = put(out, gzip.compress(raw.getvalue(), compresslevel=1, mtime=0))
    cfg = {"architecture": "amd64", "os": "linux", "config": config,
           "rootfs": {"type": "layers", "diff_ids": [diff]}}
    cdigest, csize = put(out, json.dumps(cfg).encode())
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": cdigest, "size": csize},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                            "digest": ldigest, "size": lsize}]}
    mdigest, msize = put(out, json.dumps(manifest).encode())
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [
            {"mediaType": manifest["mediaType"], "digest": mdigest, "size": msize,
             "annotations": {"org.opencontainers.image.ref.name": tag}}]}, f)
    print(mdigest)


main()
