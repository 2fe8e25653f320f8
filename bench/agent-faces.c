/* SPDX-License-Identifier: MIT */
/*
 * bench/agent-faces.c: what the agent faces add to one exec of `true`, side
 * by side in one interleaved run (built and run by bench/agent.sh):
 *
 *   api       psrun_exec of /bin/sh -c true into a live session, in process
 *   mcp-2025  sandbox_exec {"command":"true"} through a `psrun mcp` child
 *             over its stdio, in the handshake era: one JSON-RPC line
 *             written, one read (a raw driver: this process)
 *   mcp-2026  the same in the stateless 2026-07-28 era (per-request _meta)
 *   python    sb.exec("true") of the Python binding, timed inside a Python
 *             worker (bench/agent-py-worker.py) that this process drives,
 *             into a Sandbox() the worker made
 *   py-shared the same into a session this process made, opened by id: the
 *             binding's own cost, without what its session costs (see
 *             docs/benchmarks.md)
 *
 * Each round runs every row once, in a rotating order, GAP_MS apart. Each
 * row has a session of its own with the default policy (two psrun mcp
 * children for the two eras), so that no exec lands on a supervisor still
 * busy with the one before (it removes the exec's cgroup after answering),
 * and /bin/sh -c true is what each execs (sandbox_exec and sb.exec of a
 * string run the command with /bin/sh -c). Prints per row the median, p90
 * and min, the median minus api's, and the median of the per-round
 * differences to api.
 *
 * Then, apart, the floor of the MCP path: a `ping` round trip through the
 * 2025 server (no sandbox involved), what any request costs there; and
 * an agent's parallel tool calls: 8 sandbox_exec {"command":"sleep 1"}
 * written at once to a `psrun mcp --max-execs 8` child, timed until the
 * last of the 8 answers (target: 1200 ms, median of 5 rounds).
 *
 * Usage: agent-faces PSRUN RUNS GAP_MS [PYTHON3 WORKER]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <psrun.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { ROW_API, ROW_MCP_2025, ROW_MCP_2026, ROW_PYTHON, ROW_PY_SHARED, N_ROWS };
static const char *const row_names[N_ROWS] = {"api", "mcp-2025", "mcp-2026", "python", "py-shared"};
static const char *const py_requests[N_ROWS] = {
        [ROW_PYTHON] = "exec\n", [ROW_PY_SHARED] = "exec-shared\n"};

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *why)
{
        fprintf(stderr, "agent-faces: %s: %s\n", what, why);
        exit(1);
}

/* A child with its stdin and stdout on pipes. */
struct child {
        pid_t pid;
        FILE *in;  /* its stdin */
        FILE *out; /* its stdout */
};

static void spawn_child(struct child *c, char *const argv[])
{
        int to[2], from[2];
        if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
                die("pipe", strerror(errno));
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, to[0], 0);
        posix_spawn_file_actions_adddup2(&fa, from[1], 1);
        int r = posix_spawnp(&c->pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                die(argv[0], strerror(r));
        close(to[0]);
        close(from[1]);
        c->in = fdopen(to[1], "w");
        c->out = fdopen(from[0], "r");
        if (!c->in || !c->out)
                die("fdopen", strerror(errno));
}

static void end_child(struct child *c)
{
        fclose(c->in); /* EOF: psrun mcp destroys its sessions and exits */
        int status;
        waitpid(c->pid, &status, 0);
        fclose(c->out);
}

/* One line from a child (without its newline), into *buf. */
static void read_line(struct child *c, char **buf, size_t *cap, const char *what)
{
        ssize_t n = getline(buf, cap, c->out);
        if (n <= 0)
                die(what, "the child closed its stdout");
}

static const char call_2025[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"sandbox_exec\","
                                "\"arguments\":{\"command\":\"true\"}}}\n";
static const char call_sleep[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                                 "\"params\":{\"name\":\"sandbox_exec\","
                                 "\"arguments\":{\"command\":\"sleep 1\"}}}\n";
static const char call_2026[] =
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
        "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"true\"},"
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"bench\",\"version\":\"1\"},"
        "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n";

/* One sandbox_exec round trip; checks the answer is a success. */
static double mcp_call(struct child *mcp, const char *fmt, int id, char **buf, size_t *cap)
{
        double t0 = now_ms();
        fprintf(mcp->in, fmt, id);
        fflush(mcp->in);
        read_line(mcp, buf, cap, "psrun mcp");
        double t = now_ms() - t0;
        char want[32];
        snprintf(want, sizeof(want), "\"id\":%d,", id);
        if (!strstr(*buf, want) || !strstr(*buf, "\"isError\":false"))
                die("psrun mcp answered", *buf);
        return t;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t) n, sizeof(*v), cmp);
        return v[n / 2];
}

