#!/bin/bash
# SPDX-License-Identifier: MIT
# The image tier: the registry client and the store (image/, docs/images.md)
# against Debian's docker-registry (distribution 2.8), started here on
# loopback ports inside a network namespace this script creates, three ways:
#   :5001  TLS (a CA made here with openssl) and htpasswd basic auth
#   :5002  TLS behind a bearer-token server written here (token_server.py
#          on :5003, the registry's `auth: token:` verifying its JWTs)
#   :5004  plain HTTP, marked insecure in a registries file
# Images are built offline (busybox-static and files made here, tarred by
# mklayout.py into OCI layouts) and pushed with skopeo. Everything runs
# inside the namespace; nothing leaves it. Driven by build/tests/registry/imgtool
# (the store through libpsrun's internal archive) and, in section 14, by `psrun image`
# itself (build/psrun: pull, ls, inspect, import, rm, prune, refused input), and in
# section 15 (seed-dict.sh) the seed's sandbox dict from Python and C. Prints
# "registry: N passed, N failed, N skipped"; removes everything on exit.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOOL=$(realpath "$BUILD/tests/registry/imgtool" 2>/dev/null || echo "$BUILD/tests/registry/imgtool")
PSRUN=$(realpath "$BUILD/psrun" 2>/dev/null || echo "$BUILD/psrun")
pass=0
fail=0
skip=0

ok() { pass=$((pass + 1)); echo "[PASS] $1"; }
bad() { fail=$((fail + 1)); echo "[FAIL] $1${2:+: $2}"; }
summary() { echo "registry: $pass passed, $fail failed, $skip skipped"; }
skip_all() {
	echo "[SKIP] registry: $1"
	skip=$((skip + 1))
	summary
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a network namespace, a tmpfs for the full-disk case)"
for tool in ip docker-registry skopeo openssl htpasswd python3 tc; do
	command -v "$tool" >/dev/null || skip_all "$tool not installed"
done
[ -x "$TOOL" ] || skip_all "no $TOOL (make tests)"
[ -x "$PSRUN" ] || skip_all "no $PSRUN (make)"
BUSYBOX=$(command -v busybox)
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || skip_all "no static busybox (busybox-static)"

NS=psimg$$
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	# whatever still runs in the namespace (a pull the tier started)
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	umount "$TMP/full" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS" || skip_all "cannot create a network namespace"
ip -n "$NS" link set lo up
in_ns() { ip netns exec "$NS" "$@"; }

# ---- certificates, credentials ----
C=$TMP/certs
mkdir -p "$C/skopeo"
{
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=psrun-test-ca \
		-keyout "$C/ca.key" -out "$C/ca.crt"
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$C/srv.key" -out "$C/srv.csr"
	printf 'subjectAltName=IP:127.0.0.1\n' >"$C/ext"
	openssl x509 -req -in "$C/srv.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile "$C/ext" -out "$C/srv.crt"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=psrun-token-signer \
		-keyout "$C/tok.key" -out "$C/tok.crt"
} >/dev/null 2>&1 || skip_all "openssl could not make the certificates"
cp "$C/ca.crt" "$C/skopeo/ca.crt"
htpasswd -Bbn alice s3cret >"$C/htpasswd" 2>/dev/null || skip_all "htpasswd -B failed"

# ---- registries ----
start_registry() { # NAME PORT EXTRA_YAML
	local dir=$TMP/reg-$1
	mkdir -p "$dir/data"
	cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$2
$3
YAML
	# not through in_ns: a function in the background is a subshell, and
	# $! must be the registry itself for the cleanup to end it
	ip netns exec "$NS" docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1 &
	PIDS="$PIDS $!"
}
TLS_YAML="  tls:
    certificate: $C/srv.crt
    key: $C/srv.key"
start_registry basic 5001 "$TLS_YAML
auth:
  htpasswd:
    realm: psrun-test
    path: $C/htpasswd"
start_registry token 5002 "$TLS_YAML
auth:
  token:
    realm: https://127.0.0.1:5003/token
    service: psrun-registry
    issuer: psrun-token-server
    rootcertbundle: $C/tok.crt"
start_registry plain 5004 ""
ip netns exec "$NS" python3 "$HERE/token_server.py" 5003 "$C/tok.crt" "$C/tok.key" "$C/srv.crt" "$C/srv.key" \
	bob t0ken psrun-token-server >"$TMP/token.log" 2>&1 &
PIDS="$PIDS $!"

