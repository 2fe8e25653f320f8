/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Package installs in a session (docs/sessions.md): the package spec's
 * check and the installer's command line. Pure: no syscalls, shared by the
 * client (psrun_install_package refuses a bad spec before asking anyone)
 * and the supervisor (which builds the command it runs).
 */

#include "common/error.h"
#include "policy/policy.h"

enum install_tool {
        INSTALL_TOOL_PYTHON = 1, /* python3 -m pip install --target INSTALL_PYTHON_DIR */
        INSTALL_TOOL_NODE = 2,   /* npm install in /workspace */
};

/* Where pip puts packages; every exec of a session finds them there
 * (PYTHONPATH, PATH: install_env). */
#define INSTALL_PYTHON_DIR "/workspace/.local/python"
#define INSTALL_NODE_DIR   "/workspace/node_modules"
#define INSTALL_SPEC_MAX   256

/* "python" / "node" (NULL: python) -> the tool; -EINVAL naming `tool`. */
int install_tool_from_string(const char *s, enum install_tool *tool, psrun_error *err);
const char *install_tool_to_string(enum install_tool tool);

/* One package with an optional version: `requests`, `requests[socks]>=2.31,<3`
 * (PEP 508 names, extras and version clauses) or `lodash`, `@scope/pkg@^1.2`
 * (npm names with a version, range or tag). Refused with a message naming
 * `package`: an option (leading `-`), a URL, a path, a VCS or file spec, an
 * environment marker, spaces, quotes and every shell metacharacter. */
int install_check_spec(enum install_tool tool, const char *spec, psrun_error *err);

/* -ENETUNREACH, with the message the caller shows, when neither the
 * session's network nor install_network could reach an index. */
int install_check_network(enum policy_network network, enum policy_network install_network,
                          const char *spec, psrun_error *err);

/* Where an installer fetches from: the policy's pip_index_url and
 * npm_registry (NULL or "": the tool's default index). */
struct install_index {
        const char *pip_index_url;
        const char *npm_registry;
};

/* The index tool fetches from under idx: the policy's, else the tool's
 * own default (pip's https://pypi.org/simple, npm's
 * https://registry.npmjs.org/), for what an approver is shown. */
const char *install_index_url(const struct install_index *idx, enum install_tool tool);

/* The installer's argv (malloc'd vector of malloc'd strings, strv_free)
 * for a checked spec, with the index idx names. */
int install_argv(const struct install_index *idx, enum install_tool tool, const char *spec,
                 char ***argv, psrun_error *err);

/* What every exec of a session gets so installed packages are found with
 * no configuration: NAME=value strings (static), those the policy's own env
 * sets left out by the caller. PATH is appended to, see install_path(). */
extern const char *const install_env[];
/* PATH with the installers' bin directories appended (malloc'd). */
char *install_path(const char *path);
