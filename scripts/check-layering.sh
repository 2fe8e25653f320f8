#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scripts/check-layering.sh [MAKE [ROOT]]
#
# The walls of docs/architecture.md (dependencies point one way: cli →
# runtime/oci | runtime/session → runtime/gvisor → runtime → rootfs | policy |
# netns | image | runtime/cgroup → common), checked on the tree at ROOT (default: the
# tree this script is in):
#   1. includes: each wall of the table below. An include is a header of the
#      tree when it names one (from the including file's folder, the top or
#      include/), so "../policy/policy.h" is policy/policy.h and <psrun.h>
#      is include/psrun.h; system headers are no one's;
#   2. only cli/ prints or exits: no printf, puts, perror, exit, and no
#      fprintf/vfprintf/fputs/fputc/fwrite to stdout or stderr, and no dprintf
#      to fd 1 or 2 in the library (the child's _exit is not exit); the one
#      exception is libpsrun.so executed as a program by hand (its entry
#      point, runtime/session/image.c), on lines marked
#      /* layering: a program's entry */. abort() counts as exiting, but for
#      the deliberate fail-closed ones, marked /* layering: fail closed */;
#   3. libpsrun (the Makefile's LIB_SRCS) holds every C file but those of
#      cli/ (and tests/, tools/, examples/, bench/), and none of cli/.
# Each offence is printed as file:line: what, naming its wall; the exit
# status is 1 if there is any. `make check` runs it before the test tiers;
# tests/layering/run.sh plants a breach of each wall in a copy of the tree.
set -u
MAKE_CMD=${1:-make}
ROOT=${2:-$(dirname "$0")/..}
cd "$ROOT" || exit 2
fail=0

offence() {
	echo "check-layering: $1" >&2
	fail=1
}

# Every file of the tree: git's (tracked, and new ones not ignored) in a
# checkout, else what is there but build output.
all_files() {
	if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
		git ls-files --cached --others --exclude-standard | sort -u |
			while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done
	else
		find . \( -name .git -o -name 'build*' \) -prune -o -type f -print | sed 's|^\./||' | sort
	fi
}
ALL=$(all_files)
SRCS=$(grep -E '\.[ch]$' <<<"$ALL")
# Library code: all of it but the CLI's, the tests' and the tools'.
LIB=$(grep -vE '^(cli|tests|tools|examples|bench|bindings)/' <<<"$SRCS")

# 1. The walls, one a line: name, the files (ERE on the path), the headers
# they may not include (ERE on the header's path in the tree), those of them
# they may after all (- for none), and what the wall says.
WALLS='
subsystems ^(policy|rootfs|netns|image)/ ^runtime/ - policy/, rootfs/, netns/ and image/ include nothing of runtime/
image ^image/ ^(policy|rootfs|netns)/ - image/ includes nothing of policy/, rootfs/, netns/ (it is a subsystem of its own)
cgroup ^runtime/cgroup/ ^runtime/ ^runtime/cgroup/ runtime/cgroup/ includes nothing of runtime/ but its own
spine ^runtime/[^/]+$ ^runtime/(oci|session|gvisor)/ - the spine (the files directly in runtime/) includes nothing of runtime/oci/, runtime/session/, runtime/gvisor/
gvisor ^runtime/gvisor/ ^runtime/(session|oci)/ - runtime/gvisor/ includes nothing of runtime/session/, runtime/oci/
oci ^runtime/oci/ ^runtime/(session|gvisor)/ - runtime/oci/ includes nothing of runtime/session/, runtime/gvisor/
session-client ^runtime/session/((api|exec|files|install)[.]c|session[.]h)$ ^runtime/session/(supervisor|image|net) - the session client half includes nothing of the supervisor half (what they share is proto.h)
session-supervisor ^runtime/session/(supervisor|image|net) ^runtime/session/session[.]h$ - the session supervisor half includes nothing of the client half (what they share is proto.h)
siblings ^policy/ ^(rootfs|netns)/ - policy/, rootfs/ and netns/ include nothing of each other
policy-image ^policy/ ^image/ - policy/ includes nothing of image/ (a policy keeps an image reference as a string; runtime/plan-image.c checks its grammar)
siblings ^rootfs/ ^(policy|netns)/ - policy/, rootfs/ and netns/ include nothing of each other
siblings ^netns/ ^(policy|rootfs)/ - policy/, rootfs/ and netns/ include nothing of each other
library ^(common|policy|rootfs|netns|image|runtime|include)/ ^cli/ - no library file includes cli/
mcp ^cli/mcp/ . ^(include/psrun[.]h$|cli/|common/) cli/mcp/ includes only psrun.h, cli/ and common/
common ^common/ . ^(include/psrun[.]h$|common/) common/ includes only itself (and psrun.h, for the public types)
public ^include/ . ^include/ include/psrun.h includes no header of the tree
'

