/* SPDX-License-Identifier: MIT */
/*
 * The reference grammar (distribution/reference), written out as small
 * recognisers rather than a regular expression, so that each refusal can
 * say what is wrong.
 */

#include "image/reference.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/number.h"
#include "image/digest.h"

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
        return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool is_word(char c)
{
        return is_alnum(c) || c == '_';
}

/* domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static bool valid_domain_component(const char *s, size_t len)
{
        if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!is_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

static bool valid_port(const char *s, size_t len)
{
        if (len == 0 || len > 5)
                return false;
        unsigned v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        return v >= 1 && v <= 65535;
}

static bool valid_ipv6(const char *s, size_t len)
{
        if (len < 2)
                return false;
        size_t colons = 0;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == ':')
                        colons++;
                else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                           (c >= 'A' && c <= 'F') || c == '.'))
                        return false;
        }
        return colons >= 2 && colons <= 7;
}

/* host[:port], host a domain name, an IPv4 address or [IPv6]. */
static bool valid_domain(const char *s, size_t len)
{
        size_t host_len = len;
        if (len && s[0] == '[') {
                const char *close = memchr(s, ']', len);
                if (!close || !valid_ipv6(s + 1, (size_t) (close - s) - 1))
                        return false;
                host_len = (size_t) (close - s) + 1;
                if (host_len == len)
                        return true;
                return s[host_len] == ':' && valid_port(s + host_len + 1, len - host_len - 1);
        }
        const char *colon = memchr(s, ':', len);
        if (colon) {
                host_len = (size_t) (colon - s);
                if (!valid_port(colon + 1, len - host_len - 1))
                        return false;
        }
        size_t start = 0;
        for (size_t i = 0; i <= host_len; i++)
                if (i == host_len || s[i] == '.') {
                        if (!valid_domain_component(s + start, i - start))
                                return false;
                        start = i + 1;
                }
        return true;
}

/* path-component := [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)* */
static bool valid_path_component(const char *s, size_t len)
{
        size_t i = 0;
        if (len == 0 || !is_lower_alnum(s[0]))
                return false;
        while (i < len) {
                while (i < len && is_lower_alnum(s[i]))
                        i++;
                if (i == len)
                        return true;
                size_t sep = i;
                if (s[i] == '.')
                        i++;
                else if (s[i] == '_')
                        i += (i + 1 < len && s[i + 1] == '_') ? 2 : 1;
                else if (s[i] == '-')
                        while (i < len && s[i] == '-')
                                i++;
                else
                        return false;
                if (i == sep || i == len || !is_lower_alnum(s[i]))
                        return false;
        }
        return true;
}

static bool valid_tag(const char *s)
{
        size_t len = strlen(s);
        if (len == 0 || len > IMAGE_TAG_MAX || !is_word(s[0]))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!is_word(s[i]) && s[i] != '.' && s[i] != '-')
                        return false;
        return true;
}

static bool has_upper(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (s[i] >= 'A' && s[i] <= 'Z')
                        return true;
        return false;
}

static int fail(psrun_error *err, const char *text, const char *what)
{
        char shown[96];
        return psrun_error_set(err, EINVAL, "image: `%s`: %s",
                               number_shown(text, shown, sizeof(shown)), what);
}

void image_ref_free(struct image_ref *ref)
{
        if (!ref)
                return;
        free(ref->registry);
        free(ref->repository);
        free(ref->tag);
        free(ref->digest);
        *ref = (struct image_ref){0};
}

