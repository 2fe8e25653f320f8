/* SPDX-License-Identifier: MIT */
/*
 * A session supervisor's own image (runtime/session/image.h).
 *
 * A fork of the embedding program that never execs would keep its whole
 * address space for the session's life: a Python agent's tens of MB, a C
 * program's heap with whatever secrets are in it; every exec's clone in it
 * would copy those page tables; and a session-wide OOM could pick it. So
 * the supervisor is the file that holds psrun's code, executed afresh:
 *
 *  - libpsrun.so (Python, C programs linking it): the library has a
 *    program interpreter and an entry point (psrun_image_entry; the .interp
 *    section is linked into the .so alone), so the kernel runs it as a
 *    program. ld.so does not run a main program's constructors itself
 *    (__libc_start_main does, which this entry has none of), so the entry
 *    point is where it starts.
 *  - an executable with libpsrun.a in it (the psrun binary, the test
 *    tiers, static embedders): it is executed again, and a constructor
 *    that runs before every other one of the program's takes over before
 *    main, as runc's nsexec does in runc's own binary.
 *
 * The file is the one mapped in this process (/proc/self/map_files, or
 * its path checked against the mapping's device and inode): no path
 * lookup, no $PSRUN_BINARY, no version skew. It is executed as it is when
 * only root can change it, and from a sealed memfd copy otherwise (not
 * root's, writable by others, not executable, on a noexec mount).
 *
 * Either way the new process starts only when it finds the marker in its
 * environment, a ready socket made by root at fd 3, and no AT_SECURE (a
 * setuid program linking libpsrun is never steered by its environment);
 * it then reads its policy (as the JSON psrun policy prints) and the rest
 * of its spec from fd 4 and never returns to the program it is part of.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fault.h"
#include "common/fileio.h"
#include "common/memfd.h"
#include "common/signals.h"
#include "runtime/session/image.h"
#include "runtime/session/supervisor.h"

extern char **environ;

#define SPEC_MAX (64U << 20)

/* ---- the file with our code ---- */

struct image {
        int fd;
        char path[PATH_MAX];
        bool copied; /* fd is a sealed memfd copy of path */
};

/* The line of /proc/self/maps whose range holds addr. */
static int find_mapping(uintptr_t addr, char *range, size_t range_size, dev_t *dev, ino_t *ino,
                        char *path, size_t path_size)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return -errno;
        char line[PATH_MAX + 160];
        while (fgets(line, sizeof(line), f)) {
                unsigned long start, end, off, inode;
                unsigned maj, min;
                int n = 0;
                if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu %n", &start, &end, &off, &maj, &min,
                           &inode, &n) < 6 ||
                    addr < start || addr >= end)
                        continue;
                if (inode == 0 || n == 0)
                        return -ENOENT;
                snprintf(range, range_size, "%lx-%lx", start, end);
                *dev = makedev(maj, min);
                *ino = (ino_t) inode;
                snprintf(path, path_size, "%s", line + n);
                path[strcspn(path, "\n")] = '\0';
                return 0;
        }
        return -ENOENT;
}

