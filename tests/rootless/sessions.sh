# SPDX-License-Identifier: MIT
# Sourced by tests/rootless/run.sh (its users SUB and ONE, `as`, ok/bad/
# skipped, $out/$err): sessions, the file API, psrun mcp and the Python
# binding as users with no privileges (docs/rootless.md#sessions), and the
# hostile cases: another user's sessions and state directories out of
# reach, a planted state directory refused, a daemonized exec tree killed.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LIBPSRUN=$(cd "$BUILD" && pwd)/libpsrun.so
xdg_base=$(mktemp -d)
chmod 755 "$xdg_base"
sess_cleanup() {
	local u
	for u in "$SUB" "$ONE"; do
		[ -d "$xdg_base/$u" ] || continue
		pkill -KILL -u "$u" 2>/dev/null
	done
	rm -rf "$xdg_base"
}
trap 'sess_cleanup; cleanup; rm -f "$out" "$err"' EXIT
# Each user's XDG_RUNTIME_DIR, as pam_systemd makes /run/user/UID: theirs, 0700.
for u in "$SUB" "$ONE"; do
	install -d -m 700 -o "$u" -g "$u" "$xdg_base/$u"
done
asx() { # USER CMD...: as USER with its XDG_RUNTIME_DIR
	local u=$1
	shift
	as "$u" env XDG_RUNTIME_DIR="$xdg_base/$u" "$@"
}
state_of() { echo "$xdg_base/$1/psrun/sessions"; }

# --- each user: create, exec, files, destroy, gc ---
sess_users=("$ONE")
[ -n "$sub_start" ] && command -v newuidmap >/dev/null && sess_users=("$SUB" "$ONE")
for u in "${sess_users[@]}"; do
	name=$([ "$u" = "$SUB" ] && echo subids || echo "one id")
	if ! id=$(asx "$u" "$PSRUN" session create 2>"$err"); then
		bad "session $name: create" "$(cat "$err")"
		continue
	fi
	if asx "$u" "$PSRUN" session exec --json "$id" -- sh -c 'id -u; echo hi > /workspace/a; cat /workspace/a' >"$out" 2>"$err" &&
		[ "$(tr '\n' ' ' <"$out")" = "1000 hi " ] &&
		grep -q '"rootless":true' "$err" && grep -q '"timeout":"pid namespace"' "$err"; then
		ok "session $name: exec as 1000, the workspace kept, layers say rootless"
	else
		bad "session $name: exec" "$(cat "$out" "$err")"
	fi
	st=$(stat -c '%a %U' "$(state_of "$u")" "$(state_of "$u")/$id" 2>&1 | tr '\n' ' ')
	[ "$st" = "700 $u 700 $u " ] && ok "session $name: state under XDG_RUNTIME_DIR/psrun/sessions, 0700, the user's" ||
		bad "session $name: state dir" "$st"
	# The file API both ways, on files the sandbox made private to itself.
	if asx "$u" "$PSRUN" session exec "$id" -- sh -c 'mkdir -m 700 /workspace/d && echo secret > /workspace/d/s && chmod 600 /workspace/d/s' 2>"$err" &&
		printf 'from host' | asx "$u" "$PSRUN" session write "$id" /workspace/w/h.txt 2>>"$err" &&
		[ "$(asx "$u" "$PSRUN" session read "$id" d/s 2>>"$err")" = secret ] &&
		asx "$u" "$PSRUN" session ls -R "$id" >"$out" 2>>"$err" && grep -q ' d/s$' "$out" && grep -q ' w/h.txt$' "$out" &&
		[ "$(asx "$u" "$PSRUN" session exec "$id" -- sh -c 'cat /workspace/w/h.txt; stat -c %u /workspace/w/h.txt' 2>>"$err" | tr '\n' ' ')" = "from host1000 " ] &&
		asx "$u" "$PSRUN" session rm "$id" d 2>>"$err" &&
		! asx "$u" "$PSRUN" session exec "$id" -- test -e /workspace/d 2>>"$err"; then
		ok "session $name: write, read, ls, rm of the sandbox's 0600/0700 files (through the supervisor)"
	else
		bad "session $name: files" "$(cat "$out" "$err")"
	fi
	# Hostile: a symlink to a host file the user may read is not followed.
	asx "$u" "$PSRUN" session exec "$id" -- ln -s /etc/hostname /workspace/l 2>/dev/null
	if asx "$u" "$PSRUN" session read "$id" l >"$out" 2>"$err"; then
		[ "$(cat "$out")" != "$(cat /etc/hostname)" ] && ok "session $name: a planted symlink reads the sandbox's file" ||
			bad "session $name: symlink" "read the host's /etc/hostname"
	else
		ok "session $name: a planted symlink to a host file is refused"
	fi
	if asx "$u" "$PSRUN" session destroy "$id" 2>"$err" && [ -z "$(ls -A "$(state_of "$u")")" ]; then
		ok "session $name: destroy leaves nothing"
	else
		bad "session $name: destroy" "$(cat "$err"; ls -A "$(state_of "$u")")"
	fi
