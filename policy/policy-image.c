/* SPDX-License-Identifier: MIT */
/*
 * The image keys (docs/policy.md, "Images"): `image`, `image_store`,
 * `registry_mirrors`, `insecure_registries`, `image_max_size`, `tools`.
 * Pure checks; the planner resolves, pulls and mounts (runtime/plan-image.c).
 * A registry reference is kept as a string here, one word of printable
 * ASCII: its grammar is image/'s, checked where it is resolved
 * (plan_image_check_reference), so that policy/ needs nothing of image/.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"

/* The toolchains `tools` may name and the commands that stand for each on
 * the root's PATH (the first found is enough). */
static const struct policy_tool tools[] = {
        {"python", {"python3", "python", NULL}},
        {"pip", {"pip3", "pip", NULL}},
        {"node", {"node", "nodejs", NULL}},
        {"npm", {"npm", NULL}},
        {"sh", {"sh", NULL}},
        {"bash", {"bash", NULL}},
        {"git", {"git", NULL}},
        {"curl", {"curl", NULL}},
        {"gcc", {"gcc", "cc", NULL}},
        {"make", {"make", NULL}},
        {"go", {"go", NULL}},
        {"java", {"java", NULL}},
        {"ruby", {"ruby", NULL}},
        {"perl", {"perl", NULL}},
};

const struct policy_tool *policy_tool_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (strcmp(tools[i].name, name) == 0)
                        return &tools[i];
        return NULL;
}

const struct policy_tool *policy_tool_at(size_t i)
{
        return i < ARRAY_SIZE(tools) ? &tools[i] : NULL;
}

int policy_normalize_tool(const char *in, char **ret, psrun_error *err)
{
        if (!policy_tool_find(in)) {
                char known[256] = "";
                for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
                        if (i)
                                strncat(known, ", ", sizeof(known) - strlen(known) - 1);
                        strncat(known, tools[i].name, sizeof(known) - strlen(known) - 1);
                }
                char shown[72];
                return psrun_error_set(err, EINVAL, "unknown tool `%s` (known: %s)",
                                       policy_escape(in, shown, sizeof(shown)), known);
        }
        *ret = strdup(in);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "tools");
}

/* "oci:DIR[:TAG]": DIR up to the last ':' when what follows has no '/'. */
int policy_image_split_oci(const char *ref, char **dir, char **tag)
{
        const char *rest = ref + 4;
        const char *colon = strrchr(rest, ':');
        if (colon && strchr(colon, '/'))
                colon = NULL;
        *dir = colon ? strndup(rest, (size_t) (colon - rest)) : strdup(rest);
        *tag = colon ? strdup(colon + 1) : NULL;
        if (!*dir || (colon && !*tag)) {
                free(*dir);
                free(*tag);
                return -ENOMEM;
        }
        return 0;
}

static int check_oci(const char *in, psrun_error *err)
{
        _cleanup_free_ char *dir = NULL, *tag = NULL;
        char shown[208]; /* the value as one line, whatever it holds */
        policy_escape(in, shown, sizeof(shown));
        if (policy_image_split_oci(in, &dir, &tag) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        if (!*dir)
                return psrun_error_set(err, EINVAL, "`%s`: oci: needs a directory (oci:DIR[:TAG])",
                                       shown);
        _cleanup_free_ char *norm = NULL;
        if (policy_normalize_source(dir, &norm, err) < 0)
                return psrun_error_prefix(err, "`%s`", shown);
        if (tag && !*tag)
                return psrun_error_set(err, EINVAL, "`%s`: empty tag", shown);
        for (const char *p = tag; p && *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return psrun_error_set(err, EINVAL, "`%s`: bad character in the tag",
                                               shown);
        return 0;
}

/* docker-archive:FILE: a path, as a mount's source is one. */
static int check_docker_archive(const char *in, psrun_error *err)
{
        char shown[208];
        policy_escape(in, shown, sizeof(shown));
        if (!in[15])
                return psrun_error_set(err, EINVAL,
                                       "`%s`: docker-archive: needs a file (docker-archive:FILE)",
                                       shown);
        _cleanup_free_ char *norm = NULL;
        if (policy_normalize_source(in + 15, &norm, err) < 0)
                return psrun_error_prefix(err, "`%s`", shown);
        return 0;
}

/* A registry reference: one word of printable ASCII, at most 512 bytes
 * (the grammar bounds host and path to 255, a tag to 128, a digest to 71). */
static int check_reference_word(const char *in, psrun_error *err)
{
        char shown[208];
        policy_escape(in, shown, sizeof(shown));
        if (!*in)
                return psrun_error_set(err, EINVAL, "empty");
        if (strlen(in) > 512)
                return psrun_error_set(err, EINVAL, "`%s`: longer than 512 characters", shown);
        for (const char *p = in; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return psrun_error_set(err, EINVAL,
                                               "`%s`: has a space, control or non-ASCII character",
                                               shown);
        return 0;
}

int policy_normalize_image(const char *in, char **ret, psrun_error *err)
{
        int r;
        if (strncmp(in, "oci:", 4) == 0)
                r = check_oci(in, err);
        else if (strncmp(in, "docker-archive:", 15) == 0)
                r = check_docker_archive(in, err);
        else
                r = check_reference_word(in, err);
        if (r < 0)
                return r;
        *ret = strdup(in);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "image");
}

static int check_strv(const char *name, char *const *v, size_t n,
                      int (*normalize)(const char *, char **, psrun_error *), psrun_error *err)
{
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *norm = NULL;
                if (!v || !v[i])
                        return psrun_error_set(err, EINVAL, "%s[%zu]: missing", name, i);
                if (normalize(v[i], &norm, err) < 0)
                        return psrun_error_prefix(err, "%s[%zu]", name, i);
        }
        return 0;
}

/* A registry_mirrors / insecure_registries entry: one word of printable
 * ASCII; image/registries.c checks the form when it is applied. */
int policy_normalize_registry(const char *in, char **ret, psrun_error *err)
{
        if (!*in)
                return psrun_error_set(err, EINVAL, "empty");
        if (strlen(in) > 512)
                return psrun_error_set(err, EINVAL, "longer than 512 characters");
        for (const char *p = in; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return psrun_error_set(err, EINVAL,
                                               "has a space, control or non-ASCII character");
        *ret = strdup(in);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "registry");
}

int policy_check_image(const struct policy *p, psrun_error *err)
{
        if (p->image) {
                _cleanup_free_ char *norm = NULL;
                if (policy_normalize_image(p->image, &norm, err) < 0)
                        return psrun_error_prefix(err, "image");
        }
        if (p->image_store) {
                _cleanup_free_ char *norm = NULL;
                if (policy_normalize_path(p->image_store, &norm, err) < 0)
                        return psrun_error_prefix(err, "image_store");
        }
        if (p->image_max_size < POLICY_IMAGE_MAX_SIZE_MIN ||
            p->image_max_size > POLICY_IMAGE_MAX_SIZE_MAX)
                return psrun_error_set(err, ERANGE, "image_max_size: must be between 1M and 1P");
        int r = check_strv("registry_mirrors", p->registry_mirrors, p->n_registry_mirrors,
                           policy_normalize_registry, err);
        if (r >= 0)
                r = check_strv("insecure_registries", p->insecure_registries,
                               p->n_insecure_registries, policy_normalize_registry, err);
        if (r >= 0)
                r = check_strv("tools", p->tools, p->n_tools, policy_normalize_tool, err);
        return r;
}
