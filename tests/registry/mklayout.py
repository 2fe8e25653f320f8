#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes OCI image layouts offline for the image tier (tests/image/run.sh).

mklayout.py OUT TAG ARCH LAYER... : adds one image (one gzip layer per LAYER,
a directory tarred by this script) tagged TAG to the layout OUT.
$MKLAYOUT_CONFIG (JSON) adds to the image config's "config" object.
mklayout.py OUT TAG --index TAG_AMD64 TAG_ARM64 : adds an index of two images
already in OUT (amd64, arm64) tagged TAG.
Prints the digest of what it added.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def put_blob(out, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(out, "blobs", "sha256", digest)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
    return "sha256:" + digest, len(data)


def layer_of(directory):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(directory)):
            t.add(os.path.join(directory, name), arcname=name)
    diff = hashlib.sha256(raw.getvalue()).hexdigest()
    return gzip.compress(raw.getvalue(), compresslevel=1, mtime=0), "sha256:" + diff


def load_index(out):
    path = os.path.join(out, "index.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": []}


def save_index(out, index, desc):
    index["manifests"] = [m for m in index["manifests"]
                          if m.get("annotations", {}).get("org.opencontainers.image.ref.name")
                          != desc["annotations"]["org.opencontainers.image.ref.name"]]
    index["manifests"].append(desc)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f)


def main():
    out, tag = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    index = load_index(out)
    ann = {"org.opencontainers.image.ref.name": tag}
    if sys.argv[3] == "--index":
        entries = []
        for sub, arch in ((sys.argv[4], "amd64"), (sys.argv[5], "arm64")):
            m = next(m for m in index["manifests"]
                     if m["annotations"]["org.opencontainers.image.ref.name"] == sub)
            entries.append({"mediaType": m["mediaType"], "digest": m["digest"], "size": m["size"],
                            "platform": {"os": "linux", "architecture": arch}})
        doc = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
               "manifests": entries}
        digest, size = put_blob(out, json.dumps(doc).encode())
        save_index(out, index, {"mediaType": doc["mediaType"], "digest": digest, "size": size,
                                "annotations": ann})
        print(digest)
        return
    arch = sys.argv[3]
    layers, diffs = [], []
    for d in sys.argv[4:]:
        blob, diff = layer_of(d)
        digest, size = put_blob(out, blob)
        layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                       "digest": digest, "size": size})
        diffs.append(diff)
    config = {"architecture": arch, "os": "linux",
              "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]},
              "rootfs": {"type": "layers", "diff_ids": diffs}}
    # $MKLAYOUT_CONFIG: more of the config's "config" (WorkingDir, User, Env)
    config["config"].update(json.loads(os.environ.get("MKLAYOUT_CONFIG", "{}")))
    cdigest, csize = put_blob(out, json.dumps(config).encode())
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": cdigest, "size": csize},
                "layers": layers}
    digest, size = put_blob(out, json.dumps(manifest).encode())
    save_index(out, index, {"mediaType": manifest["mediaType"], "digest": digest, "size": size,
                            "annotations": ann})
    print(digest)


main()