done

u=${sess_users[0]}
# user: root inside (subordinate ids only: one id maps the user as 1000):
# files of the sandbox's root, host uid the range's start, still readable
# and removable.
if [ "${#sess_users[@]}" -eq 2 ] && id=$(asx "$SUB" "$PSRUN" session create -o user=root 2>"$err"); then
	if [ "$(asx "$SUB" "$PSRUN" session exec "$id" -- sh -c 'mkdir -m 700 /workspace/r && echo x > /workspace/r/f && chmod 600 /workspace/r/f && stat -c %u /workspace/r/f' 2>"$err")" = 0 ] &&
		[ "$(asx "$SUB" "$PSRUN" session read "$id" r/f 2>>"$err")" = x ] &&
		asx "$SUB" "$PSRUN" session rm "$id" r 2>>"$err"; then
		ok "session subids, user root: the sandbox root's private files read and removed"
	else
		bad "session user root files" "$(cat "$err")"
	fi
	asx "$SUB" "$PSRUN" session destroy "$id" 2>/dev/null
elif [ "${#sess_users[@]}" -eq 2 ]; then
	bad "session user root" "$(cat "$err")"
fi

# gc: a supervisor killed, its state removed by the user's own psrun gc.
if id=$(asx "$u" "$PSRUN" session create 2>"$err"); then
	pid=$(sed -n 's/^pid //p' "$(state_of "$u")/$id/info")
	kill -KILL "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	# Its own OCI root: the default one is root's (rootless OCI is
	# tests/rootless/rootless-oci.sh's).
	if asx "$u" "$PSRUN" --root "$xdg_base/$u/oci" gc >"$out" 2>"$err" && [ ! -e "$(state_of "$u")/$id" ]; then
		ok "session: psrun gc as the user removes a dead supervisor's session"
	else
		bad "session gc" "$(cat "$out" "$err")"
	fi
else
	bad "session gc: create" "$(cat "$err")"
fi

