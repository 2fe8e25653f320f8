# SPDX-License-Identifier: MIT
"""psrun.images against the real libpsrun: an OCI layout made here (by the
registry tier's tests/registry/mklayout.py) imported into a store of the
test's own, listed, inspected, removed and pruned; refused input raises
PsrunError with psrun's one line and leaves nothing in the store. Pulls
from a registry are the registry tier's (tests/registry/run.sh)."""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from psrun import PsrunError, images  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MKLAYOUT = os.path.join(HERE, "..", "..", "..", "tests", "registry", "mklayout.py")


@unittest.skipUnless(os.geteuid() == 0, "needs root: layers are unpacked owned by the sandbox's ids")
class ImagesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="psrun-py-images.")
        self.store = os.path.join(self.tmp, "store")
        tree = os.path.join(self.tmp, "tree", "etc")
        os.makedirs(tree)
        with open(os.path.join(tree, "motd"), "w") as f:
            f.write("psrun.images\n")
        env = dict(os.environ, MKLAYOUT_CONFIG='{"WorkingDir": "/srv", "User": "7"}')
        self.layout = os.path.join(self.tmp, "layout")
        self.digest = subprocess.run(
            [sys.executable, MKLAYOUT, self.layout, "v1", "amd64", os.path.dirname(tree)],
            env=env, check=True, capture_output=True, text=True).stdout.strip()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_import_list_inspect_remove_prune(self):
        img = images.import_(f"oci:{self.layout}:v1", store=self.store)
        self.assertEqual(img.digest, self.digest)
        self.assertEqual(img.reference, f"oci:{os.path.realpath(self.layout)}:v1")
        self.assertEqual((img.working_dir, img.user, img.env), ("/srv", "7", ["PATH=/bin"]))
        self.assertEqual(len(img.layers), 1)
        self.assertTrue(img.unpacked)
        # Root's store: the image's ids onto the sandboxes' host range (the
        # field after `unpacked`, read through the struct's layout).
        self.assertEqual(img.owners, "shifted")
        self.assertEqual(img.blobs_fetched, 2)
        again = images.import_(f"oci:{self.layout}:v1", store=self.store)
        self.assertEqual((again.blobs_fetched, again.blobs_present), (0, 2))
        listed = images.list(store=self.store)
        self.assertEqual([i.digest for i in listed], [self.digest])
        self.assertEqual(images.inspect(img.reference, store=self.store).cmd, ["/bin/sh"])
        layer = os.path.join(self.store, "layers", "sha256", img.layers[0].digest[7:])
        self.assertTrue(os.path.isfile(os.path.join(layer, "etc", "motd")))
        images.remove(img.reference, store=self.store)
        self.assertEqual(images.list(store=self.store), [])
        with self.assertRaises(PsrunError) as cm:
            images.inspect(img.reference, store=self.store)
        self.assertEqual(cm.exception.code, 2)
        st = images.prune(store=self.store)
        self.assertEqual((st.blobs_removed, st.layers_removed, st.kept_in_use), (3, 1, 0))
        self.assertFalse(os.path.exists(layer))

    def test_refused_input_raises_and_leaves_nothing(self):
        for call, arg, text in (
                (images.pull, "a/../b", "image: `a/../b`"),
                (images.pull, "x:..", "tag must be"),
                (images.pull, f"oci:{self.layout}", "import it, not pull"),
                (images.import_, f"oci:{self.layout}:../../etc", "is not a valid tag"),
                (images.import_, f"oci:{self.layout}:nope", "no image tagged `nope`"),
                (images.import_, "busybox", "is not a local source")):
            with self.assertRaises(PsrunError) as cm:
                call(arg, store=self.store)
            self.assertIn(text, str(cm.exception))
            self.assertNotIn("\n", str(cm.exception))
        self.assertEqual(os.listdir(os.path.join(self.store, "images")), [])
        self.assertEqual(os.listdir(os.path.join(self.store, "tmp")), [])
        with self.assertRaises(PsrunError):
            images.pull("x", mirrors="not-a-list", store=self.store)

    def _archive(self, name, files, links=()):
        """A docker-archive made here: files {name: bytes}, links (name, target)."""
        path = os.path.join(self.tmp, name)
        with tarfile.open(path, "w") as t:
            for n, data in files.items():
                ti = tarfile.TarInfo(n)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            for n, target in links:
                ti = tarfile.TarInfo(n)
                ti.type = tarfile.SYMTYPE
                ti.linkname = target
                t.addfile(ti)
        return "docker-archive:" + path

    def _layer(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as t:
            data = b"from a docker archive\n"
            ti = tarfile.TarInfo("etc/hello")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        return buf.getvalue()

    def test_docker_archive(self):
        layer = self._layer()
        diff = "sha256:" + hashlib.sha256(layer).hexdigest()
        config = json.dumps({"os": "linux", "architecture": "amd64",
                             "config": {"WorkingDir": "/w"},
                             "rootfs": {"type": "layers", "diff_ids": [diff]}}).encode()
        cname = hashlib.sha256(config).hexdigest() + ".json"
        manifest = [{"Config": cname, "RepoTags": ["t:1"], "Layers": ["abc/layer.tar"]}]
        good = self._archive("good.tar", {"manifest.json": json.dumps(manifest).encode(),
                                          cname: config, "l.tar": layer},
                             links=[("abc/layer.tar", "../l.tar")])
        img = images.import_(good, store=self.store)
        self.assertEqual((img.working_dir, [l.digest for l in img.layers]), ("/w", [diff]))
        self.assertEqual(img.config, "sha256:" + cname[:-5])
        with open(os.path.join(self.store, "layers", "sha256", diff[7:], "etc", "hello")) as f:
            self.assertEqual(f.read(), "from a docker archive\n")
        bad = (
            ("none.tar", {"x": b"1"}, (), "has no file `manifest.json`"),
            ("two.tar", {"manifest.json": json.dumps(manifest * 2).encode()}, (),
             "holds 2 images"),
            ("escape.tar", {"manifest.json": json.dumps(manifest).encode(), cname: config},
             [("abc/layer.tar", "../../../etc/passwd")], "has no file `abc/layer.tar`"),
            ("tampered.tar", {"manifest.json": json.dumps(manifest).encode(), cname: config,
                              "l.tar": layer[:-1] + b"x"}, [("abc/layer.tar", "../l.tar")],
             "does not match " + diff),
            ("count.tar", {"manifest.json": json.dumps([dict(manifest[0], Layers=[])]).encode(),
                           cname: config}, (), "0 layers, its config 1 diff_ids"),
        )
        store2 = os.path.join(self.tmp, "store2")
        for name, files, links, text in bad:
            with self.assertRaises(PsrunError) as cm:
                images.import_(self._archive(name, files, links), store=store2)
            self.assertIn(text, str(cm.exception), name)
            self.assertNotIn("\n", str(cm.exception))
        self.assertEqual(os.listdir(os.path.join(store2, "images")), [])
        self.assertEqual(os.listdir(os.path.join(store2, "tmp")), [])

    def test_store_default(self):
        old = os.environ.get("PSRUN_IMAGE_STORE")
        try:
            os.environ["PSRUN_IMAGE_STORE"] = self.store
            self.assertEqual(images.store_default(), self.store)
            os.environ["PSRUN_IMAGE_STORE"] = "relative/dir"
            self.assertEqual(images.store_default(), "/var/lib/psrun/images")
        finally:
            if old is None:
                os.environ.pop("PSRUN_IMAGE_STORE", None)
            else:
                os.environ["PSRUN_IMAGE_STORE"] = old

if __name__ == "__main__":
    unittest.main()
