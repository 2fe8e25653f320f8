# SPDX-License-Identifier: MIT
# psrun build. `make` builds build/psrun and the internal archive the tests
# link; `make check` installs what is missing, builds and runs every test;
# `make demo` runs a real script in the default sandbox.

PKGS := libseccomp libcap yaml-0.1
TEST_PKGS := criterion

CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes \
            -Wstrict-prototypes -Wno-unused-parameter -Wno-format-truncation
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -I. -Iinclude -fvisibility=hidden \
          -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
LDFLAGS += -Wl,-z,relro,-z,now

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
CFLAGS := $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS))
BUILD := build-sanitize
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null)
TEST_LIBS = $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

# libpsrun: every subsystem. The command line (cli/) prints; the library never
# does, so cli/ is linked into psrun only.
LIB_SRCS := $(wildcard common/*.c policy/*.c rootfs/*.c netns/*.c runtime/*.c runtime/oci/*.c \
                       runtime/cgroup/*.c)
CLI_SRCS := $(wildcard cli/*.c)
# The default seccomp profile, compiled at build time (tools/gen-seccomp-bpf.c).
GEN_SECCOMP := $(BUILD)/gen/seccomp-default-bpf.c
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(GEN_SECCOMP:.c=.o)
ARCHIVE := $(BUILD)/libpsrun-internal.a
SHARED := $(BUILD)/libpsrun.so
STATIC_LIB := $(BUILD)/libpsrun.a
PC := $(BUILD)/psrun.pc
PSRUN := $(BUILD)/psrun
VERSION := 0.1.0

TEST_TIERS := unit kernel integration escape oci session gvisor
TEST_BINS := $(foreach t,$(TEST_TIERS),$(if $(wildcard tests/$(t)/*.c),$(BUILD)/tests/$(t)))
HELPERS := $(patsubst tests/helper/%.c,$(BUILD)/tests/helper/%,$(wildcard tests/helper/*.c))

.PHONY: all deps tests check check-layering print-lib-srcs check-unit check-vm demo bench bench-agent clean install format format-check fuzz fuzz-build \
        soak

all: $(PSRUN) $(SHARED) $(STATIC_LIB) $(PC)

deps:
	@scripts/install-deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tools/gen-seccomp-bpf: tools/gen-seccomp-bpf.c policy/seccomp.c policy/seccomp-default.c \
		common/error.c policy/seccomp.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -o $@ $(filter %.c,$^) $(LDFLAGS) $(PKG_LIBS)

$(GEN_SECCOMP): $(BUILD)/tools/gen-seccomp-bpf
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@

$(ARCHIVE): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The public library: only psrun_* (include/psrun.h) is exported.
$(SHARED): $(LIB_OBJS) libpsrun.sym
	$(CC) -shared $(LDFLAGS) -Wl,--version-script=libpsrun.sym -Wl,-soname,libpsrun.so.0 \
		-o $@ $(LIB_OBJS) $(PKG_LIBS) -lm

# The public static library: one relocatable object in which every symbol
# but psrun_* (include/psrun.h) is made local, so a program linking it sees
# exactly what libpsrun.so exports and none of psrun's internal names. Its
# own dependencies come from psrun.pc (pkg-config --static --libs psrun).
$(STATIC_LIB): $(LIB_OBJS)
	@rm -f $@ $(BUILD)/libpsrun-public.o
	$(LD) -r -o $(BUILD)/libpsrun-public.o $^
	objcopy --localize-hidden $(BUILD)/libpsrun-public.o
	ar rcs $@ $(BUILD)/libpsrun-public.o

$(PC): psrun.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(PKGS)|' $< > $@

# psrun links its libraries statically: no dynamic loading of libraries at
# every start (~2 ms, ~60 page faults); only libc is shared. (Netlink,
# nf_tables included, is written by hand in netns/netlink.c: neither libnl
# nor libnftables, which exists only as a shared library.) STATIC=0 links
# every library dynamically.
STATIC ?= 1
STATIC_PKGS := libseccomp libcap yaml-0.1
ifeq ($(STATIC)$(SANITIZE),1)
PSRUN_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(STATIC_PKGS) 2>/dev/null) -Wl,-Bdynamic \
             -lpthread -lm
else
PSRUN_LIBS = $(shell pkg-config --libs $(STATIC_PKGS) 2>/dev/null) -lpthread -lm
endif

$(PSRUN): $(CLI_SRCS:%.c=$(BUILD)/%.o) $(ARCHIVE)
	$(CC) $(LDFLAGS) $(PSRUN_LDFLAGS) -o $@ $^ $(PSRUN_LIBS)

# One Criterion binary per tier, from every tests/<tier>/*.c.
$(BUILD)/tests/%: tests/%/*.c tests/lib/*.c tests/lib/*.h $(ARCHIVE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_CFLAGS) -Itests -o $@ $(filter %.c,$^) $(ARCHIVE) \
		$(LDFLAGS) $(PKG_LIBS) $(TEST_LIBS) -lm -lpthread

# The runc-style log writer and the MCP server's JSON reader and protocol
# layer are the CLI's (cli/ is not in libpsrun); their unit tests link them.
$(BUILD)/tests/unit: cli/oci-log.c cli/mcp-json.c cli/mcp-proto.c

# Helpers run inside the sandbox: static, so they need nothing from the root.
$(BUILD)/tests/helper/%: tests/helper/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -static -o $@ $<

# docs/api.md's example, compiled from the document itself against the
# public header only and linked three ways, each run by the session tier:
# against libpsrun.so; against libpsrun.a; and as a user would, with
# `pkg-config --cflags --libs psrun` from a staged `make install`.
API_EXAMPLE := $(BUILD)/examples/api-example
API_STAGE := $(abspath $(BUILD))/stage
$(API_EXAMPLE).c: docs/api.md
	@mkdir -p $(dir $@)
	sed -n '/^```c api-example$$/,/^```$$/p' $< | sed '1d;$$d' > $@
$(API_EXAMPLE): $(API_EXAMPLE).c include/psrun.h $(SHARED)
	ln -sf libpsrun.so $(BUILD)/libpsrun.so.0
	$(CC) -O2 -std=gnu11 -Wall -Wextra -Werror -Iinclude -o $@ $< -L$(BUILD) \
		-l:libpsrun.so -Wl,-rpath,$(abspath $(BUILD))
$(API_EXAMPLE)-static: $(API_EXAMPLE).c include/psrun.h $(STATIC_LIB)
	$(CC) -O2 -std=gnu11 -Wall -Wextra -Werror -Iinclude -o $@ $< $(STATIC_LIB) \
		$(shell pkg-config --static --libs $(PKGS) 2>/dev/null) -ldl -lpthread -lm
$(API_EXAMPLE)-pkgconfig: $(API_EXAMPLE).c $(PSRUN) $(SHARED) $(STATIC_LIB) $(PC)
	rm -rf $(API_STAGE)
	$(MAKE) --no-print-directory install DESTDIR=$(API_STAGE) PREFIX=/usr >/dev/null
	$(CC) -O2 -std=gnu11 -Wall -Wextra -Werror -o $@ $< \
		$$(PKG_CONFIG_PATH=$(API_STAGE)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(API_STAGE) \
		  pkg-config --cflags --libs psrun) -Wl,-rpath,$(API_STAGE)/usr/lib

tests: $(PSRUN) $(SHARED) $(STATIC_LIB) $(TEST_BINS) $(HELPERS) $(API_EXAMPLE) \
	$(API_EXAMPLE)-static $(API_EXAMPLE)-pkgconfig

# `make check` is the README's test command and what CI runs: every tier on
# this host, then the kernel matrix (docs/testing.md) in a cgroup v2 +
# AppArmor VM.
# (With SANITIZE=1 the VM stage is left out: it boots the normal build.)
check: deps
	@$(MAKE) --no-print-directory format-check tests
	@scripts/check-layering.sh $(MAKE)
	@scripts/run-tests.sh $(BUILD) $(if $(filter 1,$(SANITIZE)),,--vm --fuzz)

check-vm: deps
	@$(MAKE) --no-print-directory tests
	@scripts/vm-check.sh $(BUILD)

# The include and printing rules of docs/architecture.md.
check-layering:
	@scripts/check-layering.sh $(MAKE)

print-lib-srcs:
	@echo $(LIB_SRCS)

# The soak tier, long: 1,000 sequential and 1,000 8-way concurrent runs, OCI
# cycles, 200 random SIGKILLs, every named kill point, the bad-input table
# (tests/soak/soak.sh; make check runs its --short version).
soak: deps
	@$(MAKE) --no-print-directory $(PSRUN)
	@tests/soak/soak.sh $(BUILD) --long

check-unit: $(BUILD)/tests/unit
	$(BUILD)/tests/unit

demo: deps
	@$(MAKE) --no-print-directory $(PSRUN)
	@scripts/demo.sh $(PSRUN)

bench: deps
	@$(MAKE) --no-print-directory $(PSRUN)
	@bench/startup.sh $(PSRUN)

# The agent faces (MCP server, Python binding) against the session API.
bench-agent: deps
	@$(MAKE) --no-print-directory $(PSRUN) $(SHARED)
	@bench/agent.sh $(PSRUN)

# Fuzzing (libFuzzer, clang): the parsers of untrusted text. `make fuzz`
# builds them and runs each for FUZZ_SECONDS from the seed corpus; a crash,
# leak, sanitizer report or multi-line error message fails it.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_BUILD := build-fuzz
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LIB_SRCS := $(wildcard common/*.c policy/policy*.c runtime/oci/config*.c runtime/oci/state*.c) \
                 runtime/plan-names.c \
                 policy/units.c policy/suggest.c policy/seccomp.c policy/seccomp-default.c \
                 netns/dns-packet.c policy/audit.c
FUZZ_FLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -Iinclude -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined

$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_LIB_SRCS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

fuzz-build: $(FUZZ_TARGETS)

fuzz: deps $(FUZZ_TARGETS)
	@scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

install: $(PSRUN) $(SHARED) $(STATIC_LIB) $(PC)
	install -D -m 0755 $(PSRUN) $(DESTDIR)$(PREFIX)/bin/psrun
	install -D -m 0755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/libpsrun.so.0
	ln -sf libpsrun.so.0 $(DESTDIR)$(PREFIX)/lib/libpsrun.so
	install -D -m 0644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/libpsrun.a
	@# Written again: PREFIX may differ from the build's.
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(PKGS)|' \
		psrun.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/psrun.pc
	install -D -m 0644 include/psrun.h $(DESTDIR)$(PREFIX)/include/psrun.h
	install -D -m 0644 docs/man/psrun.1 $(DESTDIR)$(PREFIX)/share/man/man1/psrun.1
	install -D -m 0644 docs/man/psrun-policy.5 $(DESTDIR)$(PREFIX)/share/man/man5/psrun-policy.5

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format-check: ok"

clean:
	rm -rf build build-sanitize build-fuzz

-include $(LIB_OBJS:.o=.d) $(CLI_SRCS:%.c=$(BUILD)/%.d)