# The exec timeout kills a daemonized tree (setsid, parent gone) with no
# cgroup; destroy kills a daemonized background process.
if id=$(asx "$u" "$PSRUN" session create 2>"$err"); then
	mark=61.$$$RANDOM
	start=$(date +%s)
	asx "$u" "$PSRUN" session exec --timeout 1s "$id" -- sh -c "setsid sh -c 'sleep $mark' & sleep 60" >"$out" 2>"$err"
	rc=$?
	sleep 0.3
	if [ "$rc" -ne 0 ] && [ $(($(date +%s) - start)) -lt 20 ] && ! pgrep -f "sleep $mark" >/dev/null &&
		[ "$(asx "$u" "$PSRUN" session exec "$id" -- echo alive 2>&1)" = alive ]; then
		ok "session: the exec timeout kills a daemonized tree, the session lives on"
	else
		bad "session timeout" "rc $rc, left: $(pgrep -af "sleep $mark")"
		pkill -f "sleep $mark"
	fi
	# A background process's result says what held, as an exec's does.
	bg=$(asx "$u" "$PSRUN" session exec --detach "$id" -- sh -c 'exit 3' 2>"$err")
	if asx "$u" "$PSRUN" session wait --json "$id" "$bg" >"$out" 2>"$err"; [ $? -eq 3 ] &&
		grep -q '"exit_code":3' "$err" && grep -q '"rootless":true,"identity"' "$err"; then
		ok "session: a background process's wait says its status and the rootless layers"
	else
		bad "session background wait" "$bg: $(cat "$out" "$err")"
	fi
	mark2=62.$$$RANDOM
	asx "$u" "$PSRUN" session exec --detach "$id" -- sh -c "setsid sh -c 'sleep $mark2' & sleep 60" >/dev/null 2>"$err"
	sleep 0.5
	pgrep -f "sleep $mark2" >/dev/null || bad "session background" "the daemon did not start: $(cat "$err")"
	asx "$u" "$PSRUN" session destroy "$id" 2>"$err"
	sleep 0.3
	if ! pgrep -f "sleep $mark2" >/dev/null; then
		ok "session: destroy kills a daemonized background process"
	else
		bad "session destroy background" "left: $(pgrep -af "sleep $mark2")"
		pkill -f "sleep $mark2"
	fi
else
	bad "session timeout: create" "$(cat "$err")"
fi

# Limits as psrun run's: with no delegated subtree an asked limit is
# refused at create, or an rlimit of every exec with best_effort.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	skipped "session limits" "cgroup v2 host: the refusal is for hosts with no delegated subtree"
elif asx "$u" "$PSRUN" session create -o memory_limit=100M >"$out" 2>"$err"; then
	bad "session limits strict" "created $(cat "$out")"
	asx "$u" "$PSRUN" session destroy "$(cat "$out")" 2>/dev/null
elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'limits: memory_limit needs a cgroup' "$err" &&
	[ -z "$(ls -A "$(state_of "$u")")" ]; then
	ok "session: limits strict refuses an asked memory limit in one line, nothing left"
	if id=$(asx "$u" "$PSRUN" session create -o memory_limit=100M -o limits=best_effort 2>"$err") &&
		[ "$(asx "$u" "$PSRUN" session exec --json "$id" -- sh -c 'ulimit -v' 2>"$err")" = 102400 ] &&
		grep -q '"memory":"rlimit_as"' "$err"; then
		ok "session: best_effort makes memory_limit every exec's RLIMIT_AS and says so"
	else
		bad "session limits best_effort" "$(cat "$err")"
	fi
	[ -n "${id:-}" ] && asx "$u" "$PSRUN" session destroy "$id" 2>/dev/null
else
	bad "session limits strict" "$(cat "$err")"
fi

# lifetime ends the session and kills a daemonized background process.
if id=$(asx "$u" "$PSRUN" session create -o lifetime=2s 2>"$err"); then
	mark3=63.$$$RANDOM
	asx "$u" "$PSRUN" session exec --detach "$id" -- sh -c "setsid sh -c 'sleep $mark3' & sleep 60" >/dev/null 2>"$err"
	sleep 0.5
	pgrep -f "sleep $mark3" >/dev/null || bad "session lifetime" "the daemon did not start: $(cat "$err")"
	for _ in $(seq 50); do [ -e "$(state_of "$u")/$id" ] || break; sleep 0.1; done
	sleep 0.3
	if [ ! -e "$(state_of "$u")/$id" ] && ! pgrep -f "sleep $mark3" >/dev/null; then
		ok "session: lifetime ends the session and kills a daemonized background process"
	else
		bad "session lifetime" "left: $(ls "$(state_of "$u")") $(pgrep -af "sleep $mark3")"
		pkill -f "sleep $mark3"
	fi