int image_ref_parse(const char *text, struct image_ref *ref, psrun_error *err)
{
        *ref = (struct image_ref){0};
        if (!text || !*text)
                return psrun_error_set(err, EINVAL, "image: empty reference");
        size_t total = strlen(text);
        if (total > IMAGE_NAME_MAX + 1 + IMAGE_TAG_MAX + 1 + DIGEST_STR_LEN)
                return fail(err, text, "too long");
        for (const char *p = text; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return fail(err, text, "has a space, control or non-ASCII character");

        _cleanup_free_ char *copy = strdup(text);
        if (!copy)
                return psrun_error_errno(err, ENOMEM, "image");
        char *digest = strchr(copy, '@');
        if (digest) {
                *digest++ = '\0';
                psrun_error derr = {0};
                if (digest_parse(digest, NULL, &derr) < 0)
                        return fail(err, text,
                                    derr.code == ENOTSUP ? "digest algorithm is not sha256"
                                                         : "digest is not sha256: and 64 "
                                                           "lowercase hex digits");
        }
        char *name = copy;
        char *last_slash = strrchr(name, '/');
        char *tag = strrchr(last_slash ? last_slash : name, ':');
        /* A bracketed IPv6 host with no path has its colons before any '/';
         * a name always has a path, so a ':' after the last '/' is a tag. */
        if (tag)
                *tag++ = '\0';
        if (tag && !valid_tag(tag))
                return fail(err, text,
                            "tag must be 1 to 128 of [A-Za-z0-9_.-], not starting "
                            "with . or -");
        if (!*name)
                return fail(err, text, "no repository name");

        /* The domain: Docker's rule (splitDockerDomain). */
        const char *registry = IMAGE_DEFAULT_REGISTRY;
        char *path = name;
        _cleanup_free_ char *domain = NULL;
        char *slash = strchr(name, '/');
        if (slash) {
                size_t dlen = (size_t) (slash - name);
                bool is_domain = memchr(name, '.', dlen) || memchr(name, ':', dlen) ||
                                 (dlen == 9 && strncmp(name, "localhost", 9) == 0) ||
                                 name[0] == '[' || has_upper(name, dlen);
                if (is_domain) {
                        if (!valid_domain(name, dlen))
                                return fail(err, text, "registry host is not host[:port]");
                        domain = strndup(name, dlen);
                        if (!domain)
                                return psrun_error_errno(err, ENOMEM, "image");
                        registry = domain;
                        if (strcmp(domain, "index.docker.io") == 0)
                                registry = IMAGE_DEFAULT_REGISTRY;
                        path = slash + 1;
                }
        }
        if (!*path)
                return fail(err, text, "no repository name");
        if (strlen(registry) + 1 + strlen(path) > IMAGE_NAME_MAX)
                return fail(err, text, "name longer than 255 characters");
        if (!slash && strlen(path) == SHA256_HEX_LEN && !tag && !digest) {
                bool all_hex = true;
                for (const char *p = path; *p; p++)
                        all_hex = all_hex && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
                if (all_hex)
                        return fail(err, text, "64 hex digits name an image ID, not an image");
        }
        if (has_upper(path, strlen(path)))
                return fail(err, text, "repository name must be lowercase");
        for (char *p = path;;) {
                char *end = strchr(p, '/');
                size_t len = end ? (size_t) (end - p) : strlen(p);
                if (!valid_path_component(p, len))
                        return fail(err, text,
                                    "each part of the repository name must be [a-z0-9] "
                                    "joined by `.`, `_`, `__` or dashes");
                if (!end)
                        break;
                p = end + 1;
        }

        bool library = strcmp(registry, IMAGE_DEFAULT_REGISTRY) == 0 && !strchr(path, '/');
        struct image_ref r = {0};
        r.registry = strdup(registry);
        if (r.registry && asprintf(&r.repository, "%s%s", library ? "library/" : "", path) < 0)
                r.repository = NULL;
        r.tag = tag ? strdup(tag) : (digest ? NULL : strdup("latest"));
        r.digest = digest ? strdup(digest) : NULL;
        if (!r.registry || !r.repository || ((tag || !digest) && !r.tag) || (digest && !r.digest)) {
                image_ref_free(&r);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        *ref = r;
        return 0;
}

char *image_ref_string(const struct image_ref *ref)
{
        char *s = NULL;
        if (asprintf(&s, "%s/%s%s%s%s%s", ref->registry, ref->repository, ref->tag ? ":" : "",
                     ref->tag ? ref->tag : "", ref->digest ? "@" : "",
                     ref->digest ? ref->digest : "") < 0)
                return NULL;
        return s;
}