wait_port() {
	for _ in $(seq 100); do
		in_ns bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
for p in 5001 5002 5003 5004; do
	wait_port $p || skip_all "the registry on :$p did not start ($(tail -2 "$TMP"/reg-*/log "$TMP/token.log" 2>/dev/null | tr '\n' ' '))"
done

# ---- images, built offline ----
L=$TMP/layout
mk() { python3 "$HERE/mklayout.py" "$L" "$@"; }
mkdir -p "$TMP/r/base/bin" "$TMP/r/app/etc" "$TMP/r/big" "$TMP/r/arm/etc" "$TMP/r/corrupt"
cp "$BUSYBOX" "$TMP/r/base/bin/busybox"
ln -s busybox "$TMP/r/base/bin/sh"
echo "psrun image tier" >"$TMP/r/app/etc/motd"
head -c 24M /dev/urandom >"$TMP/r/big/blob"
echo arm64 >"$TMP/r/arm/etc/arch"
head -c 256K /dev/urandom >"$TMP/r/corrupt/data"
SMALL=$(mk small amd64 "$TMP/r/base")
MULTI=$(mk multi amd64 "$TMP/r/base" "$TMP/r/app" "$TMP/r/big")
ARM=$(mk arm arm64 "$TMP/r/arm")
INDEX=$(mk multiarch --index small arm)
CORRUPT=$(mk corrupt amd64 "$TMP/r/corrupt")
APP=$(MKLAYOUT_CONFIG='{"WorkingDir":"/srv","User":"1000:1000","Env":["PATH=/usr/bin:/bin","GREETING=hi"]}' \
	mk app amd64 "$TMP/r/base" "$TMP/r/app")
[ -n "$SMALL" ] && [ -n "$INDEX" ] || skip_all "could not build the test images"

echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$TMP/policy.json"
push() { # SRC-TAG DEST [skopeo flags]
	local src=$1 dest=$2
	shift 2
	in_ns env HOME="$TMP" TMPDIR="$TMP" skopeo --policy "$TMP/policy.json" copy -q "$@" \
		"oci:$L:$src" "docker://$dest" >"$TMP/push.log" 2>&1
}
push small 127.0.0.1:5001/test/small:v1 --dest-cert-dir "$C/skopeo" --dest-creds alice:s3cret &&
	push multi 127.0.0.1:5001/test/multi:v1 --dest-cert-dir "$C/skopeo" --dest-creds alice:s3cret &&
	push small 127.0.0.1:5002/test/small:v1 --dest-cert-dir "$C/skopeo" --dest-creds bob:t0ken &&
	push small 127.0.0.1:5004/test/small:v1 --dest-tls-verify=false &&
	push multi 127.0.0.1:5004/test/multi:v1 --dest-tls-verify=false &&
	push multiarch 127.0.0.1:5004/test/multiarch:v1 --dest-tls-verify=false --all &&
	push corrupt 127.0.0.1:5004/test/corrupt:v1 --dest-tls-verify=false &&
	push app 127.0.0.1:5004/test/app:v1 --dest-tls-verify=false ||
	skip_all "skopeo could not push: $(tail -3 "$TMP/push.log" | tr '\n' ' ')"

# ---- configuration the pulls read ----
printf '{"auths":{"127.0.0.1:5001":{"auth":"%s"},"127.0.0.1:5002":{"auth":"%s"}}}\n' \
	"$(printf alice:s3cret | base64)" "$(printf bob:t0ken | base64)" >"$TMP/auth.json"
printf '{"auths":{"127.0.0.1:5001":{"auth":"%s"},"127.0.0.1:5002":{"auth":"%s"}}}\n' \
	"$(printf alice:wrong | base64)" "$(printf bob:wrong | base64)" >"$TMP/auth-wrong.json"
echo '{}' >"$TMP/auth-none.json"
printf '{"insecure-registries":["127.0.0.1:5004"],"ca-file":"%s"}\n' "$C/ca.crt" >"$TMP/registries.json"

STORE=$TMP/store
pull() { in_ns "$TOOL" pull "$@" 2>"$TMP/err"; }
err_line() { head -c 300 "$TMP/err"; }
one_line() { [ "$(wc -l <"$TMP/err")" -eq 1 ]; }
field() { sed -nE "s/.*(^| )$1=([^ ]*).*/\\2/p"; }
blob_count() { find "$1/blobs/sha256" -type f | wc -l; }

# 1. TLS + basic auth, by tag
out=$(pull "$STORE" 127.0.0.1:5001/test/small:v1 --auth "$TMP/auth.json" --registries "$TMP/registries.json")
if [ $? -eq 0 ] && [ "$(field fetched <<<"$out")" = 2 ] && [ "$(field manifest <<<"$out")" = "$SMALL" ]; then
	ok "pull by tag over TLS with basic auth (manifest $SMALL, 2 blobs)"
else
	bad "pull by tag over TLS with basic auth" "$out $(err_line)"
fi
# every blob in the store hashes to its name
badblobs=$(cd "$STORE/blobs/sha256" && for f in *; do [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$f" ] || echo "$f"; done)
[ -z "$badblobs" ] && [ "$(blob_count "$STORE")" = 3 ] && ok "every stored blob hashes to its name (manifest, config, layer)" ||
	bad "stored blobs" "$badblobs"

# 2. a second pull of the present image: no blob fetched, fast
best=999999
for _ in 1 2 3 4 5; do
	out=$(pull "$STORE" 127.0.0.1:5001/test/small:v1 --auth "$TMP/auth.json" --registries "$TMP/registries.json")
	ms=$(field ms <<<"$out")
	[ "$(field fetched <<<"$out")" = 0 ] || best=fetched
	best=$(python3 -c "print(min($best, $ms))" 2>/dev/null || echo "$best")
done
if [ "$best" != fetched ] && python3 -c "import sys; sys.exit(0 if $best <= 50 else 1)"; then
	ok "second pull by tag of a present image: nothing fetched, ${best} ms (best of 5, target 50)"
else
	bad "second pull" "best=$best ms"
fi
t0=$(date +%s%N)
out=$(pull "$STORE" "127.0.0.1:5001/test/small@$SMALL" --auth "$TMP/auth.json" --registries "$TMP/registries.json")
t1=$(date +%s%N)
if [ $? -eq 0 ] && [ "$(field fetched <<<"$out")" = 0 ] && [ "$(field manifest <<<"$out")" = "$SMALL" ]; then
	out=$(pull "$STORE" "127.0.0.1:5001/test/small@$SMALL" --auth "$TMP/auth-none.json" --registries "$TMP/registries.json")
	if [ $? -eq 0 ] && [ "$(field network <<<"$out")" = 0 ]; then
		ok "pull by digest; again with its record present asks no registry ($(field ms <<<"$out") ms in the pull)"
	else
		bad "pull by digest, present" "$out $(err_line)"
	fi
else
	bad "pull by digest" "$out $(err_line)"
fi

# 3. authentication failures, one line each
check_fail() { # NAME PATTERN ARGS...
	local name=$1 pat=$2
	shift 2
	if pull "$TMP/store-fail" "$@" >/dev/null; then
		bad "$name" "succeeded"
	elif one_line && grep -q -- "$pat" "$TMP/err"; then
		ok "$name: $(err_line)"
	else
		bad "$name" "$(err_line)"
	fi
}
check_fail "basic auth, no credentials" "asks for credentials" 127.0.0.1:5001/test/small:v1 \
	--auth "$TMP/auth-none.json" --registries "$TMP/registries.json"
check_fail "basic auth, wrong password" "refused the credentials" 127.0.0.1:5001/test/small:v1 \
	--auth "$TMP/auth-wrong.json" --registries "$TMP/registries.json"
check_fail "TLS against an unknown CA" "TLS certificate not trusted" 127.0.0.1:5001/test/small:v1 \
	--auth "$TMP/auth.json"
check_fail "token auth, anonymous" "token server refused an anonymous pull" \
	127.0.0.1:5002/test/small:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json"
check_fail "token auth, wrong credentials" "token server refused the credentials" \
	127.0.0.1:5002/test/small:v1 --auth "$TMP/auth-wrong.json" --registries "$TMP/registries.json"
check_fail "plain HTTP registry not marked insecure" "127.0.0.1:5004" 127.0.0.1:5004/test/small:v1 \
	--auth "$TMP/auth-none.json"
check_fail "unknown tag" "not found" 127.0.0.1:5004/test/small:nope --auth "$TMP/auth-none.json" \
	--registries "$TMP/registries.json"
[ ! -d "$TMP/store-fail/images" ] || [ -z "$(ls "$TMP/store-fail/images")" ] &&
	ok "failed pulls recorded nothing" || bad "failed pulls left records"

# 4. bearer token
out=$(pull "$TMP/store-tok" 127.0.0.1:5002/test/small:v1 --auth "$TMP/auth.json" --registries "$TMP/registries.json")
[ $? -eq 0 ] && [ "$(field manifest <<<"$out")" = "$SMALL" ] && ok "pull through the bearer-token dance" ||
	bad "bearer-token pull" "$out $(err_line)"

# 5. plain HTTP marked insecure; multi-layer; index -> host arch
out=$(pull "$TMP/store-http" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json")
[ $? -eq 0 ] && [ "$(field layers <<<"$out")" = 3 ] && [ "$(field fetched <<<"$out")" = 4 ] &&
	ok "multi-layer image over plain HTTP marked insecure (3 layers + config)" || bad "multi-layer pull" "$out $(err_line)"
out=$(pull "$TMP/store-http" 127.0.0.1:5004/test/multiarch:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json")
if [ "$(uname -m)" = x86_64 ]; then
	[ $? -eq 0 ] && [ "$(field manifest <<<"$out")" = "$SMALL" ] && [ "$(field index <<<"$out")" = "$INDEX" ] &&
		ok "index: the amd64 manifest chosen (arm64 is $ARM)" || bad "index pull" "$out $(err_line)"
else
	skip=$((skip + 1))
	echo "[SKIP] index: the test index has amd64 and arm64 only"
fi

# 6. a blob corrupted in the registry's storage
cdata=$(python3 -c "
import json,sys
m=json.load(open('$L/blobs/sha256/${CORRUPT#sha256:}'))
print(m['layers'][0]['digest'])")
f=$TMP/reg-plain/data/docker/registry/v2/blobs/sha256/${cdata:7:2}/${cdata#sha256:}/data
if [ -f "$f" ]; then
	printf 'XXXXXXXX' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
	if pull "$TMP/store-bad" 127.0.0.1:5004/test/corrupt:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" >/dev/null; then
		bad "corrupted blob" "the pull succeeded"
	elif one_line && grep -q "$cdata" "$TMP/err" && grep -q "does not match its digest" "$TMP/err" &&
		[ ! -e "$TMP/store-bad/blobs/sha256/${cdata#sha256:}" ] && [ -z "$(ls "$TMP/store-bad/tmp")" ] &&
		[ -z "$(ls "$TMP/store-bad/images")" ]; then
		ok "corrupted blob refused naming its digest, nothing kept: $(err_line)"
	else
		bad "corrupted blob" "$(err_line); tmp: $(ls "$TMP/store-bad/tmp")"
	fi
else
	bad "corrupted blob" "no registry blob at $f"
fi

# 7. two pulls of one image at once: the work done once, both succeed
S2=$TMP/store-conc
# (ip netns exec execs the tool: $! is the pull itself)
ip netns exec "$NS" "$TOOL" pull "$S2" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" --rate 30000000 >"$TMP/c1" 2>&1 &
p1=$!
ip netns exec "$NS" "$TOOL" pull "$S2" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" --rate 30000000 >"$TMP/c2" 2>&1 &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
f1=$(field fetched <"$TMP/c1")
f2=$(field fetched <"$TMP/c2")
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $((f1 + f2)) -eq 4 ] && [ "$(blob_count "$S2")" = 5 ]; then
	ok "two concurrent pulls: both succeed, 4 blobs fetched once between them ($f1 + $f2)"
else
	bad "concurrent pulls" "rc $r1/$r2 fetched $f1/$f2: $(cat "$TMP/c1" "$TMP/c2" | head -c 300)"
fi

# 8. SIGKILL mid-pull, then a clean pull that resumes
S3=$TMP/store-kill
ip netns exec "$NS" "$TOOL" pull "$S3" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" --rate 3000000 >/dev/null 2>&1 &
pk=$!
for _ in $(seq 100); do
	sz=$(find "$S3/tmp" -name 'blob-*' -size +2M 2>/dev/null | head -1)
	[ -n "$sz" ] && break
	sleep 0.1
done
kill -9 $pk 2>/dev/null
wait $pk 2>/dev/null
if [ -n "$sz" ] && [ -z "$(ls "$S3/images")" ]; then
	visible=$(cd "$S3/blobs/sha256" && for b in *; do [ "$(sha256sum "$b" | cut -d' ' -f1)" = "$b" ] || echo "$b"; done)
	out=$(pull "$S3" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json")
	if [ $? -eq 0 ] && [ -z "$visible" ] && [ "$(field resumed <<<"$out")" = 1 ] && [ -z "$(ls "$S3/tmp")" ]; then
		ok "SIGKILL mid-blob: nothing half-visible; the next pull resumed it and verified ($out)"
	else
		bad "SIGKILL then pull" "visible-bad=$visible $out $(err_line)"
	fi
else
	bad "SIGKILL mid-pull" "no partial blob seen, or a record written"
fi

# 9. prune: a held layer survives its record; released, it goes; what a
# record uses stays
SP=$TMP/store-tok
smalllayer=$("$TOOL" lookup "$SP" 127.0.0.1:5002/test/small:v1 | field layer)
mkfifo "$TMP/holdfifo"
"$TOOL" hold "$SP" 127.0.0.1:5002/test/small:v1 <"$TMP/holdfifo" >"$TMP/hold.out" &
ph=$!
exec 7>"$TMP/holdfifo"
for _ in $(seq 50); do grep -q held "$TMP/hold.out" && break; sleep 0.1; done
"$TOOL" rm "$SP" 127.0.0.1:5002/test/small:v1
out=$("$TOOL" prune "$SP")
if [ -n "$smalllayer" ] && [ -f "$SP/blobs/sha256/${smalllayer#sha256:}" ] &&
	[ "$(field kept_in_use <<<"$out")" = 1 ] && [ "$(field blobs_removed <<<"$out")" = 2 ]; then
	ok "prune keeps a held layer whose record is gone ($out)"
else
	bad "prune with a held layer" "$out"
fi
exec 7>&-
wait $ph
out=$("$TOOL" prune "$SP")
if [ ! -e "$SP/blobs/sha256/${smalllayer#sha256:}" ] && [ "$(blob_count "$SP")" = 0 ]; then
	ok "released, prune removes it ($out)"
else
	bad "prune after release" "$out; $(blob_count "$SP") blobs"
fi
SP=$TMP/store-http
"$TOOL" rm "$SP" 127.0.0.1:5004/test/multiarch:v1
out=$("$TOOL" prune "$SP")
if [ "$("$TOOL" lookup "$SP" 127.0.0.1:5004/test/multi:v1 | field layers)" = 3 ] &&
	[ "$(blob_count "$SP")" = 5 ] && [ "$(field blobs_removed <<<"$out")" = 3 ]; then
	ok "prune removes an index, manifest and config no record uses, keeps a shared layer ($out)"
else
	bad "prune of a removed image" "$out; $(blob_count "$SP") blobs"
fi

# 10. a full disk: one clear error, nothing left
mkdir -p "$TMP/full"
if mount -t tmpfs -o size=4m psrun-image-test "$TMP/full"; then
	if pull "$TMP/full/store" 127.0.0.1:5004/test/multi:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" >/dev/null; then
		bad "full disk" "the pull succeeded"
	elif one_line && grep -q "is full" "$TMP/err" && [ -z "$(ls "$TMP/full/store/tmp")" ] &&
		[ -z "$(ls "$TMP/full/store/images")" ]; then
		ok "full disk: $(err_line)"
	else
		bad "full disk" "$(err_line); tmp: $(ls "$TMP/full/store/tmp")"
	fi
	umount "$TMP/full"
else
	skip=$((skip + 1))
	echo "[SKIP] full disk: cannot mount a tmpfs"
fi

# 11. unpacking: either the layers are unpacked, or it says it is not built and records nothing
S4=$TMP/store-unpack
if out=$(pull "$S4" 127.0.0.1:5004/test/small:v1 --auth "$TMP/auth-none.json" --registries "$TMP/registries.json" --unpack); then
	[ -x "$S4/layers/sha256/$(field layer <<<"$out" | cut -c8-)/bin/busybox" ] &&
		ok "pull with unpacking: the layer unpacked" || bad "unpacked layer" "$out"
elif grep -q "layer unpacking not built" "$TMP/err" && [ -z "$(ls "$S4/images")" ] && [ -z "$(ls "$S4/layers/sha256")" ]; then
	ok "pull with unpacking before image/unpack is merged: one line, nothing recorded"
else
	bad "pull with unpacking" "$(err_line)"
fi

# 12. OCI layout import, verified
out=$("$TOOL" import-oci "$TMP/store-oci" "$L" multi 2>"$TMP/err")
[ $? -eq 0 ] && [ "$(field manifest <<<"$out")" = "$MULTI" ] && [ "$(field fetched <<<"$out")" = 4 ] &&
	ok "import from an OCI layout (tag multi)" || bad "OCI layout import" "$out $(err_line)"
cp -r "$L" "$TMP/layout-bad"
lay=$(python3 -c "
import json
m=json.load(open('$L/blobs/sha256/${SMALL#sha256:}'))
print(m['layers'][0]['digest'][7:])")
printf 'XXXX' | dd of="$TMP/layout-bad/blobs/sha256/$lay" bs=1 seek=50 conv=notrunc status=none
if "$TOOL" import-oci "$TMP/store-oci2" "$TMP/layout-bad" small 2>"$TMP/err" >/dev/null; then
	bad "corrupt OCI layout blob" "imported"
elif one_line && grep -q "$lay" "$TMP/err" && [ ! -e "$TMP/store-oci2/blobs/sha256/$lay" ]; then
	ok "a corrupt blob in an OCI layout refused: $(err_line)"
else
	bad "corrupt OCI layout blob" "$(err_line)"
fi
"$TOOL" import-oci "$TMP/store-oci3" "$L" 2>"$TMP/err" >/dev/null
one_line && grep -q "name one as oci:DIR:TAG" "$TMP/err" && ok "a layout of several images needs a tag: $(err_line)" ||
	bad "layout without tag" "$(err_line)"

# 14. the command line: `psrun image ...` against the same registries
CS=$TMP/store-cli
img() { in_ns "$PSRUN" image "$@" 2>"$TMP/err"; }
leftovers() { # nothing in tmp/, and the records counted
	[ -z "$(ls -A "$CS/tmp" 2>/dev/null)" ] && ls "$CS/images" 2>/dev/null | wc -l
}
out=$(img pull --store "$CS" --registries "$TMP/registries.json" --authfile "$TMP/auth.json" \
	127.0.0.1:5001/test/small:v1)
if [ $? -eq 0 ] && grep -qx "Digest: $SMALL" <<<"$out" && grep -q "fetched 2 blobs" <<<"$out" &&
	grep -q "1 layer unpacked" <<<"$out" && [ -x "$CS/layers/sha256/$(python3 -c "
import json; print(json.load(open('$L/blobs/sha256/${SMALL#sha256:}'))['layers'][0]['digest'][7:])")/bin/busybox" ]; then
	ok "psrun image pull by tag over TLS with basic auth: prints the digest, unpacks"
else
	bad "psrun image pull by tag" "$out $(err_line)"
fi
t0=$(date +%s%N)
out=$(img pull --store "$CS" --registries "$TMP/registries.json" --authfile "$TMP/auth.json" \
	127.0.0.1:5001/test/small:v1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 0 ] && grep -q "nothing fetched" <<<"$out" && grep -qx "Digest: $SMALL" <<<"$out" &&
	ok "psrun image pull again: says nothing was fetched (${ms} ms, the whole command)" ||
	bad "psrun image pull again" "$out $(err_line)"
out=$(img pull --store "$CS" --insecure 127.0.0.1:5004 -q "127.0.0.1:5004/test/multi@$MULTI")
[ $? -eq 0 ] && [ "$out" = "$MULTI" ] && ok "psrun image pull by digest (--insecure HOST, -q prints the digest)" ||
	bad "psrun image pull by digest" "$out $(err_line)"
out=$(img pull --store "$CS" --insecure 127.0.0.1:5004 --json 127.0.0.1:5004/test/app:v1)
if [ $? -eq 0 ] && python3 -c "
import json, sys
d = json.loads(sys.argv[1])
# its two layers are multi's first two: only the config is new
assert d['digest'] == '$APP' and d['fetched']['network'], d
assert d['fetched']['blobs'] == 1 and d['fetched']['present'] == 2, d
" "$out"; then
	ok "psrun image pull --json parses (digest; the config fetched, the two shared layers present)"
else
	bad "psrun image pull --json" "$out $(err_line)"
fi
out=$(img ls --store "$CS")
if [ $? -eq 0 ] && [ "$(head -1 <<<"$out" | awk '{print $1, $2, $3}')" = "REFERENCE DIGEST LAYERS" ] &&
	grep -q "^127.0.0.1:5001/test/small:v1 *${SMALL:0:19} *1 " <<<"$out" &&
	grep -q "^127.0.0.1:5004/test/multi@$MULTI" <<<"$out" && [ "$(wc -l <<<"$out")" = 4 ]; then
	ok "psrun image ls: a table of the three images"
else
	bad "psrun image ls" "$out $(err_line)"
fi
out=$(img ls --store "$CS" --json)
python3 -c "
import json, sys
v = json.loads(sys.argv[1])
refs = [i['reference'] for i in v]
assert refs == sorted(refs) and len(v) == 3, refs
assert {i['digest'] for i in v} == {'$SMALL', '$MULTI', '$APP'}, v
" "$out" 2>"$TMP/py" && ok "psrun image ls --json parses: three images, sorted" || bad "psrun image ls --json" "$(cat "$TMP/py") $out"
out=$(img inspect --store "$CS" --json 127.0.0.1:5004/test/app:v1)
python3 -c "
import json, sys
d = json.loads(sys.argv[1])
c = d['config']
assert c['WorkingDir'] == '/srv' and c['User'] == '1000:1000', c
assert c['Env'] == ['PATH=/usr/bin:/bin', 'GREETING=hi'] and c['Cmd'] == ['/bin/sh'], c
assert c['os'] == 'linux' and c['architecture'] == 'amd64' and d['unpacked'], d
assert len(d['layers']) == 2 and all(l['digest'].startswith('sha256:') for l in d['layers']), d
" "$out" 2>"$TMP/py" && ok "psrun image inspect --json: the config (Env, WorkingDir, User, Cmd) and 2 layers" ||
	bad "psrun image inspect --json" "$(cat "$TMP/py") $out $(err_line)"
out=$(img inspect --store "$CS" 127.0.0.1:5004/test/app:v1)
grep -qx "WorkingDir: /srv" <<<"$out" && grep -qx "User:       1000:1000" <<<"$out" &&
	grep -qx "  GREETING=hi" <<<"$out" && grep -qx "Digest:     $APP" <<<"$out" &&
	[ "$(sed -n '/^Layers:/,$p' <<<"$out" | grep -c '^  sha256:')" = 2 ] &&
	ok "psrun image inspect: the same, for people" || bad "psrun image inspect" "$out $(err_line)"

# import from the OCI layout skopeo's source is: by tag, then present
out=$(img import --store "$CS" "oci:$L:multi")
[ $? -eq 0 ] && grep -qx "Digest: $MULTI" <<<"$out" && grep -q "nothing fetched" <<<"$out" &&
	img ls --store "$CS" -q | grep -qx "oci:$(realpath "$L"):multi" &&
	ok "psrun image import oci:DIR:TAG (its blobs shared with the pulled image: nothing copied)" ||
	bad "psrun image import" "$out $(err_line)"

# import from a docker-archive (`skopeo copy` writes one as `docker save` does):
# the same config, the layers verified against its diff_ids; a tampered one refused
appcfg=$(python3 -c "import json; print(json.load(open('$L/blobs/sha256/${APP#sha256:}'))['config']['digest'])")
if in_ns env HOME="$TMP" TMPDIR="$TMP" skopeo --policy "$TMP/policy.json" copy -q "oci:$L:app" \
	"docker-archive:$TMP/app.tar:test/app:v1" >"$TMP/push.log" 2>&1; then
	out=$(img import --store "$CS" --json "docker-archive:$TMP/app.tar")
	if [ $? -eq 0 ] && python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert d['reference'] == 'docker-archive:$(realpath "$TMP")/app.tar', d
assert d['config']['digest'] == '$appcfg' and d['config']['WorkingDir'] == '/srv', d
assert len(d['layers']) == 2 and d['unpacked'] and d['fetched']['layers_unpacked'] == 2, d
" "$out" && [ -f "$CS/layers/sha256/$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['layers'][1]['digest'][7:])" "$out")/etc/motd" ]; then
		ok "psrun image import docker-archive:FILE (the same config, layers verified by diff_ids and unpacked)"
	else
		bad "psrun image import docker-archive" "$out $(err_line)"
	fi
	mkdir -p "$TMP/da" && tar -C "$TMP/da" -xf "$TMP/app.tar"
	big=$(cd "$TMP/da" && ls -S | head -1)
	printf 'XXXX' | dd of="$TMP/da/$big" bs=1 seek=600 conv=notrunc status=none
	tar -C "$TMP/da" -cf "$TMP/app-bad.tar" .
	rm -rf "$TMP/da"
	# a store of its own: in $CS the layer is present, verified, and not read again
	img import --store "$TMP/store-da" "docker-archive:$TMP/app-bad.tar" >/dev/null
	[ $? -eq 125 ] && one_line && grep -q "does not match" "$TMP/err" &&
		[ -z "$(ls -A "$TMP/store-da/images")" ] && [ -z "$(ls -A "$TMP/store-da/tmp")" ] &&
		ok "a tampered docker-archive layer refused, nothing recorded: $(err_line)" ||
		bad "tampered docker-archive" "$(err_line)"
	img rm --store "$CS" "docker-archive:$TMP/app.tar" >/dev/null
else
	bad "skopeo could not write a docker-archive" "$(tail -2 "$TMP/push.log")"
fi

# refused input: one line, 125, nothing recorded, nothing in tmp/
n_before=$(leftovers)
check_cli_fail() { # NAME PATTERN ARGS...
	local name=$1 pat=$2
	shift 2
	img "$@" >"$TMP/out"
	local rc=$?
	if [ $rc -eq 125 ] && one_line && grep -q -- "$pat" "$TMP/err" && [ ! -s "$TMP/out" ] &&
		[ "$(leftovers)" = "$n_before" ]; then
		ok "psrun image, $name: $(err_line)"
	else
		bad "psrun image, $name" "rc $rc, $(err_line), records $(leftovers) (were $n_before)"
	fi
}
check_cli_fail "a bad reference" "image pull: image: \`127.0.0.1:5004/Test/x\`" pull --store "$CS" \
	--insecure 127.0.0.1:5004 127.0.0.1:5004/Test/x
check_cli_fail "a tag of dots" "tag must be" pull --store "$CS" --insecure 127.0.0.1:5004 \
	'127.0.0.1:5004/test/small:..'
check_cli_fail "a path traversal in a tag" "repository name must be" pull --store "$CS" \
	--insecure 127.0.0.1:5004 '127.0.0.1:5004/test/small:../../../etc/passwd'
check_cli_fail "a path traversal in an OCI layout's tag" "\`../../x\` is not a valid tag" import \
	--store "$CS" "oci:$L:../../x"
check_cli_fail "an unknown registry (nothing listens)" "127.0.0.1:5999" pull --store "$CS" \
	--insecure 127.0.0.1:5999 127.0.0.1:5999/test/small:v1
check_cli_fail "a registry that is not plain HTTP and not trusted" "TLS certificate not trusted" \
	pull --store "$CS" --authfile "$TMP/auth.json" 127.0.0.1:5001/test/small:v1
check_cli_fail "a missing image" "not found" pull --store "$CS" --insecure 127.0.0.1:5004 \
	127.0.0.1:5004/test/nope:v1
check_cli_fail "a missing tag in an OCI layout" "image" import --store "$CS" "oci:$L:nope"
check_cli_fail "a corrupted blob" "does not match its digest" pull --store "$CS" --insecure 127.0.0.1:5004 \
	127.0.0.1:5004/test/corrupt:v1
check_cli_fail "inspect of an image not in the store" "is not in the store" inspect --store "$CS" \
	127.0.0.1:5004/test/nope:v1

# rm, then ls shows it gone
out=$(img rm --store "$CS" 127.0.0.1:5001/test/small:v1 "oci:$L:multi")
if [ $? -eq 0 ] && ! img ls --store "$CS" -q | grep -q "small:v1\|oci:" &&
	[ "$(img ls --store "$CS" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ]; then
	ok "psrun image rm of two images: ls shows them gone"
else
	bad "psrun image rm" "$out $(err_line)"
fi
img rm --store "$CS" 127.0.0.1:5001/test/small:v1 >/dev/null
[ $? -eq 125 ] && one_line && grep -q "is not in the store" "$TMP/err" && ok "psrun image rm again: $(err_line)" ||
	bad "psrun image rm again" "$(err_line)"
# prune: the layers a live user holds stay with no record left; released, they go
rm -f "$TMP/holdfifo"
mkfifo "$TMP/holdfifo"
"$TOOL" hold "$CS" 127.0.0.1:5004/test/app:v1 <"$TMP/holdfifo" >"$TMP/hold.out" &
ph=$!
exec 7>"$TMP/holdfifo"
for _ in $(seq 50); do grep -q held "$TMP/hold.out" && break; sleep 0.1; done
applayers=$("$TOOL" lookup "$CS" 127.0.0.1:5004/test/app:v1 | grep -o 'layer=sha256:[0-9a-f]*' | cut -c14-)
img rm --store "$CS" 127.0.0.1:5004/test/app:v1 "127.0.0.1:5004/test/multi@$MULTI" >/dev/null
mkdir -p "$CS/tmp/blob-killed"
out=$(img prune --store "$CS" --json)
rc=$?
held_ok=$([ -n "$applayers" ] && echo 1 || echo 0)
for l in $applayers; do [ -d "$CS/layers/sha256/$l" ] && [ -f "$CS/blobs/sha256/$l" ] || held_ok=0; done
if [ $rc -eq 0 ] && [ "$held_ok" = 1 ] && python3 -c "
import json, sys
d = json.loads(sys.argv[1])
# the two app layers held (blob and unpacked directory each); multi's
# third layer, the docker-archive's two (uncompressed: digests of their
# own), the manifests and configs removed
assert d['kept_in_use'] == 4 and d['tmp_removed'] == 1 and d['layers_removed'] == 3, d
assert d['blobs_removed'] >= 5, d
" "$out" && [ -z "$(ls -A "$CS/tmp")" ]; then
	ok "psrun image prune keeps the layers a live user holds, clears tmp/ ($out)"
else
	bad "psrun image prune with a held image" "rc $rc held_ok $held_ok $out $(err_line)"
fi
exec 7>&-
wait $ph
out=$(img prune --store "$CS")
if [ $? -eq 0 ] && grep -q "^removed 2 blobs, 2 layers" <<<"$out" && [ "$(blob_count "$CS")" = 0 ] &&
	[ -z "$(ls -A "$CS/layers/sha256")" ]; then
	ok "released, psrun image prune removes them: $out"
else
	bad "psrun image prune after release" "$out $(err_line)"
fi

# 15. the seed's dict (tests/registry/seed-dict.sh)
. "$HERE/seed-dict.sh"

# 13. SHA-256: libcrypto (dlopen) against the portable code, measured
head -c 256M /dev/urandom >"$TMP/sha.bin"
bench=$("$TOOL" sha-bench "$TMP/sha.bin")
want=$(sha256sum "$TMP/sha.bin" | cut -d' ' -f1)
rm -f "$TMP/sha.bin"
if [ "$(grep -c "$want" <<<"$bench")" = 2 ]; then
	ok "sha256 both ways agree with sha256sum: $(tr '\n' ' ' <<<"$bench" | sed "s/$want //g")"
else
	bad "sha256 implementations" "$bench"
fi

summary
[ "$fail" -eq 0 ]