else
	bad "session lifetime: create" "$(cat "$err")"
fi

# network full/restricted: refused at create in one line naming network.
for mode in full restricted; do
	if asx "$u" "$PSRUN" session create -o network=$mode >"$out" 2>"$err"; then
		bad "session network $mode" "created: $(cat "$out")"
		asx "$u" "$PSRUN" session destroy "$(cat "$out")" 2>/dev/null
	elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q "network: \`$mode\` needs root" "$err" &&
		[ -z "$(ls -A "$(state_of "$u")")" ]; then
		ok "session: network $mode refused rootless in one line, nothing left"
	else
		bad "session network $mode" "$(cat "$err")"
	fi
done

# --- hostile: another user's and root's sessions and state ---
if [ "${#sess_users[@]}" -eq 2 ] && id=$(asx "$SUB" "$PSRUN" session create 2>"$err"); then
	sroot=$(state_of "$SUB")
	for how in "PSRUN_SESSION_ROOT=$sroot" "XDG_RUNTIME_DIR=$xdg_base/$SUB"; do
		for cmd in "session list" "session exec $id -- true" "session read $id a" "session destroy $id"; do
			# shellcheck disable=SC2086
			if as "$ONE" env "$how" "$PSRUN" $cmd >"$out" 2>"$err"; then
				bad "other user ($how): $cmd" "it worked: $(cat "$out")"
			elif [ "$(wc -l <"$err")" -ne 1 ]; then
				bad "other user ($how): $cmd" "$(cat "$err")"
			else
				ok "hostile: $ONE cannot $cmd of $SUB's (${how%%=*}): $(head -c 80 "$err")"
			fi
		done
	done
	# The socket's peer check on its own: the directories opened up for the
	# test only, then another user connects: no answer; the owner: one.
	peer() { # USER: what the supervisor answers a raw connection
		as "$1" python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(sys.argv[1])
try:
    s.send(struct.pack("<IIII", 0x4e535350, 0xffff, 16, 0))
    d = s.recv(4096)
except OSError:
    d = b""  # closed without a word (EPIPE, ECONNRESET)
print("answered" if len(d) >= 16 else "closed")' "$sroot/$id/control"
	}
	chmod 711 "$xdg_base/$SUB" "$xdg_base/$SUB/psrun" "$sroot" "$sroot/$id"
	chmod 666 "$sroot/$id/control"
	a=$(peer "$ONE" 2>&1) b=$(peer "$SUB" 2>&1)
	chmod 700 "$xdg_base/$SUB" "$xdg_base/$SUB/psrun" "$sroot" "$sroot/$id"
	chmod 600 "$sroot/$id/control"
	[ "$a $b" = "closed answered" ] && ok "hostile: the control socket answers its owner, not another user (SO_PEERCRED)" ||
		bad "socket peer check" "other: $a, owner: $b"
	# Root's sessions: refused to a user (their root is root's).
	if as "$ONE" env PSRUN_SESSION_ROOT=/run/psrun-sessions "$PSRUN" session list >"$out" 2>"$err"; then
		[ -d /run/psrun-sessions ] && bad "root's sessions" "listed: $(cat "$out")" ||
			ok "hostile: root's session root does not exist here, nothing listed"
	else
		grep -q 'owned by another user' "$err" && ok "hostile: root's session root refused to a user" ||
			bad "root's sessions" "$(cat "$err")"
	fi
	asx "$SUB" "$PSRUN" session destroy "$id" 2>/dev/null
fi

