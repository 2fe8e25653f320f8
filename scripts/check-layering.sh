#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scripts/check-layering.sh [MAKE]
#
# The include rule and the printing rule (docs/architecture.md), checked on
# the tree it is run in:
#   1. no file in policy/, rootfs/, netns/, common/ or runtime/cgroup/
#      includes a header of runtime/ (runtime/cgroup/ may include its own);
#      runtime/'s own files include nothing of runtime/oci/, and no library
#      file includes cli/;
#   2. only cli/ prints or exits: no printf, puts, perror, exit, and no
#      fprintf/vfprintf/fputs/fputc/fwrite to stdout or stderr, and no dprintf
#      to fd 1 or 2 in the library (the child's _exit is not exit); the one
#      exception is libpsrun.so executed as a program by hand (its entry
#      point, runtime/session/image.c), on lines marked
#      /* layering: a program's entry */;
#   3. libpsrun (the Makefile's LIB_SRCS) holds every C file but those of
#      cli/ (and tests/, tools/), and none of cli/.
# Each offence is printed as file:line: what; the exit status is 1 if there is
# any. `make check` runs it before the test tiers.
set -u
cd "$(dirname "$0")/.."
MAKE_CMD=${1:-make}
fail=0

offence() {
	echo "check-layering: $1" >&2
	fail=1
}

files() {
	git ls-files -- "$@" 2>/dev/null || find "$@" -name '*.[ch]'
}

# 1. The one-way include rule.
while IFS= read -r hit; do
	offence "$hit: a subsystem includes runtime/ (dependencies point one way)"
done < <(files 'policy/*.[ch]' 'rootfs/*.[ch]' 'netns/*.[ch]' 'common/*.[ch]' 'runtime/cgroup/*.[ch]' |
	xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]runtime/' |
	grep -vE '^runtime/cgroup/[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]runtime/cgroup/')

# ... and the spine (runtime/*.[ch]) includes nothing of runtime/oci/, and
# no library file includes cli/.
while IFS= read -r hit; do
	offence "$hit: includes a layer above it (runtime/oci/ or cli/)"
done < <({
	files 'runtime/*.[ch]' | grep -E '^runtime/[^/]+$' |
		xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]runtime/oci/'
	files 'common/*.[ch]' 'policy/*.[ch]' 'rootfs/*.[ch]' 'netns/*.[ch]' 'runtime/*.[ch]' \
		'runtime/*/*.[ch]' | xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]cli/'
})

# 2. Only cli/ prints or exits. Comments are skipped when a line starts one.
print_re='(^|[^_[:alnum:]])(printf|vprintf|puts|perror|exit)[[:space:]]*\('
print_re+='|(^|[^_[:alnum:]])(fprintf|vfprintf|fputs|fputc|fwrite|putc)[[:space:]]*\([^;]*\<(stderr|stdout)\>'
print_re+='|(^|[^_[:alnum:]])v?dprintf[[:space:]]*\([[:space:]]*(1|2|STDOUT_FILENO|STDERR_FILENO)[[:space:]]*,'
print_re+='|(^|[^_[:alnum:]])write[[:space:]]*\([[:space:]]*(STDOUT_FILENO|STDERR_FILENO)[[:space:]]*,'
while IFS= read -r hit; do
	offence "$hit: library code prints or exits (only cli/ may)"
done < <(files 'common/*.[ch]' 'policy/*.[ch]' 'rootfs/*.[ch]' 'netns/*.[ch]' 'runtime/*.[ch]' \
	'runtime/*/*.[ch]' 'include/*.h' |
	xargs -r grep -nE "$print_re" |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)' |
	grep -vE '^runtime/session/image\.c:[0-9]+:.*/\* layering: a program.s entry \*/$')

# 3. What libpsrun is built from.
lib_srcs=$("$MAKE_CMD" -s --no-print-directory print-lib-srcs) || {
	offence "Makefile: \`make print-lib-srcs\` failed"
	exit 1
}
for f in $lib_srcs; do
	case "$f" in
	cli/*) offence "Makefile: LIB_SRCS: $f: cli/ must stay out of libpsrun" ;;
	esac
done
while IFS= read -r f; do
	case " $lib_srcs " in
	*" $f "*) ;;
	*) offence "Makefile: LIB_SRCS: $f is left out of libpsrun (only cli/ may be)" ;;
	esac
done < <(files '*.c' | grep -vE '^(cli|tests|tools|examples|bench)/')

if [ "$fail" -ne 0 ]; then
	echo "check-layering: FAILED" >&2
	exit 1
fi
echo "check-layering: ok"
