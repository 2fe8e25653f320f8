/* SPDX-License-Identifier: MIT */
/* Package specs and installer command lines (runtime/session/package.h). */
#include "runtime/session/package.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"

static const struct {
        const char *name;
        enum install_tool tool;
} tools[] = {
        {"python", INSTALL_TOOL_PYTHON},
        {"node", INSTALL_TOOL_NODE},
};

int install_tool_from_string(const char *s, enum install_tool *tool, psrun_error *err)
{
        if (!s) {
                *tool = INSTALL_TOOL_PYTHON;
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (strcmp(tools[i].name, s) == 0) {
                        *tool = tools[i].tool;
                        return 0;
                }
        char shown[64];
        return psrun_error_set(err, EINVAL, "tool: `%s` is not an installer (python or node)",
                               policy_escape(s, shown, sizeof(shown)));
}

const char *install_tool_to_string(enum install_tool tool)
{
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (tools[i].tool == tool)
                        return tools[i].name;
        return NULL;
}

static bool alnum(char c)
{
        return isalnum((unsigned char) c);
}

/* [A-Za-z0-9] ([A-Za-z0-9._-]* [A-Za-z0-9])? : PEP 508's name (and an
 * extra's). Returns the length matched, 0 for none. */
static size_t pep508_name(const char *s)
{
        if (!alnum(s[0]))
                return 0;
        size_t n = 1;
        while (alnum(s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-')
                n++;
        while (n > 1 && !alnum(s[n - 1]))
                n--;
        return n;
}

static int check_python(const char *s)
{
        size_t n = pep508_name(s);
        if (n == 0)
                return -EINVAL;
        s += n;
        if (*s == '[') {
                s++;
                for (;;) {
                        size_t k = pep508_name(s);
                        if (k == 0)
                                return -EINVAL;
                        s += k;
                        if (*s == ']')
                                break;
                        if (*s++ != ',')
                                return -EINVAL;
                }
                s++;
        }
        /* Version clauses: OP VERSION (, OP VERSION)*. */
        static const char *const ops[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
        bool first = true;
        while (*s) {
                if (!first && *s++ != ',')
                        return -EINVAL;
                first = false;
                size_t k = 0;
                for (size_t i = 0; i < ARRAY_SIZE(ops) && !k; i++)
                        if (strncmp(s, ops[i], strlen(ops[i])) == 0)
                                k = strlen(ops[i]);
                if (!k)
                        return -EINVAL;
                s += k;
                const char *v = s;
                while (*s && (alnum(*s) || strchr(".*+!_-", *s)))
                        s++;
                if (s == v || !alnum(v[0]))
                        return -EINVAL;
                if (*s && *s != ',')
                        return -EINVAL;
        }
        return 0;
}

/* npm: [@scope/]name[@version-or-range-or-tag]. */
static size_t npm_name(const char *s)
{
        if (!alnum(s[0]))
                return 0;
        size_t n = 1;
        while (alnum(s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-')
                n++;
        return n;
}

static int check_node(const char *s)
{
        const char *start = s;
        if (*s == '@') {
                size_t k = npm_name(s + 1);
                if (k == 0 || s[1 + k] != '/')
                        return -EINVAL;
                s += 2 + k;
        }
        size_t k = npm_name(s);
        if (k == 0)
                return -EINVAL;
        s += k;
        if ((size_t) (s - start) > 214)
                return -EINVAL;
        if (*s == '\0')
                return 0;
        if (*s++ != '@' || !*s || *s == '.')
                return -EINVAL;
        /* A version, a range without spaces or `||` (1.2.3, ^4, ~1.0, >=2,
         * 1.x, 2 - 3 is refused) or a dist-tag (latest, next). */
        for (; *s; s++)
                if (!alnum(*s) && !strchr(".^~<>=*+_-", *s))
                        return -EINVAL;
        return 0;
}

/*
 * What the installer itself would make of a spec, before psrun's own
 * grammar: pip and npm each take a local file for what merely looks like a
 * name when it ends like an archive, so a spec the grammar accepts
 * (`x-1.0-py3-none-any.whl`, `x.tgz`) would install what the sandbox
 * planted in /workspace, and the approver would have seen only a name.
 */
static bool ends_with_ci(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);
        return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* pip (its req constructors): a requirement that ends in one of these is a
 * path to an archive, whether or not the file exists yet; one with a path
 * separator or a leading dot is a path. */
static const char *const pip_archives[] = {
        ".zip", ".whl",    ".tar.bz2", ".tbz", ".tar.gz", ".tgz",
        ".tar", ".tar.xz", ".txz",     ".tlz", ".tar.lz", ".tar.lzma",
};

/* npm (npm-package-arg): a name part or a version part ending in one of
 * these is a tarball on disk; a version part that starts with `.` or `~/`
 * or holds a slash is a directory. */
static const char *const npm_archives[] = {".tgz", ".tar.gz", ".tar"};

static const char *archive_suffix(enum install_tool tool, const char *s)
{
        const char *const *list = tool == INSTALL_TOOL_NODE ? npm_archives : pip_archives;
        size_t n = tool == INSTALL_TOOL_NODE ? ARRAY_SIZE(npm_archives) : ARRAY_SIZE(pip_archives);
        for (size_t i = 0; i < n; i++)
                if (ends_with_ci(s, list[i]))
                        return list[i];
        return NULL;
}

/* The spec's name part and, for npm, the version part after the name's
 * `@`, each checked against what npm reads as a file. */
static const char *local_archive(enum install_tool tool, const char *spec)
{
        const char *suffix = archive_suffix(tool, spec);
        if (suffix || tool != INSTALL_TOOL_NODE)
                return suffix;
        const char *at = strchr(spec[0] == '@' ? spec + 1 : spec, '@');
        if (!at)
                return NULL;
        _cleanup_free_ char *name = strndup(spec, (size_t) (at - spec));
        return name ? archive_suffix(tool, name) : NULL;
}

int install_check_spec(enum install_tool tool, const char *spec, psrun_error *err)
{
        char shown[96];
        if (!spec || !spec[0])
                return psrun_error_set(err, EINVAL, "package: no package given");
        policy_escape(spec, shown, sizeof(shown));
        if (strlen(spec) > INSTALL_SPEC_MAX)
                return psrun_error_set(err, EINVAL, "package: `%s` is longer than %d characters",
                                       shown, INSTALL_SPEC_MAX);
        if (spec[0] == '-')
                return psrun_error_set(err, EINVAL,
                                       "package: `%s` looks like an option: only a package name "
                                       "(with a version) is accepted",
                                       shown);
        if (strstr(spec, "://") || strchr(spec, ':'))
                return psrun_error_set(
                        err, EINVAL,
                        "package: `%s`: URLs and VCS specs are refused; name a "
                        "package on the index (the index is the policy's %s)",
                        shown, tool == INSTALL_TOOL_NODE ? "npm_registry" : "pip_index_url");
        const char *archive = local_archive(tool, spec);
        if (archive)
                return psrun_error_set(err, EINVAL,
                                       "package: `%s`: %s would install it as a local %s archive "
                                       "(from the workspace), not from the index; name a package "
                                       "on the index",
                                       shown, tool == INSTALL_TOOL_NODE ? "npm" : "pip", archive);
        int r = tool == INSTALL_TOOL_NODE ? check_node(spec) : check_python(spec);
        if (r < 0)
                return psrun_error_set(
                        err, EINVAL,
                        tool == INSTALL_TOOL_NODE
                                ? "package: `%s` is not an npm package name with an optional "
                                  "version (lodash, @scope/pkg@^1.2); paths, URLs, spaces and "
                                  "shell syntax are refused"
                                : "package: `%s` is not a Python package name with optional "
                                  "extras and version (requests, requests[socks]>=2.31,<3); "
                                  "paths, URLs, markers, spaces and shell syntax are refused",
                        shown);
        return 0;
}

int install_check_network(enum policy_network network, enum policy_network install_network,
                          const char *spec, psrun_error *err)
{
        if (network != POLICY_NETWORK_NONE || install_network != POLICY_NETWORK_NONE)
                return 0;
        char shown[96];
        return psrun_error_set(err, ENETUNREACH,
                               "install: `%s` cannot be installed: the session has no network "
                               "(`network: none`) and `install_network` is none (set "
                               "install_network: restricted to let installs reach the index)",
                               policy_escape(spec, shown, sizeof(shown)));
}

/* "host[:port]" of an URL the policy checked (policy_normalize_url). */
static char *url_host(const char *url)
{
        const char *h = strstr(url, "://");
        h = h ? h + 3 : url;
        return strndup(h, strcspn(h, "/"));
}

const char *install_index_url(const struct install_index *idx, enum install_tool tool)
{
        const char *url = tool == INSTALL_TOOL_NODE ? idx->npm_registry : idx->pip_index_url;
        if (url && url[0])
                return url;
        return tool == INSTALL_TOOL_NODE ? "https://registry.npmjs.org/"
                                         : "https://pypi.org/simple";
}

int install_argv(const struct install_index *idx, enum install_tool tool, const char *spec,
                 char ***ret, psrun_error *err)
{
        const char *pip_index =
                idx->pip_index_url && idx->pip_index_url[0] ? idx->pip_index_url : NULL;
        const char *npm_registry =
                idx->npm_registry && idx->npm_registry[0] ? idx->npm_registry : NULL;
        int r = install_check_spec(tool, spec, err);
        if (r < 0)
                return r;
        const char *v[24];
        size_t n = 0;
        _cleanup_free_ char *host = NULL, *registry = NULL;
        if (tool == INSTALL_TOOL_PYTHON) {
                /* -I and --isolated: neither PYTHONPATH nor a pip.conf that
                 * code in the workspace (HOME) may have planted steers pip;
                 * what counts is the policy's index. */
                const char *pre[] = {"python3",
                                     "-I",
                                     "-m",
                                     "pip",
                                     "install",
                                     "--isolated",
                                     "--no-input",
                                     "--disable-pip-version-check",
                                     "--no-cache-dir",
                                     "--no-warn-script-location",
                                     "--progress-bar",
                                     "off",
                                     "--target",
                                     INSTALL_PYTHON_DIR};
                memcpy(v, pre, sizeof(pre));
                n = ARRAY_SIZE(pre);
                if (pip_index) {
                        v[n++] = "--index-url";
                        v[n++] = pip_index;
                        /* pip ignores a plain-http index unless told to trust
                         * its host: the operator named it, so it is. */
                        if (strncmp(pip_index, "http://", 7) == 0) {
                                if (!(host = url_host(pip_index)))
                                        return psrun_error_errno(err, ENOMEM, "install");
                                v[n++] = "--trusted-host";
                                v[n++] = host;
                        }
                }
        } else {
                const char *pre[] = {"npm",
                                     "install",
                                     "--no-fund",
                                     "--no-audit",
                                     "--no-update-notifier",
                                     "--cache",
                                     "/tmp/.psrun-npm-cache"};
                memcpy(v, pre, sizeof(pre));
                n = ARRAY_SIZE(pre);
                if (npm_registry) {
                        if (asprintf(&registry, "--registry=%s", npm_registry) < 0)
                                return psrun_error_errno(err, ENOMEM, "install");
                        v[n++] = registry;
                }
        }
        v[n++] = "--";
        v[n++] = spec;
        _cleanup_strv_free_ char **out = calloc(n + 1, sizeof(char *));
        if (!out)
                return psrun_error_errno(err, ENOMEM, "install");
        for (size_t i = 0; i < n; i++)
                if (!(out[i] = strdup(v[i])))
                        return psrun_error_errno(err, ENOMEM, "install");
        *ret = TAKE_PTR(out);
        return 0;
}

const char *const install_env[] = {
        "PYTHONPATH=" INSTALL_PYTHON_DIR,
        "NODE_PATH=" INSTALL_NODE_DIR,
        NULL,
};

char *install_path(const char *path)
{
        char *out;
        if (asprintf(&out, "%s%s%s:%s/.bin", path && path[0] ? path : "",
                     path && path[0] ? ":" : "", INSTALL_PYTHON_DIR "/bin", INSTALL_NODE_DIR) < 0)
                return NULL;
        return out;
}
