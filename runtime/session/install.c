/* SPDX-License-Identifier: MIT */
/*
 * psrun_install_package, the client's half (the supervisor's is
 * start_install in runtime/session/supervisor.c): check the spec, see
 * whether the session could serve it at all, ask the approver when the
 * policy gates installs, then run the installer as an exec (its handle is
 * an exec's: psrun_exec_cancel kills it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "runtime/session/package.h"
#include "runtime/session/session.h"

static void failed(psrun_exec_result *res, const psrun_error *err)
{
        if (!res)
                return;
        memset(res, 0, sizeof(*res));
        res->result.exit_code = 125;
        res->result.reason = "setup_error";
        snprintf(res->result.error, sizeof(res->result.error), "%s", err ? err->msg : "");
}

/* The action as the approver sees it: exactly what will be fetched (the
 * package from that index) and the installer's command line. */
static char *action_json(const char *id, enum install_tool tool, const char *spec,
                         const struct install_index *idx)
{
        _cleanup_strv_free_ char **argv = NULL;
        psrun_error ignored = {0};
        if (install_argv(idx, tool, spec, &argv, &ignored) < 0)
                return NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fputs("{\"action\": \"install\", \"session\": ", f);
        json_write_string(f, id);
        fputs(", \"tool\": ", f);
        json_write_string(f, install_tool_to_string(tool));
        fputs(", \"package\": ", f);
        json_write_string(f, spec);
        fputs(", \"index\": ", f);
        json_write_string(f, install_index_url(idx, tool));
        fputs(", \"command\": [", f);
        for (size_t i = 0; argv[i]; i++) {
                if (i)
                        fputs(", ", f);
                json_write_string(f, argv[i]);
        }
        fputs("]}", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* 0 when approved; -EPERM naming who refused what. */
static int ask(psrun_session *s, enum install_tool tool_id, const char *spec,
               const struct install_index *idx, psrun_error *err)
{
        const char *tool = install_tool_to_string(tool_id);
        void *userdata = NULL;
        session_approve_fn approve = session_approver(s, &userdata);
        if (!approve)
                return psrun_error_set(err, EPERM,
                                       "install: `%s` (%s) was denied: the policy gates installs "
                                       "(`approve: [install]`) and no approver is set",
                                       spec, tool);
        _cleanup_free_ char *json = action_json(psrun_session_id(s), tool_id, spec, idx);
        if (!json)
                return psrun_error_errno(err, ENOMEM, "install");
        psrun_approval a = {
                .action = "install",
                .session = psrun_session_id(s),
                .json = json,
        };
        if (approve(userdata, &a))
                return 0;
        a.reason[sizeof(a.reason) - 1] = '\0';
        /* One line, whatever the approver wrote. */
        for (char *p = a.reason; *p; p++)
                if (*p == '\n' || *p == '\r')
                        *p = ' ';
        return psrun_error_set(err, EPERM, "install: `%s` (%s) was denied by the approver%s%s",
                               spec, tool, a.reason[0] ? ": " : "", a.reason);
}

PSRUN_PUBLIC int psrun_install_start(psrun_session *s, const char *package,
                                     const psrun_install_options *o, psrun_exec_handle **ret,
                                     psrun_error *err)
{
        static const psrun_install_options defaults = {0};
        if (!o)
                o = &defaults;
        if (!ret)
                return psrun_error_set(err, EINVAL, "install: no handle pointer given");
        *ret = NULL;
        enum install_tool tool;
        int r = !s ? psrun_error_set(err, EINVAL, "install: no session given")
                   : install_tool_from_string(o->tool, &tool, err);
        if (r >= 0)
                r = install_check_spec(tool, package, err);
        /* What the session can do, before anyone is asked to approve an
         * install that could not work. */
        struct sess_req info = {.op = SESS_OP_INFO};
        struct sess_reply rep;
        if (r >= 0)
                r = session_call(session_dir(s), &info, NULL, 0, NULL, 0, &rep, NULL, NULL, err);
        if (r >= 0)
                r = install_check_network((enum policy_network) rep.network,
                                          (enum policy_network) rep.install_network, package, err);
        bool gated = r >= 0 && (rep.approve & POLICY_ACTION_INSTALL);
        if (gated) {
                /* The supervisor's strings, ended here whatever it sent. */
                rep.pip_index_url[sizeof(rep.pip_index_url) - 1] = '\0';
                rep.npm_registry[sizeof(rep.npm_registry) - 1] = '\0';
                struct install_index idx = {
                        .pip_index_url = rep.pip_index_url,
                        .npm_registry = rep.npm_registry,
                };
                r = ask(s, tool, package, &idx, err);
        }
        if (r < 0)
                return r;
        struct sess_req req = {
                .op = SESS_OP_INSTALL,
                .timeout_ms = o->timeout_ms,
                .tool = (uint32_t) tool,
                .flags = gated ? SESS_REQ_APPROVED : 0,
        };
        psrun_exec_options eo = {
                .stdin_mode = PSRUN_STDIN_NONE,
                .timeout_ms = o->timeout_ms,
                .on_output = o->on_output,
                .userdata = o->userdata,
                .cancel = o->cancel,
        };
        return session_exec_start(s, &req, package, strlen(package) + 1, &eo, ret, err);
}

PSRUN_PUBLIC int psrun_install_package(psrun_session *s, const char *package,
                                       const psrun_install_options *o, psrun_exec_result *res,
                                       psrun_error *err)
{
        psrun_error local = {0};
        if (!err)
                err = &local;
        psrun_exec_handle *h = NULL;
        int r = psrun_install_start(s, package, o, &h, err);
        if (r < 0) {
                failed(res, err);
                return r;
        }
        return psrun_exec_wait(h, res, err);
}
