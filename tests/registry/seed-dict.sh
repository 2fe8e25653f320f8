# SPDX-License-Identifier: MIT
# Sourced by tests/registry/run.sh (its helpers, namespace and registries):
# the seed's sandbox dict against a registry-pulled image. An image built
# offline from the host's python3 (the interpreter, its shared libraries by
# ldd, and only the stdlib modules `import json, os, sys` loads) and node,
# pushed as library/python:3.11-slim to the plain-HTTP registry, which a
# `registry_mirrors` entry makes Docker Hub's mirror: the reference
# `python:3.11-slim` resolves through it. The dict is the seed's, plus
# the mirror and a store of the tier's own (the registries file and the
# default store are the host's); every face runs it twice, natively and with
# `backend: gvisor` as one more key.
seed_image() { # TREE
	local t=$1 f
	mkdir -p "$t/usr/bin" "$t/usr/lib/python3.11/lib-dynload" "$t/bin"
	# a /bin/sh: sandbox_exec runs its command with it
	cp "$BUSYBOX" "$t/bin/busybox"
	ln -s busybox "$t/bin/sh"
	cp /usr/bin/python3 "$t/usr/bin/python3"
	cp "$(readlink -f "$(command -v node)")" "$t/usr/bin/node"
	for f in $(ldd /usr/bin/python3 "$(readlink -f "$(command -v node)")" | grep -oE '/[^ ]+' | sort -u); do
		mkdir -p "$t$(dirname "$f")"
		cp -L "$f" "$t$f"
	done
	for f in $(/usr/bin/python3 -S -c 'import json, os, sys, site, encodings
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f and f.startswith("/usr/lib/python3"):
        print(f)'); do
		mkdir -p "$t$(dirname "$f")"
		cp "$f" "$t$f"
	done
	# the whole encodings package (small): codecs are looked up by name
	cp -r /usr/lib/python3.11/encodings "$t/usr/lib/python3.11/"
}
PYTREE=$TMP/r/python
if ! command -v node >/dev/null || ! [ -x /usr/bin/python3 ] || [ ! -d /usr/lib/python3.11 ]; then
	skip=$((skip + 1))
	echo "[SKIP] the seed's dict: needs the host's /usr/bin/python3 (3.11) and node"
else
	t0=$(date +%s%N)
	seed_image "$PYTREE"
	PYIMG=$(MKLAYOUT_CONFIG='{"Env":["PATH=/usr/local/bin:/usr/bin:/bin","LANG=C.UTF-8"]}' mk python amd64 "$PYTREE")
	push python 127.0.0.1:5004/library/python:3.11-slim --dest-tls-verify=false
	t1=$(date +%s%N)
	echo "# the python image: $(du -sh "$PYTREE" | cut -f1) unpacked, built and pushed in $(((t1 - t0) / 1000000)) ms"
	SEED_STORE=$TMP/store-seed
	# the same dict as it is, then with `backend: gvisor` as one more key
	# (the loop's body is not indented: it holds Python code in strings)
	for BACKEND_KEYS in "" ', "backend": "gvisor"'; do
	SEED_PY="{\"image\": \"python:3.11-slim\", \"cpu_limit\": 2, \"memory_limit\": \"4G\", \"timeout\": 300,
 \"network_mode\": \"restricted\", \"allow_domains\": [\"pypi.org\", \"files.pythonhosted.org\"],
 \"tools\": [\"python\", \"node\"], \"persistent\": False, \"workdir\": \"/workspace\",
 \"env\": {\"MY_VAR\": \"x\"},
 \"registry_mirrors\": [\"http://127.0.0.1:5004\"], \"image_store\": \"$SEED_STORE\"$BACKEND_KEYS}"
	SEED_CMD='import json, os, sys; print(json.dumps([sys.version_info[:2], os.getcwd(), os.environ["MY_VAR"]]))'
	SEED_WANT='[[3, 11], "/workspace", "x"]'
	# Into the namespace by nsenter, not `ip netns exec`: that remounts
	# /sys for the namespace, and the cgroup hierarchies with it.
	seed_ns() { nsenter --net=/run/netns/"$NS" "$@"; }

	# from Python: Sandbox.from_config, then exec python3 -c
	out=$(seed_ns env PYTHONPATH="$HERE/../../bindings/python" PSRUN_LIBRARY="$(dirname "$PSRUN")/libpsrun.so" \
		python3 -c "
import sys
from psrun import Sandbox
with Sandbox.from_config($SEED_PY) as sb:
    r = sb.exec(['python3', '-c', sys.argv[1]])
    sys.stdout.write(r.stdout.decode())
    sys.stderr.write(r.stderr.decode())
    sys.exit(r.exit_code)
" "$SEED_CMD" 2>"$TMP/err")
	rc=$?
	if [ $rc -eq 0 ] && [ "$out" = "$SEED_WANT" ] && seed_ns "$PSRUN" image ls --store "$SEED_STORE" -q 2>/dev/null |
		grep -q 'python:3.11-slim'; then
		ok "the seed's dict from Python${BACKEND_KEYS:+ (backend: gvisor)}: python:3.11-slim through the mirror, python3 -c ran: $out"
	else
		bad "the seed's dict from Python${BACKEND_KEYS:+ (backend: gvisor)}" "rc $rc out $out $(tail -3 "$TMP/err" | tr "\n" " ")"
	fi

	# from C: the same dict's keys (the binding's names and values,
	# psrun/_sandbox.py) through include/psrun.h, imgtool seed (seed.c)
	if [ -n "${PYIMG:-}" ]; then
		mapfile -t SEED_KEYS < <(PYTHONPATH="$HERE/../../bindings/python" /usr/bin/python3 -c "
from psrun._sandbox import _CONFIG_KEYS, _policy_value
for k, v in ($SEED_PY).items():
    if k != 'persistent':
        key = _CONFIG_KEYS[k]
        print(key + '=' + _policy_value(key, v))")
		out=$(seed_ns "$TOOL" seed "${SEED_KEYS[@]}" -- python3 -c "$SEED_CMD" 2>"$TMP/err")
		rc=$?
		if [ $rc -eq 0 ] && [ "$out" = "$SEED_WANT" ] && [ "${#SEED_KEYS[@]}" -ge 11 ]; then
			ok "the seed's dict from C${BACKEND_KEYS:+ (backend: gvisor)} (psrun_session_create, psrun_exec; ${#SEED_KEYS[@]} keys): $out"
		else
			bad "the seed's dict from C${BACKEND_KEYS:+ (backend: gvisor)}" "rc $rc out $out keys ${SEED_KEYS[*]} $(tail -3 "$TMP/err" | tr '\n' ' ')"
		fi

		# from MCP: the official SDK's client, `psrun mcp` with the same keys
		NM=$(dirname "$PSRUN")/npm/node_modules
		if [ ! -d "$NM/@modelcontextprotocol/sdk" ] && command -v npm >/dev/null; then
			"$HERE/../clients/mcp/install.sh" "$(dirname "$PSRUN")" >/dev/null 2>&1
		fi
		if [ -d "$NM/@modelcontextprotocol/sdk" ]; then
			out=$(seed_ns node "$HERE/seed-mcp.mjs" "$PSRUN" "$NM" "python3 -c '$SEED_CMD'" "${SEED_KEYS[@]}" 2>"$TMP/err")
			rc=$?
			if [ $rc -eq 0 ] && [ "$out" = "$SEED_WANT" ]; then
				ok "the seed's dict from MCP${BACKEND_KEYS:+ (backend: gvisor)} (the SDK's client, psrun mcp, sandbox_exec): $out"
			else
				bad "the seed's dict from MCP${BACKEND_KEYS:+ (backend: gvisor)}" "rc $rc out $out $(tail -3 "$TMP/err" | tr '\n' ' ')"
			fi
		else
			skip=$((skip + 1))
			echo "[SKIP] the seed's dict from MCP${BACKEND_KEYS:+ (backend: gvisor)}: the MCP SDK is not installed in $NM (tests/clients/mcp/install.sh, npm)"
		fi
	fi
	done
	if [ -n "${PYIMG:-}" ]; then

		# a tool the image lacks fails the create, one line naming it and the image
		mapfile -t BAD_KEYS < <(printf '%s\n' "${SEED_KEYS[@]}" | grep -v '^backend=' | sed 's/^tools=.*/tools=["python", "node", "go"]/')
		seed_ns "$TOOL" seed "${BAD_KEYS[@]}" -- python3 -c 'print(1)' >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ $rc -eq 125 ] && one_line && [ ! -s "$TMP/out" ] &&
			grep -q 'tools: `go` is not in the root of python:3.11-slim (no go on PATH)' "$TMP/err"; then
			ok "a tool the image lacks fails the create: $(err_line)"
		else
			bad "a missing tool" "rc $rc $(err_line)"
		fi
	fi
	echo "# the seed's dict section: $((($(date +%s%N) - t0) / 1000000)) ms"
fi