int main(int argc, char **argv)
{
        if (argc != 4 && argc != 6) {
                fprintf(stderr, "usage: agent-faces PSRUN RUNS GAP_MS [PYTHON3 WORKER]\n");
                return 2;
        }
        int runs = atoi(argv[2]);
        if (runs < 10)
                runs = 10;
        long gap_ms = atol(argv[3]);
        struct timespec gap = {gap_ms / 1000, gap_ms % 1000 * 1000000};
        bool have_python = argc == 6;
        int warmup = 10;
        signal(SIGPIPE, SIG_IGN);

        psrun_error err = {0};
        psrun_policy *p = psrun_policy_new();
        psrun_session *s, *s_py;
        if (psrun_session_create(p, NULL, &s, &err) < 0 ||
            psrun_session_create(p, NULL, &s_py, &err) < 0)
                die("session create", err.msg);

        struct child mcp25, mcp26, py = {0};
        char *mcp_argv[] = {argv[1], "mcp", NULL};
        spawn_child(&mcp25, mcp_argv);
        spawn_child(&mcp26, mcp_argv);
        char *buf = NULL;
        size_t cap = 0;
        /* The handshake a 2025 client does first; the stateless era needs none. */
        fputs("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
              "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
              "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
              mcp25.in);
        fflush(mcp25.in);
        read_line(&mcp25, &buf, &cap, "psrun mcp");
        if (have_python) {
                char *py_argv[] = {argv[4], argv[5], (char *) psrun_session_id(s_py), NULL};
                spawn_child(&py, py_argv);
                read_line(&py, &buf, &cap, "python worker"); /* "ready" */
        }

        int n_rows = have_python ? N_ROWS : ROW_PYTHON;
        double *v[N_ROWS];
        for (int r = 0; r < N_ROWS; r++)
                v[r] = calloc((size_t) runs, sizeof(double));
        char *argv_true[] = {"/bin/sh", "-c", "true", NULL};
        int id = 1;
        for (int i = 0; i < runs + warmup; i++) {
                for (int k = 0; k < n_rows; k++) {
                        int row = (i + k) % n_rows; /* rotate: no row always follows another */
                        double t = 0;
                        nanosleep(&gap, NULL);
                        switch (row) {
                        case ROW_API: {
                                psrun_exec_result res;
                                double t0 = now_ms();
                                if (psrun_exec(s, argv_true, NULL, &res, &err) < 0)
                                        die("psrun_exec", err.msg);
                                t = now_ms() - t0;
                                if (res.result.exit_code != 0)
                                        die("psrun_exec", "true did not exit 0");
                                psrun_exec_result_free(&res);
                                break;
                        }
                        case ROW_MCP_2025:
                                t = mcp_call(&mcp25, call_2025, id++, &buf, &cap);
                                break;
                        case ROW_MCP_2026:
                                t = mcp_call(&mcp26, call_2026, id++, &buf, &cap);
                                break;
                        case ROW_PYTHON:
                        case ROW_PY_SHARED:
                                fputs(py_requests[row], py.in);
                                fflush(py.in);
                                read_line(&py, &buf, &cap, "python worker");
                                t = strtod(buf, NULL); /* its own timing of sb.exec, ms */
                                if (!(t > 0))
                                        die("python worker", buf);
                                break;
                        }
                        if (i >= warmup)
                                v[row][i - warmup] = t;
                }
        }

        /* Per-round differences to api, before sorting. */
        double *d[N_ROWS];
        for (int r = 1; r < n_rows; r++) {
                d[r] = calloc((size_t) runs, sizeof(double));
                for (int i = 0; i < runs; i++)
                        d[r][i] = v[r][i] - v[ROW_API][i];
        }
        printf("%-9s %10s %10s %10s %12s %12s %7s\n", "row", "median ms", "p90 ms", "min ms",
               "+median ms", "+paired ms", "ratio");
        double api_median = median(v[ROW_API], runs);
        for (int r = 0; r < n_rows; r++) {
                double m = median(v[r], runs);
                printf("%-9s %10.3f %10.3f %10.3f", row_names[r], m, v[r][runs * 9 / 10], v[r][0]);
                if (r == ROW_API)
                        printf(" %12s %12s %7s\n", "-", "-", "-");
                else
                        printf(" %+12.3f %+12.3f %7.2f\n", m - api_median, median(d[r], runs),
                               m / api_median);
        }
        printf("(n=%d per row; target: each face within +0.500 ms of api, median)\n", runs);

        double *ping = v[ROW_API];
        for (int i = 0; i < runs; i++) {
                double t0 = now_ms();
                fprintf(mcp25.in, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", id++);
                fflush(mcp25.in);
                read_line(&mcp25, &buf, &cap, "psrun mcp");
                ping[i] = now_ms() - t0;
        }
        double pm = median(ping, runs);
        printf("mcp ping round trip (no sandbox): median %.3f ms, p90 %.3f ms, min %.3f ms\n", pm,
               ping[runs * 9 / 10], ping[0]);

        /* 8 parallel calls into one sandbox (max-execs 8), all answered. */
        struct child par;
        char *par_argv[] = {argv[1], "mcp", "--max-execs", "8", NULL};
        spawn_child(&par, par_argv);
        fprintf(par.in, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n");
        fflush(par.in);
        read_line(&par, &buf, &cap, "psrun mcp");
        double rounds[5];
        for (int i = 0; i < 5; i++) {
                double t0 = now_ms();
                for (int k = 0; k < 8; k++)
                        fprintf(par.in, call_sleep, id++);
                fflush(par.in);
                for (int k = 0; k < 8; k++) {
                        read_line(&par, &buf, &cap, "psrun mcp");
                        if (!strstr(buf, "\"isError\":false"))
                                die("psrun mcp answered", buf);
                }
                rounds[i] = now_ms() - t0;
        }
        double pr = median(rounds, 5);
        printf("mcp 8 parallel sandbox_exec of sleep 1 (--max-execs 8): median %.0f ms, max "
               "%.0f ms (target <= 1200 ms)\n",
               pr, rounds[4]);
        end_child(&par);

        if (have_python)
                end_child(&py);
        end_child(&mcp25);
        end_child(&mcp26);
        psrun_session_destroy(s, NULL);
        psrun_session_destroy(s_py, NULL);
        psrun_policy_free(p);
        free(buf);
        return 0;
}
