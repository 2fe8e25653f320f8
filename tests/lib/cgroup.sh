# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# A shell tier's own cgroup, in every hierarchy: found, entered, left and
# removed. Sourced by tests/peer/run.sh, tests/cri/run.sh and
# bench/cri-pods.sh. cg_enter fills
#   CG_DIRS    the run's cgroup directories, one per hierarchy
#   CG_HOME    where this shell was in each, to go back to
#   CG_MOUNTS  each hierarchy's mount point
#   CG_PATHS   each run cgroup's path as /proc/self/cgroup names it
CG_DIRS=()
CG_HOME=()
CG_MOUNTS=()
CG_PATHS=()

# "MOUNTPOINT PATH" of this process's cgroup in every hierarchy: a v1
# hierarchy is the mount whose super options name its controllers, v2 the
# cgroup2 mount; PATH as /proc/self/cgroup names it.
cg_own() {
	awk 'FNR == NR { split($0, c, ":"); want[c[2]] = c[3]; next }
		{
			for (i = 7; $i != "-"; i++) ;
			type = $(i + 1); opts = "," $(i + 3) ","
			if (type == "cgroup2" && ("" in want)) print $5, want[""]
			if (type != "cgroup") next
			for (k in want) {
				if (k == "") continue
				n = split(k, ctl, ","); ok = 1
				for (j = 1; j <= n; j++) if (index(opts, "," ctl[j] ",") == 0) ok = 0
				if (ok) print $5, want[k]
			}
		}' /proc/self/cgroup /proc/self/mountinfo
}

# The directory of this shell's cgroup below MOUNTPOINT. /proc/self/cgroup
# names it relative to the cgroup namespace's root, which a hierarchy
# mounted before the namespace was made does not start at: the directory
# whose cgroup.procs lists this shell is the truth.
cg_own_dir() { # cg_own_dir MOUNTPOINT NS-PATH
	local f
	f=$1${2%/}/cgroup.procs
	if [ -f "$f" ] && grep -qx "$$" "$f"; then
		echo "$1${2%/}"
		return 0
	fi
	f=$(find "$1" -name cgroup.procs -exec grep -lx "$$" {} + 2>/dev/null | head -n 1)
	[ -n "$f" ] && dirname "$f"
}

# Makes NAME below this shell's cgroup in every hierarchy and moves this
# shell into it: what it starts lands below, nowhere else.
cg_enter() { # cg_enter NAME
	local m path home d f
	while read -r m path; do
		home=$(cg_own_dir "$m" "$path") || continue
		d=$home/$1
		mkdir "$d" || continue
		# A v1 cpuset cgroup takes no process before it has CPUs and nodes.
		for f in cpuset.cpus cpuset.mems; do
			[ -f "$d/$f" ] && [ -z "$(cat "$d/$f")" ] && cat "$home/$f" >"$d/$f"
		done
		CG_DIRS+=("$d")
		CG_HOME+=("$home")
		CG_MOUNTS+=("$m")
		CG_PATHS+=("${path%/}/$1")
		echo $$ >"$d/cgroup.procs" || echo "# cgroups: could not join $d" >&2
	done < <(cg_own)
}

# This shell back where it came from.
cg_leave() {
	local d
	for d in "${CG_HOME[@]}"; do
		echo $$ >"$d/cgroup.procs" 2>/dev/null
	done
	return 0
}

# Processes in the run's cgroups, never this shell.
cg_pids() {
	local d
	for d in "${CG_DIRS[@]}"; do
		[ -d "$d" ] || continue
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null || true
	done | sort -un | grep -vxE "$$|$BASHPID" || true
}

# The run's cgroups removed, deepest first, for up to TRIES tenths of a
# second each (a killed process leaves its cgroup a moment later); what
# stays is named on stderr.
cg_remove() { # cg_remove [TRIES]
	local d
	for d in "${CG_DIRS[@]}"; do
		for _ in $(seq 1 "${1:-30}"); do
			[ -d "$d" ] || break
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null && break
			sleep 0.1
		done
		[ ! -d "$d" ] || echo "# clean-up: cgroup left: $d (processes: $(find "$d" -name cgroup.procs -exec cat {} + | tr "\n" " "))" >&2
	done
	return 0
}
