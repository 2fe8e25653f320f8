# SPDX-License-Identifier: MIT
# The rootless tier's images (docs/rootless.md, "Images"), sourced by
# tests/rootless/run.sh after its users exist: ok, bad, skipped, as, SUB,
# ONE, sub_start, PSRUN and suffix are run.sh's. Each user imports an image
# built offline into a store of its own, sees its owners shifted (or, with
# one id, its own), runs it, and removes it; a user's store is refused when
# it is a symlink, another's, group-writable or root's; hostile layers are
# refused as root's store refuses them. Everything goes with IMG on exit
# (run.sh's trap calls images_cleanup).

IMG=
images_cleanup() {
	[ -n "$IMG" ] || return 0
	# Layers of a subordinate-id store belong to ids the user only has
	# in a user namespace: root removes them.
	rm -rf "$IMG"
	IMG=
}

images_run() {
	if ! command -v python3 >/dev/null || [ ! -x /bin/busybox ] ||
		! file -L /bin/busybox 2>/dev/null | grep -q 'statically linked'; then
		skipped images "needs python3 and a static /bin/busybox to build the test image"
		return
	fi
	local src
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	IMG=$(mktemp -d /tmp/psrun-rlimg.XXXXXX)
	chmod 755 "$IMG" # the test users reach their stores below it
	# Overlayfs in a user namespace (Linux 5.11): a user mounts one.
	mkdir -m 777 "$IMG/probe"
	if ! as "$ONE" unshare --user --map-root-user --mount sh -c \
		"cd $IMG/probe && mkdir a b m && mount -t overlay -o lowerdir=a:b,userxattr none m" 2>/dev/null; then
		skipped images "this kernel mounts no overlayfs in a user namespace (Linux 5.11 or later)"
		return
	fi
	local t=$IMG/tree
	mkdir -p "$t/bin" "$t/etc" "$t/app" "$t/root"
	cp /bin/busybox "$t/bin/"
	local c
	for c in sh cat ls stat id touch true; do ln -s busybox "$t/bin/$c"; done
	ln -s busybox "$t/bin/python3" # for `tools: [python]`
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$t/etc/passwd"
	echo owned >"$t/app/owned" && chown 7:8 "$t/app/owned"
	cp /bin/busybox "$t/app/suid" && chmod 4755 "$t/app/suid"
	chmod 700 "$t/root"
	# A device node (skipped, as root's store skips it) and a whiteout
	# (overlay's char 0/0, which a user may make).
	mknod "$t/app/devnode" c 1 3
	: >"$t/app/.wh.gone"
	if ! python3 "$src/tests/integration/mkimage.py" "$IMG/layout" v1 "$t" \
		'{"Env": ["PATH=/bin"], "WorkingDir": "/app"}' >/dev/null; then
		bad images "mkimage.py failed"
		return
	fi
	chmod -R a+rX "$IMG/layout"
	check_refused() { # NAME PATTERN CMD...: fails, one line matching PATTERN
		local name=$1 pat=$2
		shift 2
		if "$@" >"$out" 2>"$err"; then
			bad "$name" "accepted: $(cat "$out")"
		elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q -- "$pat" "$err"; then
			ok "$name"
		else
			bad "$name" "$(cat "$err")"
		fi
	}
	local ref=oci:$IMG/layout:v1 u
	for u in "$SUB" "$ONE"; do
		mkdir -m 700 "$IMG/home-$u" && chown "$u:" "$IMG/home-$u"
	done
	# Each user's store: $XDG_DATA_HOME/psrun/images.
	asd() { # USER CMD...: as USER with XDG_DATA_HOME in its own directory
		local who=$1
		shift
		as "$who" env XDG_DATA_HOME="$IMG/home-$who/data" "$@"
	}
	local store_sub=$IMG/home-$SUB/data/psrun/images store_one=$IMG/home-$ONE/data/psrun/images

	# --- with subordinate ids: owners shifted through the range ---
	if [ -n "$sub_start" ] && command -v newuidmap >/dev/null; then
		if asd "$SUB" "$PSRUN" image import "$ref" >"$out" 2>"$err" &&
			grep -q '^Owners: subordinate ids' "$out"; then
			ok "images subids: import into \$XDG_DATA_HOME/psrun/images, owners said"
		else
			bad "images subids import" "$(cat "$out" "$err" | tr '\n' ' ')"
		fi
		local layer
		layer=$(ls -d "$store_sub"/layers/sha256/* 2>/dev/null | head -1)
		if [ "$(stat -c %a "$store_sub")" = 700 ] && [ -n "$layer" ] &&
			[ "$(stat -c %u:%g "$layer/app/owned")" = "$((sub_start + 7)):$((sub_start + 8))" ] &&
			[ "$(stat -c %u "$layer/app")" = "$sub_start" ] &&
			[ "$(stat -c %a "$layer/app/suid")" = 755 ] && [ ! -e "$layer/app/devnode" ] &&
			[ "$(stat -c %F:%t:%T "$layer/app/gone")" = "character special file:0:0" ]; then
			ok "images subids: outside, uid N is the range's start + N, the store 0700, no setuid bit, no device, the whiteout made"
		else
			bad "images subids owners" "$(stat -c '%a %u:%g %F %n' "$store_sub" "$layer/app" "$layer/app/owned" "$layer/app/suid" "$layer/app/devnode" "$layer/app/gone" 2>&1 | tr '\n' ' ')"
		fi
		if asd "$SUB" "$PSRUN" run --json -o image="$ref" -- sh -c \
			'id -u; pwd; stat -c "%u:%g" /app/owned /root; touch /x 2>/dev/null && echo writable; echo w >/workspace/f && cat /workspace/f; grep -c "^sandbox:x:1000:" /etc/passwd' \
			>"$out" 2>"$err" &&
			[ "$(tr '\n' ' ' <"$out")" = "1000 /app 7:8 0:0 w 1 " ] &&
			grep -q '"image_owners":"subordinate ids"' "$err"; then
			ok "images subids: run: uid 1000 with its passwd entry, the image's owners inside, read-only root, /workspace"
		else
			bad "images subids run" "$(cat "$out" "$err" | tr '\n' ' ')"
		fi
		if asd "$SUB" "$PSRUN" image inspect "$ref" 2>"$err" | grep -q '^Owners: *subordinate ids' &&
			asd "$SUB" "$PSRUN" image ls 2>>"$err" | grep -q "$IMG/layout:v1"; then
			ok "images subids: ls and inspect"
		else
			bad "images subids inspect" "$(cat "$err")"
		fi
	else
		skipped "images subids" "no /etc/subuid range or no newuidmap"
	fi

	# --- one id: every file the user's, said so, and the image still runs ---
	local one_uid
	one_uid=$(id -u "$ONE")
	if asd "$ONE" "$PSRUN" image import "$ref" >"$out" 2>"$err" && grep -q '^Owners: one id' "$out"; then
		ok "images one id: import says every file is the user's"
	else
		bad "images one id import" "$(cat "$out" "$err" | tr '\n' ' ')"
	fi
	layer=$(ls -d "$store_one"/layers/sha256/* 2>/dev/null | head -1)
	if [ -n "$layer" ] && [ "$(stat -c %u "$layer/app/owned")" = "$one_uid" ] &&
		[ "$(stat -c %a "$layer/app/suid")" = 755 ] && [ ! -e "$layer/app/devnode" ] &&
		[ "$(stat -c %F:%t:%T "$layer/app/gone")" = "character special file:0:0" ]; then
		ok "images one id: outside, the user owns the files, no setuid bit, no device, the whiteout made"
	else
		bad "images one id owners" "$(stat -c '%a %u:%g %n' "$layer/app/owned" "$layer/app/suid" 2>&1 | tr '\n' ' ')"
	fi
	if asd "$ONE" "$PSRUN" run --json -o image="$ref" -- sh -c \
		'id -u; stat -c "%u" /app/owned /root; ls /root >/dev/null && echo root-dir-readable; touch /x 2>/dev/null && echo writable || echo read-only' \
		>"$out" 2>"$err" &&
		[ "$(tr '\n' ' ' <"$out")" = "1000 1000 1000 root-dir-readable read-only " ] &&
		grep -q '"image_owners":"one id"' "$err"; then
		ok "images one id: run: the image's other owners are the user's one id, read-only root"
	else
		bad "images one id run" "$(cat "$out" "$err" | tr '\n' ' ')"
	fi

	# `tools`, looked for in the overlay as a helper in a user namespace
	# of the user's mounts it.
	for u in "$SUB" "$ONE"; do
		[ "$u" = "$SUB" ] && [ -z "$sub_start" ] && continue
		if asd "$u" "$PSRUN" run -o image="$ref" -o 'tools=[python]' -- true 2>"$err"; then
			ok "images: tools found in the image root (${u%%"$suffix"})"
		else
			bad "images tools ($u)" "$(cat "$err")"
		fi
		check_refused "images: a tool the image lacks is refused, one line (${u%%"$suffix"})" \
			'tools: `node` is not in the root of' \
			asd "$u" "$PSRUN" run -o image="$ref" -o 'tools=[node]' -- true
	done

	# --- the store is the user's alone ---
	local line
	# Behind the other user's 0700 home, and where it can be reached.
	check_refused "images: another user's store is refused, one line" "Permission denied" \
		as "$SUB" "$PSRUN" image ls --store "$store_one"
	check_refused "images: another user's store as image_store is refused" "Permission denied" \
		as "$SUB" "$PSRUN" run -o image="$ref" -o image_store="$store_one" -- true
	mkdir -m 1777 "$IMG/open"
	as "$ONE" mkdir -m 755 "$IMG/open/pub"
	as "$ONE" "$PSRUN" image import --store "$IMG/open/pub/s" "$ref" >/dev/null 2>&1
	check_refused "images: another user's reachable store is refused" "belongs to uid $one_uid" \
		as "$SUB" "$PSRUN" image import --store "$IMG/open/pub/s" "$ref"
	if as "$SUB" cat "$store_one/owners" >/dev/null 2>&1 ||
		as "$SUB" touch "$store_one/locks/x" 2>/dev/null; then
		bad "images: another user's store" "readable or writable by $SUB"
	else
		ok "images: another user's store is neither readable nor writable"
	fi
	# Root does not take a user's store for its own (its owners differ).
	check_refused "images: root refuses a user's store, one line" "owned as \`one id $one_uid\`" \
		"$PSRUN" image ls --store "$store_one"
	mkdir -m 700 "$IMG/rootstore"
	check_refused "images: root's store is refused" "belongs to uid 0" \
		as "$ONE" "$PSRUN" image import --store "$IMG/rootstore" "$ref"
	[ -z "$(ls -A "$IMG/rootstore")" ] || bad "images: root's store" "something was written: $(ls -A "$IMG/rootstore")"
	as "$ONE" ln -s "$store_one" "$IMG/home-$ONE/link"
	check_refused "images: a symlink as the store is refused" "is a symlink" \
		as "$ONE" "$PSRUN" image ls --store "$IMG/home-$ONE/link"
	as "$ONE" mkdir -m 770 "$IMG/home-$ONE/shared"
	as "$ONE" chmod 770 "$IMG/home-$ONE/shared"
	check_refused "images: a group-writable store is refused" "writable by group or others" \
		as "$ONE" "$PSRUN" image ls --store "$IMG/home-$ONE/shared"
	as "$ONE" mkdir -m 700 "$IMG/open/mine"
	mkdir -m 777 "$IMG/open-nosticky"
	as "$ONE" mkdir -m 700 "$IMG/open-nosticky/mine"
	if as "$ONE" "$PSRUN" image import --store "$IMG/open/mine/s" "$ref" >"$out" 2>"$err"; then
		ok "images: a store below a sticky world-writable directory is taken"
	else
		bad "images sticky parent" "$(cat "$err")"
	fi
	check_refused "images: a store below a world-writable directory is refused" "writable by others" \
		as "$ONE" "$PSRUN" image import --store "$IMG/open-nosticky/mine/s" "$ref"
	[ ! -e "$IMG/open-nosticky/mine/s" ] || bad "images: world-writable parent" "the store was made"
	# No XDG_DATA_HOME: ~/.local/share/psrun/images.
	if as "$ONE" env HOME="$IMG/home-$ONE" "$PSRUN" image import "$ref" >/dev/null 2>"$err" &&
		[ "$(stat -c %a "$IMG/home-$ONE/.local/share/psrun/images")" = 700 ]; then
		ok "images: without XDG_DATA_HOME the store is ~/.local/share/psrun/images, 0700"
	else
		bad "images default store" "$(cat "$err")"
	fi

	# --- hostile layers, refused rootless as root's store refuses them ---
	local host_marker=$IMG/escaped kind
	for kind in dotdot symlink hardlink; do
		python3 - "$IMG/bad-$kind" "$kind" "$host_marker" <<'EOF'
import hashlib, io, json, os, sys, tarfile
out, kind, marker = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(out, "blobs", "sha256"))
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(out, "blobs", "sha256", d), "wb").write(data)
    return "sha256:" + d, len(data)
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    def add(name, type_=tarfile.REGTYPE, link="", data=b"x"):
        i = tarfile.TarInfo(name); i.type = type_; i.linkname = link
        i.size = len(data) if type_ == tarfile.REGTYPE else 0
        t.addfile(i, io.BytesIO(data) if type_ == tarfile.REGTYPE else None)
    if kind == "dotdot":
        add("a/../../../../../../.." + marker)
    elif kind == "symlink":
        add("esc", tarfile.SYMTYPE, os.path.dirname(marker))
        add("esc/" + os.path.basename(marker))
    else:
        add("h", tarfile.LNKTYPE, marker)
diff = "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()
ld, ls = put(raw.getvalue())
cd, cs = put(json.dumps({"architecture": "amd64", "os": "linux",
    "rootfs": {"type": "layers", "diff_ids": [diff]}}).encode())
md, ms = put(json.dumps({"schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ld, "size": ls}]}).encode())
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(out, "oci-layout"), "w"))
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": md, "size": ms, "annotations": {"org.opencontainers.image.ref.name": "v1"}}]},
    open(os.path.join(out, "index.json"), "w"))
EOF
		chmod -R a+rX "$IMG/bad-$kind"
		# The hardlink's target must exist on the host for the test to mean
		# anything; the others must not be made.
		[ "$kind" = hardlink ] && echo host >"$host_marker" && chmod 644 "$host_marker"
		for u in "$SUB" "$ONE"; do
			[ "$u" = "$SUB" ] && [ -z "$sub_start" ] && continue
			local st
			[ "$u" = "$SUB" ] && st=$store_sub || st=$store_one
			if asd "$u" "$PSRUN" image import "oci:$IMG/bad-$kind:v1" >"$out" 2>"$err"; then
				bad "images hostile $kind ($u)" "imported"
			elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'layer: entry' "$err" &&
				{ [ "$kind" = hardlink ] || [ ! -e "$host_marker" ]; } &&
				[ -z "$(ls -A "$st/tmp")" ] &&
				! asd "$u" "$PSRUN" image ls 2>/dev/null | grep -q "bad-$kind"; then
				ok "images hostile: $kind refused (${u%%"$suffix"}): one line, nothing outside, no record, tmp/ empty"
			else
				bad "images hostile $kind ($u)" "$(cat "$err"; ls -A "$st/tmp"; ls -l "$host_marker" 2>&1)"
			fi
		done
		[ "$kind" = hardlink ] && rm -f "$host_marker"
	done

	# --- rm and prune leave the store empty ---
	for u in "$SUB" "$ONE"; do
		[ "$u" = "$SUB" ] && [ -z "$sub_start" ] && continue
		local st
		[ "$u" = "$SUB" ] && st=$store_sub || st=$store_one
		if asd "$u" "$PSRUN" image rm "$ref" >/dev/null 2>"$err" &&
			asd "$u" "$PSRUN" image prune >/dev/null 2>>"$err" &&
			[ -z "$(find "$st/layers/sha256" "$st/blobs/sha256" "$st/images" "$st/tmp" -mindepth 1)" ]; then
			ok "images: rm and prune as ${u%%"$suffix"} leave no layer, blob or record"
		else
			bad "images rm/prune ($u)" "$(cat "$err"; find "$st" | head -20)"
		fi
	done
	if grep -q "$IMG" /proc/self/mountinfo; then
		bad "images" "a mount below $IMG is left"
	fi
}

images_run