static bool same_file(int fd, dev_t dev, ino_t ino)
{
        struct stat st;
        return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Whether the file may run as root as it is: only root can change it. */
static bool safe_as_is(int fd)
{
        struct stat st;
        struct statvfs sv;
        if (memfd_is_sealed(fd))
                return true;
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
               !(st.st_mode & 0022) && (st.st_mode & 0100) && fstatvfs(fd, &sv) == 0 &&
               !(sv.f_flag & ST_NOEXEC);
}

/* Whether the file can start a supervisor: the executable this process
 * runs (the constructor takes over), or libpsrun.so with its entry. */
static bool image_can_start(int fd)
{
        _cleanup_close_ int exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
        struct stat a, b;
        if (exe >= 0 && fstat(exe, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
                return true;
        Dl_info di;
        if (!dladdr((void *) psrun_image_entry, &di) || !di.dli_fbase)
                return false;
        const ElfW(Ehdr) *eh = di.dli_fbase;
        return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_type == ET_DYN &&
               (uintptr_t) di.dli_fbase + eh->e_entry == (uintptr_t) psrun_image_entry;
}

static int image_open(struct image *img, psrun_error *err)
{
        char range[64];
        dev_t dev = 0;
        ino_t ino = 0;
        int r = find_mapping((uintptr_t) sup_image_spawn, range, sizeof(range), &dev, &ino,
                             img->path, sizeof(img->path));
        if (r < 0)
                return psrun_error_errno(err, r, "session: find the file with psrun's code");
        /* The very file mapped here, even if its path now names another
         * one (an upgrade) or none; else by path, if it is still that file. */
        char map_file[96];
        snprintf(map_file, sizeof(map_file), "/proc/self/map_files/%s", range);
        _cleanup_close_ int fd = open(map_file, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || !same_file(fd, dev, ino)) {
                safe_close(fd);
                fd = open(img->path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || !same_file(fd, dev, ino))
                        return psrun_error_set(err, ESTALE,
                                               "session: %s, which psrun's code was loaded "
                                               "from, is gone or was replaced",
                                               img->path);
        }
        if (!image_can_start(fd))
                return psrun_error_set(err, EOPNOTSUPP,
                                       "session: psrun's code is in %s, which cannot run as the "
                                       "session's supervisor (link libpsrun.so, or libpsrun.a "
                                       "into the executable)",
                                       img->path);
        img->copied = !safe_as_is(fd);
        if (img->copied) {
                int copy = memfd_sealed_copy(fd, SUP_ARGV0);
                if (copy < 0)
                        return psrun_error_errno(err, copy, "session: a sealed copy of %s",
                                                 img->path);
                safe_close(fd);
                fd = copy;
        }
        img->fd = TAKE_FD(fd);
        return 0;
}

/* ---- what the supervisor gets ---- */

static bool env_is(const char *entry, const char *name)
{
        size_t n = strlen(name);
        return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/*
 * Not the caller's environment (its API keys and tokens): what the
 * supervisor's own code reads (PATH for runsc, PSRUN_* settings), what
 * the dynamic loader needs to load the image as the caller loaded it, and
 * the variables the policy's env takes from the caller by name.
 */
static char **supervisor_env(const struct policy *pol)
{
        static const char *const keep[] = {"PATH", "LD_LIBRARY_PATH", "LD_PRELOAD"};
        size_t n = 0;
        while (environ && environ[n])
                n++;
        char **env = calloc(n + 2, sizeof(char *));
        if (!env)
                return NULL;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const char *e = environ[i];
                bool wanted = strncmp(e, "PSRUN_", 6) == 0 && !env_is(e, SUP_ENV_MARKER);
                for (size_t j = 0; !wanted && j < ARRAY_SIZE(keep); j++)
                        wanted = env_is(e, keep[j]);
                for (size_t j = 0; !wanted && j < pol->n_env; j++)
                        wanted = !pol->env[j].value && env_is(e, pol->env[j].name);
                if (wanted)
                        env[k++] = (char *) e;
        }
        env[k] = (char *) SUP_ENV_MARKER "=1";
        return env;
}

static int write_spec(const struct policy *pol, const char *dir, const char *cgroup_parent,
                      bool tie, psrun_error *err)
{
        _cleanup_free_ char *json = NULL;
        size_t json_len = 0;
        FILE *f = open_memstream(&json, &json_len);
        if (!f)
                return psrun_error_errno(err, errno, "session: the policy for the supervisor");
        int r = policy_write_json(pol, f);
        if (fclose(f) != 0 || r < 0)
                return psrun_error_errno(err, ENOMEM, "session: the policy for the supervisor");
        _cleanup_close_ int fd =
                memfd_create("psrun-session-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return psrun_error_errno(err, errno, "session: memfd for the supervisor");
        const char *cg = cgroup_parent ? cgroup_parent : "";
        struct sup_spec spec = {
                .policy_len = (uint32_t) json_len,
                .dir_len = (uint32_t) strlen(dir),
                .cgroup_parent_len = (uint32_t) strlen(cg),
                .flags = tie ? SUP_SPEC_TIE : 0,
        };
        session_hdr_init(&spec.h, sizeof(spec));
        r = write_all(fd, (const char *) &spec, sizeof(spec));
        if (r >= 0)
                r = write_all(fd, json, json_len + 1);
        if (r >= 0)
                r = write_all(fd, dir, strlen(dir) + 1);
        if (r >= 0)
                r = write_all(fd, cg, strlen(cg) + 1);
        if (r >= 0 && fcntl(fd, F_ADD_SEALS, MEMFD_SEALS_NEEDED) < 0)
                r = -errno;
        if (r < 0)
                return psrun_error_errno(err, r, "session: write the supervisor's spec");
        return TAKE_FD(fd);
}

/* ---- the spawn: shared memory until the exec ---- */

struct spawn {
        int image_fd, ready_fd, spec_fd, tie_fd, null_fd;
        char *const *argv, *const *envp;
        char *stack;
        size_t stack_size;
        int clone_errno; /* the grandchild's clone failed; written by the intermediate */
};

/* Report a failed exec as the supervisor would report a failed start:
 * r alone, no text (no snprintf here); the spawner words it. */
static _Noreturn void grandchild_fail(int r)
{
        struct sup_ready ready = {.r = r};
        ready.err.code = -r;
        session_hdr_init(&ready.h, sizeof(ready));
        (void) send(SUP_FD_READY, &ready, sizeof(ready), MSG_NOSIGNAL);
        _exit(127);
}

/*
 * The supervisor-to-be, in the caller's memory until execveat (CLONE_VM |
 * CLONE_VFORK): only system calls here, as in runtime/child.c — no malloc,
 * no stdio, no locks, nothing written but the stack and errno. Signals
 * are blocked (by the caller) until the handlers are the defaults.
 */
static int grandchild_main(void *arg)
{
        struct spawn *sp = arg;
        signals_reset_dispositions();
        (void) setsid();
        /* Above every target first, so that no move overwrites a source. */
        int from[5] = {sp->ready_fd, sp->spec_fd, sp->tie_fd, sp->null_fd, sp->image_fd};
        for (size_t i = 0; i < ARRAY_SIZE(from); i++)
                if (from[i] >= 0 && (from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 16)) < 0)
                        _exit(127);
        for (int fd = 0; fd < 3; fd++)
                (void) dup3(from[3], fd, 0);
        if (dup3(from[0], SUP_FD_READY, 0) < 0)
                _exit(127);
        if (dup3(from[1], SUP_FD_SPEC, 0) < 0)
                grandchild_fail(-errno);
        if (from[2] >= 0 && dup3(from[2], SUP_FD_TIE, 0) < 0)
                grandchild_fail(-errno);
        if (from[2] < 0)
                (void) close(SUP_FD_TIE);
        /* Nothing else of the caller's: its pipes, sockets and files stay
         * its own. The image's fd goes with the exec (close-on-exec). */
        if (dup3(from[4], SUP_FD_TIE + 1, O_CLOEXEC) < 0 ||
            syscall(SYS_close_range, SUP_FD_TIE + 2, ~0U, 0) < 0)
                grandchild_fail(-errno);
        sigset_t none;
        sigemptyset(&none);
        (void) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8);
        syscall(SYS_execveat, SUP_FD_TIE + 1, "", sp->argv, sp->envp, AT_EMPTY_PATH);
        grandchild_fail(-errno);
}

/* Makes the supervisor and exits once it has executed (CLONE_VFORK): the
 * supervisor is nobody's child in the caller's tree, so the caller has
 * no zombie to reap later and the session outlives it. */
static int intermediate_main(void *arg)
{
        struct spawn *sp = arg;
#if defined(__SANITIZE_ADDRESS__)
        pid_t pid = fork();
        if (pid == 0)
                grandchild_main(sp);
#else
        pid_t pid = clone(grandchild_main, sp->stack + sp->stack_size / 2,
                          CLONE_VM | CLONE_VFORK | SIGCHLD, sp);
#endif
        if (pid < 0)
                sp->clone_errno = errno;
        _exit(pid < 0 ? 1 : 0);
}

static int spawn(struct spawn *sp, psrun_error *err)
{
        sp->stack_size = 2 * 64 * 1024;
        sp->stack = mmap(NULL, sp->stack_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (sp->stack == MAP_FAILED)
                return psrun_error_errno(err, errno, "session: a stack for the supervisor's start");
        /* Every signal blocked, glibc's own too (the raw call): no handler of
         * the caller's may run in a process that shares its memory. */
        sigset_t all, old;
        sigfillset(&all);
        (void) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
#if defined(__SANITIZE_ADDRESS__)
        /* ASan cannot follow a switch to another stack in its own memory
         * (runtime/child.c does the same): plain forks in sanitizer builds. */
        pid_t pid = fork();
        if (pid == 0)
                intermediate_main(sp);
#else
        pid_t pid = clone(intermediate_main, sp->stack + sp->stack_size,
                          CLONE_VM | CLONE_VFORK | SIGCHLD, sp);
#endif
        int clone_errno = errno;
        (void) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
        int status = 0;
        if (pid > 0)
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
        munmap(sp->stack, sp->stack_size);
        if (pid < 0)
                return psrun_error_errno(err, clone_errno, "session: start the supervisor");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return psrun_error_errno(err, sp->clone_errno ? sp->clone_errno : EAGAIN,
                                         "session: start the supervisor");
        return 0;
}

int sup_image_spawn(const struct policy *pol, const char *dir, const char *cgroup_parent,
                    int ready_fd, int tie_fd, char *image, size_t image_size, psrun_error *err)
{
        struct image img = {.fd = -1};
        int r = image_open(&img, err);
        snprintf(image, image_size, "%s%s", img.path, img.copied ? " (a sealed copy)" : "");
        if (r < 0)
                return r;
        _cleanup_close_ int image_fd = img.fd;
        _cleanup_close_ int spec_fd = write_spec(pol, dir, cgroup_parent, tie_fd >= 0, err);
        if (spec_fd < 0)
                return spec_fd;
        _cleanup_close_ int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd < 0)
                return psrun_error_errno(err, errno, "session: open /dev/null");
        _cleanup_free_ char **envp = supervisor_env(pol);
        if (!envp)
                return psrun_error_errno(err, ENOMEM, "session");
        char *argv[] = {(char *) SUP_ARGV0, (char *) dir, NULL};
        struct spawn sp = {
                .image_fd = image_fd,
                .ready_fd = ready_fd,
                .spec_fd = spec_fd,
                .tie_fd = tie_fd,
                .null_fd = null_fd,
                .argv = argv,
                .envp = envp,
        };
        return spawn(&sp, err);
}

/* ---- the image's side: a supervisor starting ---- */

static _Noreturn void image_fail(int r, const psrun_error *e)
{
        struct sup_ready ready = {.r = r, .err = *e};
        session_hdr_init(&ready.h, sizeof(ready));
        (void) send(SUP_FD_READY, &ready, sizeof(ready), MSG_NOSIGNAL);
        _exit(125);
}

static int read_spec(char **buf, size_t *len, psrun_error *err)
{
        struct stat st;
        if (fstat(SUP_FD_SPEC, &st) < 0 || st.st_size < (off_t) sizeof(struct sup_spec) ||
            (uint64_t) st.st_size > SPEC_MAX)
                return psrun_error_set(err, EPROTO, "session: the supervisor's spec is missing");
        char *p = malloc((size_t) st.st_size + 1);
        if (!p)
                return psrun_error_errno(err, ENOMEM, "session");
        ssize_t n = pread(SUP_FD_SPEC, p, (size_t) st.st_size, 0);
        if (n != (ssize_t) st.st_size) {
                free(p);
                return psrun_error_set(err, EPROTO, "session: the supervisor's spec is short");
        }
        p[n] = '\0';
        *buf = p;
        *len = (size_t) n;
        return 0;
}

/* Everything after the header: three NUL-terminated strings, exactly. */
static int split_spec(char *buf, size_t len, struct sup_spec *spec, char **json, char **dir,
                      char **cgroup_parent, psrun_error *err)
{
        int r = session_check_hdr(buf, sizeof(*spec), sizeof(*spec), false, err);
        if (r < 0)
                return r;
        memcpy(spec, buf, sizeof(*spec));
        uint64_t want = (uint64_t) sizeof(*spec) + spec->policy_len + 1 + spec->dir_len + 1 +
                        spec->cgroup_parent_len + 1;
        char *p = buf + sizeof(*spec);
        if (want != len || p[spec->policy_len] != '\0' ||
            p[spec->policy_len + 1 + spec->dir_len] != '\0' || buf[len - 1] != '\0')
                return psrun_error_set(err, EPROTO, "session: a malformed supervisor spec");
        *json = p;
        *dir = p + spec->policy_len + 1;
        *cgroup_parent = spec->cgroup_parent_len ? *dir + spec->dir_len + 1 : NULL;
        return 0;
}

static void image_run(void)
{
        const char *marker = getenv(SUP_ENV_MARKER);
        if (!marker || strcmp(marker, "1") != 0 || getauxval(AT_SECURE))
                return;
        /* From here on this process was started as a supervisor: it never
         * goes on to the program's own code. The socket must be one our
         * own user (or root) made (its peer's credentials are its
         * creator's). */
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        int type = 0;
        socklen_t tl = sizeof(type);
        if (getsockopt(SUP_FD_READY, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
            (cred.uid != 0 && cred.uid != geteuid()) ||
            getsockopt(SUP_FD_READY, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
                _exit(125);
        (void) unsetenv(SUP_ENV_MARKER);
        psrun_error err = {0};
        char *buf = NULL, *json = NULL, *dir = NULL, *cgroup_parent = NULL;
        size_t len = 0;
        struct sup_spec spec;
        int r = read_spec(&buf, &len, &err);
        if (r >= 0)
                r = split_spec(buf, len, &spec, &json, &dir, &cgroup_parent, &err);
        if (r < 0)
                image_fail(r, &err);
        (void) close(SUP_FD_SPEC);
        fault_point("session:image");
        /* Read back exactly as written: a failure here is psrun's own. */
        static struct policy pol;
        r = policy_init(&pol);
        if (r >= 0)
                r = policy_load_buffer(&pol, "the session's policy", json, spec.policy_len, &err);
        if (r >= 0)
                r = policy_validate(&pol, &err);
        if (r < 0) {
                psrun_error_prefix(&err, "session: the policy as the supervisor read it back");
                image_fail(r, &err);
        }
        sup_main(&pol, dir, SUP_FD_READY, (spec.flags & SUP_SPEC_TIE) ? SUP_FD_TIE : -1,
                 cgroup_parent);
}

/* An executable with libpsrun.a in it, executed again: before every
 * constructor of the program's own (101: the first priority programs may
 * use), and before main. */
__attribute__((constructor(101))) static void image_constructor(int argc, char **argv, char **envp)
{
        (void) envp;
        if (argc >= 1 && argv && argv[0] && strcmp(argv[0], SUP_ARGV0) == 0)
                image_run();
}

/* libpsrun.so, executed: the kernel's entry, with the stack as the kernel
 * left it (16-byte aligned, no return address: realigned on x86). */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
_Noreturn void
psrun_image_entry(void)
{
        image_run();
        static const char msg[] = "libpsrun.so is a library (include/psrun.h, docs/api.md); "
                                  "sessions execute it as their supervisor\n";
        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1); /* layering: a program's entry */
        _exit(125);
}