# A planted state directory: a symlink, another user's, group-writable, none.
x=$xdg_base/$ONE
plant() { # WHAT SETUP...: the setup as root, then a create as ONE must fail naming it
	local what=$1
	shift
	rm -rf "${x:?}/psrun" "$xdg_base/elsewhere"
	"$@"
	if asx "$ONE" "$PSRUN" session create >"$out" 2>"$err"; then
		bad "planted $what" "created $(cat "$out")"
	elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q "$what" "$err"; then
		ok "hostile: a state directory that $what is refused in one line"
	else
		bad "planted $what" "$(cat "$err")"
	fi
	rm -rf "${x:?}/psrun" "$xdg_base/elsewhere"
}
plant "is a symbolic link" sh -c "install -d -o $ONE -m 700 $xdg_base/elsewhere && ln -s $xdg_base/elsewhere $x/psrun && chown -h $ONE $x/psrun"
plant "is owned by another user" install -d -o "$SUB" -m 700 "$x/psrun"
plant "is writable by its group or others" install -d -o "$ONE" -m 770 "$x/psrun"
plant "sessions is a symbolic link" sh -c "install -d -o $ONE -m 700 $x/psrun $xdg_base/elsewhere && chown $ONE $xdg_base/elsewhere && ln -s $xdg_base/elsewhere $x/psrun/sessions && chown -h $ONE $x/psrun/sessions"
if as "$ONE" "$PSRUN" session create >"$out" 2>"$err"; then
	bad "no XDG_RUNTIME_DIR" "created $(cat "$out")"
elif [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'XDG_RUNTIME_DIR is not set' "$err"; then
	ok "no XDG_RUNTIME_DIR: one line"
else
	bad "no XDG_RUNTIME_DIR" "$(cat "$err")"
fi

# --- psrun mcp as the user: raw JSON-RPC lines over stdio ---
if asx "$u" python3 - "$PSRUN" >"$out" 2>"$err" <<'EOF'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def call(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
call(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
r = call(2, "tools/call", {"name": "sandbox_write_file", "arguments": {"file_path": "/workspace/m.txt", "content": "mcp"}})
assert not r["result"].get("isError"), r
r = call(3, "tools/call", {"name": "sandbox_exec", "arguments": {"command": "id -u; cat /workspace/m.txt"}})
s = r["result"]["structuredContent"]
assert s["exit_code"] == 0 and s["stdout"] == "1000\nmcp" and s["layers"]["rootless"] is True, s
r = call(4, "tools/call", {"name": "sandbox_read_file", "arguments": {"file_path": "/workspace/m.txt"}})
assert "mcp" in json.dumps(r["result"]), r
p.stdin.close()
sys.exit(p.wait())
EOF
then
	ok "psrun mcp as the user: write, exec, read over raw JSON-RPC"
else
	bad "psrun mcp" "$(cat "$out" "$err" | tail -5)"
fi
[ -z "$(ls -A "$(state_of "$u")" 2>/dev/null)" ] || bad "psrun mcp" "left $(ls -A "$(state_of "$u")")"

# --- the Python binding as the user ---
if asx "$u" env PYTHONPATH="$SRC/bindings/python" PSRUN_LIBRARY="$LIBPSRUN" python3 - >"$out" 2>"$err" <<'EOF'
import psrun
with psrun.Sandbox() as sb:
    sb.write_file("p.txt", b"py")
    r = sb.exec("id -u; cat /workspace/p.txt")
    assert r.ok and r.stdout == b"1000\npy", r
    assert r.rootless and r.rootless["limits"]["timeout"] == "pid namespace", r.rootless
    assert sb.read_file("p.txt") == b"py"
    assert [e.name for e in sb.list_files()] == ["p.txt"]
    sb.remove("p.txt")
    assert sb.list_files() == []
EOF
then
	ok "python: psrun.Sandbox as the user, unchanged calls; the result says rootless"
else
	bad "python" "$(cat "$out" "$err" | tail -5)"
fi
[ -z "$(ls -A "$(state_of "$u")" 2>/dev/null)" ] || bad "python" "left $(ls -A "$(state_of "$u")")"
