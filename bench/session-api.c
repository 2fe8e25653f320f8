/* SPDX-License-Identifier: MIT */
/*
 * bench/session-api.c: what an embedder pays, in process, through the public
 * API only (built and run by bench/session.sh):
 *   exec    psrun_exec of `true` into a live session (N times back to back,
 *           then after 100 ms idle each: an agent's pace)
 *   spawn   posix_spawnp of the same `true` and waitpid, no sandbox: this
 *           host's floor for any exec of it, and the ratio to it
 *   create  psrun_session_create + psrun_session_destroy
 *   small   psrun_write_file of 1 KiB (an agent's usual file), back to back
 *   files   psrun_write_file then psrun_read_file of 100 MiB of binary data
 *   flood   this process's peak RSS while an exec prints 1 GiB
 */
#include <psrun.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* Prints the row and returns its median. */
static double report(const char *name, double *v, int n)
{
        qsort(v, (size_t) n, sizeof(*v), cmp);
        printf("%-24s median %7.3f ms  p90 %7.3f ms  min %7.3f ms  (n=%d)\n", name, v[n / 2],
               v[n * 9 / 10], v[0], n);
        return v[n / 2];
}

/* One psrun_exec of argv, timed; idle_ms of sleep before it. */
static int timed_exec(psrun_session *s, char **argv, int idle_ms, double *ms)
{
        if (idle_ms)
                usleep((useconds_t) idle_ms * 1000);
        psrun_error err = {0};
        psrun_exec_result res;
        double t0 = now_ms();
        if (psrun_exec(s, argv, NULL, &res, &err) < 0 || res.result.exit_code) {
                fprintf(stderr, "exec: %s %s\n", err.msg, res.result.error);
                return -1;
        }
        *ms = now_ms() - t0;
        psrun_exec_result_free(&res);
        return 0;
}

int main(int argc, char **argv)
{
        int runs = argc > 1 ? atoi(argv[1]) : 200;
        if (runs < 10)
                runs = 10;
        psrun_error err = {0};
        psrun_policy *p = psrun_policy_new();
        psrun_session *s;
        if (psrun_session_create(p, NULL, &s, &err) < 0) {
                fprintf(stderr, "create: %s\n", err.msg);
                return 1;
        }
        int idle_runs = runs / 10 > 20 ? runs / 10 : 20;
        double *v = calloc((size_t) (runs > idle_runs ? runs : idle_runs), sizeof(double));
        char *argv_true[] = {"true", NULL};
        for (int i = 0; i < runs + 10; i++) {
                double ms;
                if (timed_exec(s, argv_true, 0, &ms) < 0)
                        return 1;
                if (i >= 10)
                        v[i - 10] = ms;
        }
        double exec_median = report("exec true (API)", v, runs);
        for (int i = 0; i < idle_runs; i++)
                if (timed_exec(s, argv_true, 100, &v[i]) < 0)
                        return 1;
        report("exec true, 100 ms idle", v, idle_runs);
        for (int i = 0; i < runs + 10; i++) {
                pid_t pid;
                int status;
                double t0 = now_ms();
                if (posix_spawnp(&pid, "true", NULL, NULL, argv_true, environ) != 0 ||
                    waitpid(pid, &status, 0) != pid || status != 0) {
                        fprintf(stderr, "spawn: true failed\n");
                        return 1;
                }
                if (i >= 10)
                        v[i - 10] = now_ms() - t0;
        }
        double spawn_median = report("spawn true (no sandbox)", v, runs);
        printf("%-24s %.2fx the spawn with no sandbox (medians)\n", "exec true (API)",
               exec_median / spawn_median);

        char small[1024];
        memset(small, 'x', sizeof(small));
        for (int i = 0; i < runs + 10; i++) {
                double t0 = now_ms();
                if (psrun_write_file(s, "small", small, sizeof(small), 0644, &err) < 0) {
                        fprintf(stderr, "write: %s\n", err.msg);
                        return 1;
                }
                if (i >= 10)
                        v[i - 10] = now_ms() - t0;
        }
        report("write_file 1 KiB", v, runs);

        size_t size = 100U << 20;
        char *big = malloc(size);
        for (size_t i = 0; i < size; i++)
                big[i] = (char) (i * 2654435761U >> 13);
        /* Each round writes the file anew and reads it back into a fresh
         * buffer, as an embedder would; the check of the bytes read is
         * outside the timing. */
        enum { FILE_ROUNDS = 7 };
        double wr[FILE_ROUNDS], rd[FILE_ROUNDS];
        for (int i = 0; i < FILE_ROUNDS; i++) {
                double t0 = now_ms();
                if (psrun_write_file(s, "big", big, size, 0644, &err) < 0) {
                        fprintf(stderr, "write: %s\n", err.msg);
                        return 1;
                }
                double t1 = now_ms();
                psrun_file_data d;
                if (psrun_read_file(s, "big", 0, size, &d, &err) < 0) {
                        fprintf(stderr, "read: %s\n", err.msg);
                        return 1;
                }
                double t2 = now_ms();
                if (d.len != size || memcmp(d.data, big, size) != 0) {
                        fprintf(stderr, "read: the bytes read back differ\n");
                        return 1;
                }
                free(d.data);
                wr[i] = t1 - t0;
                rd[i] = t2 - t1;
        }
        qsort(wr, FILE_ROUNDS, sizeof(*wr), cmp);
        qsort(rd, FILE_ROUNDS, sizeof(*rd), cmp);
        printf("%-24s write median %4.0f ms (%.2f GB/s)  read median %4.0f ms (%.2f GB/s)  "
               "(n=%d)\n",
               "100 MiB file", wr[FILE_ROUNDS / 2], size / wr[FILE_ROUNDS / 2] / 1e6,
               rd[FILE_ROUNDS / 2], size / rd[FILE_ROUNDS / 2] / 1e6, FILE_ROUNDS);
        free(big);

        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        psrun_exec_result res;
        double t0 = now_ms();
        psrun_exec_shell(s, "head -c 1073741824 /dev/zero", NULL, &res, &err);
        getrusage(RUSAGE_SELF, &after);
        printf("%-24s %.0f ms, %llu bytes, peak RSS %ld KiB (grew %ld KiB)\n", "1 GiB of output",
               now_ms() - t0, (unsigned long long) res.stdout_bytes, after.ru_maxrss,
               after.ru_maxrss - before.ru_maxrss);
        psrun_exec_result_free(&res);
        psrun_session_destroy(s, NULL);

        int n = runs / 10 > 10 ? runs / 10 : 10;
        for (int i = 0; i < n; i++) {
                t0 = now_ms();
                if (psrun_session_create(p, NULL, &s, &err) < 0 ||
                    psrun_session_destroy(s, &err) < 0) {
                        fprintf(stderr, "create/destroy: %s\n", err.msg);
                        return 1;
                }
                v[i] = now_ms() - t0;
        }
        report("create + destroy (API)", v, n);
        psrun_policy_free(p);
        free(v);
        return 0;
}
