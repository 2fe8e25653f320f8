/* SPDX-License-Identifier: MIT */

#include "image/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/number.h"
#include "image/jsondoc.h"

void auth_challenge_free(struct auth_challenge *c)
{
        if (!c)
                return;
        free(c->realm);
        free(c->service);
        free(c->scope);
        *c = (struct auth_challenge){0};
}

static bool is_tchar(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ows(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* token or quoted-string into a new string; *pp after it */
static int read_value(const char **pp, char **ret)
{
        const char *p = *pp;
        size_t cap = strlen(p) + 1;
        _cleanup_free_ char *v = malloc(cap);
        if (!v)
                return -ENOMEM;
        size_t n = 0;
        if (*p == '"') {
                p++;
                for (;;) {
                        if (*p == '\0')
                                return -EINVAL;
                        if (*p == '"')
                                break;
                        if (*p == '\\') {
                                p++;
                                if (*p == '\0')
                                        return -EINVAL;
                        }
                        if ((unsigned char) *p < 0x20 && *p != '\t')
                                return -EINVAL;
                        v[n++] = *p++;
                }
                p++;
        } else {
                while (is_tchar(*p) || *p == '/' || *p == ':' || *p == '=')
                        v[n++] = *p++;
                if (n == 0)
                        return -EINVAL;
        }
        v[n] = '\0';
        *pp = p;
        *ret = TAKE_PTR(v);
        return 0;
}

static int parse_one(const char **pp, struct auth_challenge *c)
{
        const char *p = skip_ows(*pp);
        const char *scheme = p;
        while (is_tchar(*p))
                p++;
        size_t slen = (size_t) (p - scheme);
        if (slen == 0)
                return -EINVAL;
        if (slen == 6 && strncasecmp(scheme, "bearer", 6) == 0)
                c->scheme = AUTH_BEARER;
        else if (slen == 5 && strncasecmp(scheme, "basic", 5) == 0)
                c->scheme = AUTH_BASIC;
        else
                c->scheme = AUTH_NONE; /* parsed past, not used */
        /* auth-params: name = value, separated by commas */
        for (;;) {
                p = skip_ows(p);
                if (*p == '\0')
                        break;
                const char *save = p;
                const char *name = p;
                while (is_tchar(*p))
                        p++;
                size_t nlen = (size_t) (p - name);
                const char *q = skip_ows(p);
                if (nlen == 0 || *q != '=') {
                        /* the next challenge's scheme: stop here */
                        p = save;
                        break;
                }
                p = skip_ows(q + 1);
                _cleanup_free_ char *value = NULL;
                int r = read_value(&p, &value);
                if (r < 0)
                        return r;
                char **slot = NULL;
                if (nlen == 5 && strncasecmp(name, "realm", 5) == 0)
                        slot = &c->realm;
                else if (nlen == 7 && strncasecmp(name, "service", 7) == 0)
                        slot = &c->service;
                else if (nlen == 5 && strncasecmp(name, "scope", 5) == 0)
                        slot = &c->scope;
                if (slot) {
                        if (*slot)
                                return -EINVAL; /* a parameter twice */
                        *slot = TAKE_PTR(value);
                }
                p = skip_ows(p);
                if (*p == ',')
                        p++;
                else if (*p != '\0')
                        return -EINVAL;
        }
        *pp = p;
        return 0;
}

int auth_challenge_parse(const char *header, struct auth_challenge *c, psrun_error *err)
{
        *c = (struct auth_challenge){0};
        char shown[96];
        if (!header || strlen(header) > AUTH_HEADER_MAX)
                return psrun_error_set(err, EINVAL, "image: WWW-Authenticate missing or too long");
        const char *p = header;
        struct auth_challenge best = {0};
        while (*skip_ows(p)) {
                struct auth_challenge one = {0};
                int r = parse_one(&p, &one);
                if (r < 0) {
                        auth_challenge_free(&one);
                        auth_challenge_free(&best);
                        if (r == -ENOMEM)
                                return psrun_error_errno(err, ENOMEM, "image");
                        return psrun_error_set(err, EINVAL,
                                               "image: WWW-Authenticate `%s` is not a challenge",
                                               number_shown(header, shown, sizeof(shown)));
                }
                if (one.scheme == AUTH_BEARER && best.scheme != AUTH_BEARER) {
                        auth_challenge_free(&best);
                        best = one;
                } else if (one.scheme == AUTH_BASIC && best.scheme == AUTH_NONE) {
                        auth_challenge_free(&best);
                        best = one;
                } else {
                        auth_challenge_free(&one);
                }
                p = skip_ows(p);
                if (*p == ',')
                        p++;
        }
        if (best.scheme == AUTH_NONE)
                return psrun_error_set(err, ENOTSUP,
                                       "image: WWW-Authenticate `%s`: neither Bearer nor Basic",
                                       number_shown(header, shown, sizeof(shown)));
        if (best.scheme == AUTH_BEARER) {
                if (!best.realm || (strncmp(best.realm, "https://", 8) != 0 &&
                                    strncmp(best.realm, "http://", 7) != 0)) {
                        auth_challenge_free(&best);
                        return psrun_error_set(err, EINVAL,
                                               "image: WWW-Authenticate `%s`: Bearer without an "
                                               "http(s) realm",
                                               number_shown(header, shown, sizeof(shown)));
                }
        }
        *c = best;
        return 0;
}

int auth_token_parse(const char *buf, size_t len, char **ret, psrun_error *err)
{
        *ret = NULL;
        if (len > AUTH_TOKEN_MAX)
                return psrun_error_set(err, EFBIG, "image: token answer larger than %u bytes",
                                       AUTH_TOKEN_MAX);
        struct jdoc d;
        int r = jdoc_parse(&d, buf, len, "token answer", err);
        if (r < 0)
                return r;
        const char *token = NULL, *access = NULL;
        if ((r = jdoc_get_string(&d, jdoc_root(&d), "token", &token, err)) >= 0 &&
            (r = jdoc_get_string(&d, jdoc_root(&d), "access_token", &access, err)) >= 0) {
                const char *t = token && *token ? token : access;
                if (!t || !*t)
                        r = psrun_error_set(err, EPROTO,
                                            "image: the token server answered "
                                            "without a token");
                for (const char *p = t; r >= 0 && *p; p++)
                        if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                                r = psrun_error_set(err, EPROTO,
                                                    "image: the token server's token "
                                                    "has a space or control "
                                                    "character");
                if (r >= 0 && !(*ret = strdup(t)))
                        r = psrun_error_errno(err, ENOMEM, "image");
        }
        jdoc_free(&d);
        return r;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const unsigned char *p, size_t len)
{
        char *out = malloc((len + 2) / 3 * 4 + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < len; i += 3) {
                unsigned v = (unsigned) p[i] << 16;
                if (i + 1 < len)
                        v |= (unsigned) p[i + 1] << 8;
                if (i + 2 < len)
                        v |= p[i + 2];
                out[o++] = b64[v >> 18 & 63];
                out[o++] = b64[v >> 12 & 63];
                out[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
                out[o++] = i + 2 < len ? b64[v & 63] : '=';
        }
        out[o] = '\0';
        return out;
}

int base64_decode(const char *s, unsigned char **ret, size_t *ret_len)
{
        size_t len = strlen(s);
        if (len % 4 != 0)
                return -EINVAL;
        _cleanup_free_ unsigned char *out = malloc(len / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        for (size_t i = 0; i < len; i += 4) {
                unsigned v = 0;
                int pad = 0;
                for (int j = 0; j < 4; j++) {
                        char c = s[i + j];
                        const char *at = c ? strchr(b64, c) : NULL;
                        if (c == '=' && i + 4 == len && j >= 2) {
                                pad++;
                                v <<= 6;
                                continue;
                        }
                        if (!at || pad)
                                return -EINVAL;
                        v = v << 6 | (unsigned) (at - b64);
                }
                out[o++] = (unsigned char) (v >> 16);
                if (pad < 2)
                        out[o++] = (unsigned char) (v >> 8);
                if (pad < 1)
                        out[o++] = (unsigned char) v;
        }
        out[o] = '\0';
        *ret = TAKE_PTR(out);
        *ret_len = o;
        return 0;
}

/* Whether an auths key names the registry. */
static bool key_matches(const char *key, const char *registry)
{
        const char *k = key;
        if (strncmp(k, "https://", 8) == 0)
                k += 8;
        else if (strncmp(k, "http://", 7) == 0)
                k += 7;
        size_t hl = strcspn(k, "/");
        bool docker = strcmp(registry, "docker.io") == 0;
        if (docker && ((hl == 15 && strncmp(k, "index.docker.io", 15) == 0) ||
                       (hl == 20 && strncmp(k, "registry-1.docker.io", 20) == 0)))
                return true;
        return hl == strlen(registry) && strncmp(k, registry, hl) == 0;
}

int auth_lookup(const char *buf, size_t len, const char *name, const char *registry, char **user,
                char **password, psrun_error *err)
{
        *user = *password = NULL;
        if (len > AUTH_FILE_MAX)
                return psrun_error_set(err, EFBIG, "image: %s: larger than %u bytes", name,
                                       AUTH_FILE_MAX);
        struct jdoc d;
        int r = jdoc_parse(&d, buf, len, name, err);
        if (r < 0)
                return r;
        jnode *auths = NULL;
        r = jdoc_get(&d, jdoc_root(&d), "auths", &auths, err);
        if (r < 0 || !auths) {
                jdoc_free(&d);
                return r;
        }
        if (!jdoc_is_object(auths)) {
                jdoc_free(&d);
                return psrun_error_set(err, EINVAL, "image: %s: auths must be an object", name);
        }
        /* An exact host key beats a host/namespace key: walk twice. */
        jnode *entry = NULL;
        const char *entry_key = NULL;
        for (int pass = 0; pass < 2 && !entry; pass++)
                for (size_t i = 0; i < jdoc_object_len(auths) && !entry; i++) {
                        const char *k = jdoc_object_key(&d, auths, i);
                        if (!k || !key_matches(k, registry))
                                continue;
                        const char *h = k + (strncmp(k, "https://", 8) == 0 ? 8 : 0);
                        bool exact = !strchr(h, '/') || strcmp(h + strcspn(h, "/"), "/v1/") == 0;
                        if (exact == (pass == 0)) {
                                entry = jdoc_object_value(&d, auths, i);
                                entry_key = k;
                        }
                }
        if (!entry) {
                jdoc_free(&d);
                return 0;
        }
        const char *auth = NULL;
        r = jdoc_get_string(&d, entry, "auth", &auth, err);
        if (r >= 0 && (!auth || !*auth))
                r = psrun_error_set(err, EINVAL,
                                    "image: %s: auths.%s has no `auth` (credential helpers and "
                                    "identity tokens are not read)",
                                    name, entry_key);
        _cleanup_free_ unsigned char *raw = NULL;
        size_t raw_len = 0;
        if (r >= 0 && base64_decode(auth, &raw, &raw_len) < 0)
                r = psrun_error_set(err, EINVAL, "image: %s: auths.%s.auth is not base64", name,
                                    entry_key);
        char *colon = r >= 0 ? memchr(raw, ':', raw_len) : NULL;
        if (r >= 0 && (!colon || memchr(raw, '\0', raw_len)))
                r = psrun_error_set(err, EINVAL,
                                    "image: %s: auths.%s.auth is not base64 of user:password", name,
                                    entry_key);
        if (r >= 0) {
                *colon = '\0';
                *user = strdup((char *) raw);
                *password = strdup(colon + 1);
                if (!*user || !*password) {
                        free(*user);
                        free(*password);
                        *user = *password = NULL;
                        r = psrun_error_errno(err, ENOMEM, "image");
                }
                /* the decoded secret is not left in freed memory */
                explicit_bzero(raw, raw_len);
        }
        jdoc_free(&d);
        return r;
}

static int lookup_file(const char *path, const char *registry, char **user, char **password,
                       psrun_error *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? 0 : psrun_error_errno(err, errno, "image: %s", path);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = read_all(fd, AUTH_FILE_MAX, &buf, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "image: %s", path);
        r = auth_lookup(buf, len, path, registry, user, password, err);
        explicit_bzero(buf, len);
        return r;
}

int auth_find(const char *registry, const char *explicit_file, char **user, char **password,
              psrun_error *err)
{
        *user = *password = NULL;
        if (explicit_file)
                return lookup_file(explicit_file, registry, user, password, err);
        const char *env[][2] = {
                {"REGISTRY_AUTH_FILE", ""},
                {"XDG_RUNTIME_DIR", "/containers/auth.json"},
                {"HOME", "/.config/containers/auth.json"},
                {"HOME", "/.docker/config.json"},
                {"DOCKER_CONFIG", "/config.json"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(env); i++) {
                const char *base = getenv(env[i][0]);
                if (!base || base[0] != '/')
                        continue;
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s%s", base, env[i][1]) < 0)
                        return psrun_error_errno(err, ENOMEM, "image");
                int r = lookup_file(path, registry, user, password, err);
                if (r < 0 || *user)
                        return r;
        }
        return 0;
}