# file<TAB>line<TAB>header, for each include of a header of the tree.
tree_includes() {
	xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' /dev/null |
		awk -v files="$ALL" '
		BEGIN { n = split(files, f, "\n"); for (i = 1; i <= n; i++) have[f[i]] = 1 }
		# a/b/../c is a/c, ./ is nothing; "" is above the top.
		function norm(p,    parts, out, k, i, m) {
			m = split(p, parts, "/"); k = 0
			for (i = 1; i <= m; i++) {
				if (parts[i] == "" || parts[i] == ".") continue
				if (parts[i] == "..") { if (k == 0) return ""; k--; continue }
				out[++k] = parts[i]
			}
			p = ""
			for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
			return p
		}
		{
			file = $0; sub(/:.*/, "", file)
			rest = substr($0, length(file) + 2)
			line = rest; sub(/:.*/, "", line)
			text = substr(rest, length(line) + 2)
			sub(/^[ \t]*#[ \t]*include[ \t]*/, "", text)
			quoted = substr(text, 1, 1) == "\""
			name = substr(text, 2)
			if (quoted) sub(/".*/, "", name); else sub(/>.*/, "", name)
			dir = file; if (!sub(/\/[^\/]*$/, "", dir)) dir = ""
			hit = ""
			if (quoted && dir != "" && (norm(dir "/" name) in have)) hit = norm(dir "/" name)
			else if (norm(name) in have) hit = norm(name)
			else if (norm("include/" name) in have) hit = norm("include/" name)
			if (hit != "") printf "%s\t%s\t%s\n", file, line, hit
		}'
}

while IFS= read -r hit; do
	offence "$hit"
done < <(tree_includes <<<"$SRCS" | awk -F '\t' -v walls="$WALLS" '
	BEGIN {
		n = split(walls, rows, "\n")
		for (i = 1; i <= n; i++) {
			m = split(rows[i], c, " ")
			if (m < 5) continue
			w++; name[w] = c[1]; files[w] = c[2]; deny[w] = c[3]; allow[w] = c[4]
			says[w] = c[5]; for (j = 6; j <= m; j++) says[w] = says[w] " " c[j]
		}
	}
	{
		for (i = 1; i <= w; i++)
			if ($1 ~ files[i] && $3 ~ deny[i] && (allow[i] == "-" || $3 !~ allow[i]))
				printf "%s:%s: includes %s: wall \"%s\": %s\n", $1, $2, $3, name[i], says[i]
	}')

# 2. Only cli/ prints or exits. Comments are skipped when a line starts one.
print_re='(^|[^_[:alnum:]])(printf|vprintf|puts|perror|exit)[[:space:]]*\('
print_re+='|(^|[^_[:alnum:]])(fprintf|vfprintf|fputs|fputc|fwrite|putc)[[:space:]]*\([^;]*\<(stderr|stdout)\>'
print_re+='|(^|[^_[:alnum:]])v?dprintf[[:space:]]*\([[:space:]]*(1|2|STDOUT_FILENO|STDERR_FILENO)[[:space:]]*,'
print_re+='|(^|[^_[:alnum:]])write[[:space:]]*\([[:space:]]*(STDOUT_FILENO|STDERR_FILENO)[[:space:]]*,'
comment_line='^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)'
while IFS=: read -r file line text; do
	offence "$file:$line: wall \"prints\": library code prints or exits (only cli/ may): ${text#"${text%%[![:space:]]*}"}"
done < <(xargs -r grep -nE "$print_re" /dev/null <<<"$LIB" |
	grep -vE "$comment_line" |
	grep -vE '^runtime/session/image\.c:[0-9]+:.*/\* layering: a program.s entry \*/$')
# abort() ends the embedder's whole process: only where going on would be
# worse (a thread left in a sandbox's namespace), and marked so.
while IFS=: read -r file line text; do
	offence "$file:$line: wall \"aborts\": library code aborts (a deliberate one is marked /* layering: fail closed */): ${text#"${text%%[![:space:]]*}"}"
done < <(xargs -r grep -nE '(^|[^_[:alnum:]])abort[[:space:]]*\(' /dev/null <<<"$LIB" |
	grep -vE "$comment_line" |
	grep -vE '/\* layering: fail closed \*/$')

# 3. What libpsrun is built from.
lib_srcs=$("$MAKE_CMD" -s --no-print-directory print-lib-srcs) || {
	offence "Makefile: \`make print-lib-srcs\` failed"
	exit 1
}
for f in $lib_srcs; do
	case "$f" in
	cli/*) offence "Makefile: LIB_SRCS: $f: wall \"libpsrun\": cli/ must stay out of libpsrun" ;;
	esac
done
while IFS= read -r f; do
	case " $lib_srcs " in
	*" $f "*) ;;
	*) offence "Makefile: LIB_SRCS: $f: wall \"libpsrun\": left out of libpsrun (only cli/ may be)" ;;
	esac
done < <(grep -E '\.c$' <<<"$SRCS" | grep -vE '^(cli|tests|tools|examples|bench|bindings)/')

if [ "$fail" -ne 0 ]; then
	echo "check-layering: FAILED" >&2
	exit 1
fi
echo "check-layering: ok"
