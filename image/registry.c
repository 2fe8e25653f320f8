/* SPDX-License-Identifier: MIT */
/*
 * One curl easy handle per client, reset between requests (its connection
 * cache survives a reset, so a pull reuses its connections); each request
 * goes to the endpoints in order (mirrors, then the registry) until one
 * answers it.
 */

#include "image/registry.h"

/* The bitmask protocol options are the fallback for a libcurl older than
 * 7.85 at run time (the header is only for constants and prototypes). */
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/number.h"
#include "image/auth.h"
#include "image/jsondoc.h"
#include "image/manifest.h"

/* The libcurl entry points psrun uses, resolved once by name. */
static struct {
        __typeof__(curl_global_init) *global_init;
        __typeof__(curl_easy_init) *easy_init;
        __typeof__(curl_easy_setopt) *easy_setopt;
        __typeof__(curl_easy_perform) *easy_perform;
        __typeof__(curl_easy_getinfo) *easy_getinfo;
        __typeof__(curl_easy_cleanup) *easy_cleanup;
        __typeof__(curl_easy_reset) *easy_reset;
        __typeof__(curl_easy_strerror) *easy_strerror;
        __typeof__(curl_easy_escape) *easy_escape;
        __typeof__(curl_free) *free;
        __typeof__(curl_slist_append) *slist_append;
        __typeof__(curl_slist_free_all) *slist_free_all;
} cu;
static int cu_status = -ENOSYS; /* 0 once loaded */
static char cu_problem[160];
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_load(void)
{
        void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
                snprintf(cu_problem, sizeof(cu_problem), "%s", dlerror());
                cu_status = -ENOENT;
                return;
        }
#define RESOLVE(field, name)                                                                       \
        do {                                                                                       \
                *(void **) &cu.field = dlsym(lib, name);                                           \
                if (!cu.field) {                                                                   \
                        snprintf(cu_problem, sizeof(cu_problem), "libcurl.so.4 has no %s", name);  \
                        cu_status = -ENOENT;                                                       \
                        return;                                                                    \
                }                                                                                  \
        } while (0)
        RESOLVE(global_init, "curl_global_init");
        RESOLVE(easy_init, "curl_easy_init");
        RESOLVE(easy_setopt, "curl_easy_setopt");
        RESOLVE(easy_perform, "curl_easy_perform");
        RESOLVE(easy_getinfo, "curl_easy_getinfo");
        RESOLVE(easy_cleanup, "curl_easy_cleanup");
        RESOLVE(easy_reset, "curl_easy_reset");
        RESOLVE(easy_strerror, "curl_easy_strerror");
        RESOLVE(easy_escape, "curl_easy_escape");
        RESOLVE(free, "curl_free");
        RESOLVE(slist_append, "curl_slist_append");
        RESOLVE(slist_free_all, "curl_slist_free_all");
#undef RESOLVE
        /* once per process, before any handle (curl_global_init is not
         * thread-safe; pthread_once makes this call so) */
        if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                snprintf(cu_problem, sizeof(cu_problem), "curl_global_init failed");
                cu_status = -EIO;
                return;
        }
        cu_status = 0;
}

int registry_transport_available(psrun_error *err)
{
        pthread_once(&cu_once, cu_load);
        if (cu_status < 0)
                return psrun_error_set(err, -cu_status,
                                       "image: pulling needs libcurl (Debian: libcurl4): %s",
                                       cu_problem);
        return 0;
}

struct endpoint_state {
        struct registry_endpoint ep;
        char *authorization; /* "Bearer …" / "Basic …" once known */
        bool tried_credentials;
};

struct registry_client {
        CURL *curl;
        char *name;     /* the reference, for messages */
        char *registry; /* the credentials' key */
        char *repository;
        char *ca_file;
        char *auth_file;
        long max_recv;
        struct endpoint_state *eps;
        size_t n_eps;
        size_t current;
        char errbuf[CURL_ERROR_SIZE];
};

/* What one response carried. */
struct response {
        CURL *curl;
        long status;
        char content_type[128];
        char docker_digest[DIGEST_STR_LEN + 1];
        char content_range[96];
        char www_authenticate[AUTH_HEADER_MAX + 1];
        /* a 2xx body into memory (bounded), or into fd when fd >= 0;
         * anything else (errors, a 401's) into memory */
        char *body;
        size_t len, max;
        bool too_big;
        int fd;
        struct sha256 *hash; /* primed with the first `base` bytes of fd */
        int64_t base, written, limit;
        bool started;
        int write_errno;
        bool overflow, bad_range;
};

static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
        struct response *r = userdata;
        size_t len = size * n;
        /* each response of a redirect chain starts with its status line */
        if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
                r->content_type[0] = r->docker_digest[0] = r->www_authenticate[0] = '\0';
                r->content_range[0] = '\0';
                return len;
        }
        const char *colon = memchr(p, ':', len);
        if (!colon)
                return len;
        size_t nlen = (size_t) (colon - p);
        const char *v = colon + 1;
        size_t vlen = len - nlen - 1;
        while (vlen && (*v == ' ' || *v == '\t'))
                v++, vlen--;
        while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
                vlen--;
        char *slot = NULL;
        size_t cap = 0;
        if (nlen == 12 && strncasecmp(p, "content-type", 12) == 0)
                slot = r->content_type, cap = sizeof(r->content_type);
        else if (nlen == 21 && strncasecmp(p, "docker-content-digest", 21) == 0)
                slot = r->docker_digest, cap = sizeof(r->docker_digest);
        else if (nlen == 13 && strncasecmp(p, "content-range", 13) == 0)
                slot = r->content_range, cap = sizeof(r->content_range);
        else if (nlen == 16 && strncasecmp(p, "www-authenticate", 16) == 0)
                slot = r->www_authenticate, cap = sizeof(r->www_authenticate);
        if (!slot)
                return len;
        if (slot == r->www_authenticate && slot[0]) {
                /* several challenges: one list, as RFC 7235 allows */
                size_t used = strlen(slot);
                if (used + 2 + vlen < cap) {
                        memcpy(slot + used, ", ", 2);
                        memcpy(slot + used + 2, v, vlen);
                        slot[used + 2 + vlen] = '\0';
                }
                return len;
        }
        if (vlen >= cap)
                vlen = cap - 1;
        memcpy(slot, v, vlen);
        slot[vlen] = '\0';
        return len;
}

/* The first body byte of a blob's answer: 206 must continue at base
 * ("bytes BASE-"), a 200 rewrites the file from its start. */
static bool blob_start(struct response *r, long status)
{
        if (status == 206) {
                char want[40];
                snprintf(want, sizeof(want), "bytes %lld-", (long long) r->base);
                if (strncmp(r->content_range, want, strlen(want)) != 0) {
                        r->bad_range = true;
                        return false;
                }
                return true;
        }
        if (r->base > 0) {
                char discard[SHA256_HEX_LEN + 1];
                if (ftruncate(r->fd, 0) < 0 || lseek(r->fd, 0, SEEK_SET) < 0) {
                        r->write_errno = errno;
                        return false;
                }
                sha256_final_hex(r->hash, discard); /* resets it */
                r->base = 0;
        }
        return true;
}

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
        struct response *r = userdata;
        size_t len = size * n;
        long status = 0;
        cu.easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
        if (r->fd >= 0 && (status == 200 || status == 206)) {
                if (!r->started) {
                        r->started = true;
                        if (!blob_start(r, status))
                                return 0;
                }
                if (r->base + r->written + (int64_t) len > r->limit) {
                        r->overflow = true;
                        return 0;
                }
                int w = write_all(r->fd, p, len);
                if (w < 0) {
                        r->write_errno = -w;
                        return 0;
                }
                sha256_update(r->hash, p, len);
                r->written += (int64_t) len;
                return len;
        }
        if (r->len + len > r->max) {
                r->too_big = true;
                return 0;
        }
        char *b = realloc(r->body, r->len + len + 1);
        if (!b)
                return 0;
        memcpy(b + r->len, p, len);
        r->len += len;
        b[r->len] = '\0';
        r->body = b;
        return len;
}

void registry_close(struct registry_client *c)
{
        if (!c)
                return;
        if (c->curl)
                cu.easy_cleanup(c->curl);
        for (size_t i = 0; i < c->n_eps; i++) {
                free(c->eps[i].ep.host);
                if (c->eps[i].authorization) {
                        explicit_bzero(c->eps[i].authorization, strlen(c->eps[i].authorization));
                        free(c->eps[i].authorization);
                }
        }
        free(c->eps);
        free(c->name);
        free(c->registry);
        free(c->repository);
        free(c->ca_file);
        free(c->auth_file);
        free(c);
}

const char *registry_endpoint(const struct registry_client *c)
{
        return c->eps[c->current].ep.host;
}

int registry_open(const struct registry_options *opt, const struct image_ref *ref,
                  struct registry_client **ret, psrun_error *err)
{
        int r = registry_transport_available(err);
        if (r < 0)
                return r;
        _cleanup_(registry_closep) struct registry_client *c = calloc(1, sizeof(*c));
        if (!c)
                return psrun_error_errno(err, ENOMEM, "image");
        struct registry_endpoint *eps = NULL;
        size_t n = 0;
        if ((r = registries_endpoints(opt->registries, ref->registry, &eps, &n, err)) < 0)
                return r;
        c->eps = calloc(n, sizeof(*c->eps));
        if (!c->eps) {
                registry_endpoints_free(eps, n);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        for (size_t i = 0; i < n; i++)
                c->eps[i].ep = eps[i];
        free(eps); /* the hosts moved into c->eps */
        c->n_eps = n;
        const char *ca = opt->ca_file      ? opt->ca_file
                         : opt->registries ? opt->registries->ca_file
                                           : NULL;
        c->name = image_ref_string(ref);
        c->registry = strdup(ref->registry);
        c->repository = strdup(ref->repository);
        c->ca_file = ca ? strdup(ca) : NULL;
        c->auth_file = opt->auth_file ? strdup(opt->auth_file) : NULL;
        c->max_recv = opt->max_recv_bytes_per_s;
        if (!c->name || !c->registry || !c->repository || (ca && !c->ca_file) ||
            (opt->auth_file && !c->auth_file))
                return psrun_error_errno(err, ENOMEM, "image");
        if (!(c->curl = cu.easy_init()))
                return psrun_error_set(err, ENOMEM, "image: curl_easy_init failed");
        *ret = TAKE_PTR(c);
        return 0;
}

static void setopt_protocols(struct registry_client *c, bool insecure)
{
        const char *protos = insecure ? "http,https" : "https";
        if (cu.easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, protos) != CURLE_OK) {
                long bits = CURLPROTO_HTTPS | (insecure ? CURLPROTO_HTTP : 0);
                cu.easy_setopt(c->curl, CURLOPT_PROTOCOLS, bits);
        }
        /* a redirect from HTTPS never downgrades to plain HTTP */
        if (cu.easy_setopt(c->curl, CURLOPT_REDIR_PROTOCOLS_STR, protos) != CURLE_OK) {
                long bits = CURLPROTO_HTTPS | (insecure ? CURLPROTO_HTTP : 0);
                cu.easy_setopt(c->curl, CURLOPT_REDIR_PROTOCOLS, bits);
        }
}

/* One GET, with the headers given; the response into r. */
static int perform(struct registry_client *c, const char *url, bool insecure,
                   const char *authorization, const char *accept, const char *range,
                   struct response *r, psrun_error *err)
{
        CURL *h = c->curl;
        cu.easy_reset(h);
        struct curl_slist *headers = NULL, *tmp;
        _cleanup_free_ char *auth_h = NULL, *accept_h = NULL, *range_h = NULL;
        if (authorization && asprintf(&auth_h, "Authorization: %s", authorization) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        if (accept && asprintf(&accept_h, "Accept: %s", accept) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        if (range && asprintf(&range_h, "Range: %s", range) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        const char *lines[] = {auth_h, accept_h, range_h};
        for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
                if (!lines[i])
                        continue;
                if (!(tmp = cu.slist_append(headers, lines[i]))) {
                        cu.slist_free_all(headers);
                        return psrun_error_errno(err, ENOMEM, "image");
                }
                headers = tmp;
        }
        c->errbuf[0] = '\0';
        cu.easy_setopt(h, CURLOPT_URL, url);
        cu.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        cu.easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        cu.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        cu.easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
        cu.easy_setopt(h, CURLOPT_USERAGENT, "psrun");
        cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
        cu.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        cu.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
        cu.easy_setopt(h, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_2TLS);
        cu.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        cu.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
        if (c->ca_file)
                cu.easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
        if (c->max_recv > 0)
                cu.easy_setopt(h, CURLOPT_MAX_RECV_SPEED_LARGE, (curl_off_t) c->max_recv);
        setopt_protocols(c, insecure);
        cu.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        cu.easy_setopt(h, CURLOPT_HEADERDATA, r);
        cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        cu.easy_setopt(h, CURLOPT_WRITEDATA, r);
        r->curl = h;
        r->status = 0;
        CURLcode code = cu.easy_perform(h);
        cu.slist_free_all(headers);
        cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        if (code == CURLE_OK)
                return 0;
        if (code == CURLE_WRITE_ERROR &&
            (r->write_errno || r->overflow || r->too_big || r->bad_range))
                return -EIO; /* the caller says which */
        const char *why = c->errbuf[0] ? c->errbuf : cu.easy_strerror(code);
        int errnum = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST
                             ? ECONNREFUSED
                     : code == CURLE_OPERATION_TIMEDOUT       ? ETIMEDOUT
                     : code == CURLE_PEER_FAILED_VERIFICATION ? EPERM
                                                              : EIO;
        char shown[160];
        return psrun_error_set(
                err, errnum, "image: %s: %s%s", c->name,
                code == CURLE_PEER_FAILED_VERIFICATION ? "TLS certificate not trusted: " : "",
                number_shown(why, shown, sizeof(shown)));
}

static char *url_for(const struct endpoint_state *e, const char *repo, const char *kind,
                     const char *what)
{
        char *url = NULL;
        if (asprintf(&url, "%s://%s/v2/%s/%s/%s", e->ep.insecure ? "http" : "https", e->ep.host,
                     repo, kind, what) < 0)
                return NULL;
        return url;
}

/* The registry's error document, {"errors":[{"code":..,"message":..}]},
 * in a few words. */
static void registry_error_text(const struct response *r, char *out, size_t size)
{
        out[0] = '\0';
        if (!r->body || !r->len)
                return;
        struct jdoc d;
        psrun_error e = {0};
        if (jdoc_parse(&d, r->body, r->len, "error", &e) < 0)
                return;
        jnode *errors = NULL;
        if (jdoc_get(&d, jdoc_root(&d), "errors", &errors, &e) >= 0 && jdoc_array_len(errors)) {
                jnode *first = jdoc_array_item(&d, errors, 0);
                const char *code = NULL, *msg = NULL;
                jdoc_get_string(&d, first, "code", &code, &e);
                jdoc_get_string(&d, first, "message", &msg, &e);
                char a[48], b[96];
                snprintf(out, size, "%s%s%s", code ? number_shown(code, a, sizeof(a)) : "",
                         code && msg ? ": " : "", msg ? number_shown(msg, b, sizeof(b)) : "");
        }
        jdoc_free(&d);
}

static int credentials(struct registry_client *c, const struct endpoint_state *e, char **basic,
                       psrun_error *err)
{
        *basic = NULL;
        _cleanup_free_ char *user = NULL, *pass = NULL;
        /* a mirror's credentials are its own host's entry */
        const char *key = e->ep.mirror ? e->ep.host : c->registry;
        int r = auth_find(key, c->auth_file, &user, &pass, err);
        if (r < 0 || !user)
                return r;
        _cleanup_free_ char *pair = NULL;
        if (asprintf(&pair, "%s:%s", user, pass) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        explicit_bzero(pass, strlen(pass));
        _cleanup_free_ char *b = base64_encode((unsigned char *) pair, strlen(pair));
        explicit_bzero(pair, strlen(pair));
        if (!b || asprintf(basic, "Basic %s", b) < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        explicit_bzero(b, strlen(b));
        return 0;
}

static void response_reset(struct response *r)
{
        free(r->body);
        r->body = NULL;
        r->len = 0;
        r->too_big = false;
}

/* A 401 answered: the challenge followed once. 0 when e->authorization is
 * now worth a retry. */
static int authenticate(struct registry_client *c, struct endpoint_state *e,
                        const struct response *r401, psrun_error *err)
{
        if (e->tried_credentials)
                return psrun_error_set(err, EACCES,
                                       "image: %s: %s refused the credentials (HTTP 401)", c->name,
                                       e->ep.host);
        e->tried_credentials = true;
        struct auth_challenge ch;
        int rc = auth_challenge_parse(r401->www_authenticate, &ch, err);
        if (rc < 0)
                return psrun_error_prefix(err, "%s: %s (HTTP 401)", c->name, e->ep.host);
        _cleanup_free_ char *basic = NULL;
        if ((rc = credentials(c, e, &basic, err)) < 0) {
                auth_challenge_free(&ch);
                return rc;
        }
        if (ch.scheme == AUTH_BASIC) {
                auth_challenge_free(&ch);
                if (!basic)
                        return psrun_error_set(err, EACCES,
                                               "image: %s: %s asks for credentials (HTTP 401) and "
                                               "no auth.json has an entry for it",
                                               c->name, e->ep.mirror ? e->ep.host : c->registry);
                free(e->authorization);
                e->authorization = TAKE_PTR(basic);
                return 0;
        }
        /* Bearer: GET realm?service=..&scope=.. */
        _cleanup_free_ char *scope_default = NULL;
        if (asprintf(&scope_default, "repository:%s:pull", c->repository) < 0) {
                auth_challenge_free(&ch);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        char *svc = ch.service ? cu.easy_escape(c->curl, ch.service, 0) : NULL;
        char *scope = cu.easy_escape(c->curl, ch.scope ? ch.scope : scope_default, 0);
        _cleanup_free_ char *url = NULL;
        int ok = asprintf(&url, "%s%s%s%s&scope=%s", ch.realm, strchr(ch.realm, '?') ? "&" : "?",
                          svc ? "service=" : "", svc ? svc : "", scope ? scope : "");
        if (svc)
                cu.free(svc);
        if (scope)
                cu.free(scope);
        bool realm_insecure = strncmp(ch.realm, "http://", 7) == 0;
        auth_challenge_free(&ch);
        if (ok < 0)
                return psrun_error_errno(err, ENOMEM, "image");
        /* a token server over plain HTTP is taken only for a registry
         * marked insecure: credentials are not sent in clear otherwise */
        if (realm_insecure && !e->ep.insecure)
                return psrun_error_set(err, EPERM,
                                       "image: %s: the token realm of %s is plain HTTP (the "
                                       "registry is not marked insecure)",
                                       c->name, e->ep.host);
        struct response tr = {.fd = -1, .max = AUTH_TOKEN_MAX};
        /* the token request is a request of its own: its Authorization is
         * the credentials, never a previous token */
        rc = perform(c, url, e->ep.insecure, basic, "application/json", NULL, &tr, err);
        if (rc < 0) {
                if (tr.too_big)
                        rc = psrun_error_set(err, EFBIG,
                                             "image: %s: the token answer is larger "
                                             "than %u bytes",
                                             c->name, AUTH_TOKEN_MAX);
                else
                        psrun_error_prefix(err, "token server");
                response_reset(&tr);
                return rc;
        }
        if (tr.status != 200) {
                rc = psrun_error_set(err, EACCES,
                                     "image: %s: the token server refused %s (HTTP %ld)", c->name,
                                     basic ? "the credentials" : "an anonymous pull", tr.status);
                response_reset(&tr);
                return rc;
        }
        _cleanup_free_ char *token = NULL;
        rc = auth_token_parse(tr.body, tr.len, &token, err);
        response_reset(&tr);
        if (rc < 0)
                return psrun_error_prefix(err, "%s", c->name);
        free(e->authorization);
        if (asprintf(&e->authorization, "Bearer %s", token) < 0) {
                e->authorization = NULL;
                return psrun_error_errno(err, ENOMEM, "image");
        }
        explicit_bzero(token, strlen(token));
        return 0;
}

/* GET kind/what from the endpoints in turn, following a 401 once per
 * endpoint. On return r holds the final answer of the endpoint that gave
 * one (2xx), or the error is set. */
static int get(struct registry_client *c, const char *kind, const char *what, const char *accept,
               const char *range, struct response *r, const char *label, psrun_error *err)
{
        int rc = -EIO;
        for (size_t i = c->current; i < c->n_eps; i++) {
                struct endpoint_state *e = &c->eps[i];
                bool last = i + 1 == c->n_eps;
                _cleanup_free_ char *url = url_for(e, c->repository, kind, what);
                if (!url)
                        return psrun_error_errno(err, ENOMEM, "image");
                for (int attempt = 0; attempt < 2; attempt++) {
                        response_reset(r);
                        rc = perform(c, url, e->ep.insecure, e->authorization, accept, range, r,
                                     err);
                        if (rc < 0)
                                break;
                        if (r->status == 401 && attempt == 0) {
                                rc = authenticate(c, e, r, err);
                                if (rc < 0)
                                        break;
                                continue;
                        }
                        break;
                }
                /* asked again with what the challenge wanted, still 401 */
                if (rc >= 0 && r->status == 401 && e->tried_credentials)
                        return psrun_error_set(
                                err, EACCES, "image: %s: %s refused the %s (HTTP 401)", c->name,
                                e->ep.host,
                                e->authorization && strncmp(e->authorization, "Basic ", 6) == 0
                                        ? "credentials"
                                        : "token for a pull");
                if (rc == -EIO && (r->write_errno || r->overflow || r->too_big || r->bad_range))
                        return rc; /* the caller names it; no other endpoint helps */
                /* bytes of a blob written: not mixed with another
                 * endpoint's (the next pull resumes them) */
                if (rc < 0 && r->written > 0)
                        return rc;
                if (rc >= 0 && r->status >= 200 && r->status < 300) {
                        c->current = i;
                        return 0;
                }
                if (rc >= 0) {
                        char text[160];
                        registry_error_text(r, text, sizeof(text));
                        int errnum = r->status == 404                       ? ENOENT
                                     : r->status == 401 || r->status == 403 ? EACCES
                                     : r->status == 429                     ? EAGAIN
                                                                            : EPROTO;
                        rc = psrun_error_set(err, errnum, "image: %s: %s %s: %s%sHTTP %ld from %s",
                                             c->name, label,
                                             r->status == 404 ? "not found" : "refused", text,
                                             text[0] ? " (" : "", r->status, e->ep.host);
                        if (text[0]) {
                                size_t l = strlen(err->msg);
                                if (l + 1 < sizeof(err->msg))
                                        memcpy(err->msg + l, ")", 2);
                        }
                }
                /* a mirror that fails is passed over; the registry's own
                 * answer is the one reported */
                if (!last && e->ep.mirror)
                        continue;
                return rc;
        }
        return rc;
}

int registry_get_manifest(struct registry_client *c, const char *reference, char **body,
                          size_t *len, char **content_type, char digest[DIGEST_STR_LEN + 1],
                          psrun_error *err)
{
        *body = NULL;
        *content_type = NULL;
        struct response r = {.fd = -1, .max = MANIFEST_MAX_BYTES};
        int rc = get(c, "manifests", reference, MANIFEST_ACCEPT, NULL, &r, "manifest", err);
        if (rc < 0) {
                if (r.too_big)
                        rc = psrun_error_set(err, EFBIG,
                                             "image: %s: the manifest is larger than %u bytes",
                                             c->name, MANIFEST_MAX_BYTES);
                response_reset(&r);
                return rc;
        }
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        if ((rc = sha256_new(&h, err)) < 0) {
                response_reset(&r);
                return rc;
        }
        char hex[SHA256_HEX_LEN + 1];
        sha256_update(h, r.body ? r.body : "", r.len);
        sha256_final_hex(h, hex);
        snprintf(digest, DIGEST_STR_LEN + 1, "sha256:%s", hex);
        bool by_digest = strncmp(reference, "sha256:", 7) == 0;
        if ((by_digest && strcmp(reference, digest) != 0) ||
            (r.docker_digest[0] && strncmp(r.docker_digest, "sha256:", 7) == 0 &&
             strcmp(r.docker_digest, digest) != 0)) {
                response_reset(&r);
                return psrun_error_set(err, EBADMSG,
                                       "image: %s: manifest %s from %s does not match its "
                                       "digest (it hashes to %s)",
                                       c->name, by_digest ? reference : r.docker_digest,
                                       registry_endpoint(c), digest);
        }
        if (!(*content_type = strdup(r.content_type))) {
                response_reset(&r);
                return psrun_error_errno(err, ENOMEM, "image");
        }
        *body = r.body ? r.body : strdup("");
        *len = r.len;
        if (!*body) {
                free(*content_type);
                *content_type = NULL;
                return psrun_error_errno(err, ENOMEM, "image");
        }
        return 0;
}

int registry_get_blob(struct registry_client *c, const char *digest, int64_t size, int fd,
                      off_t have, psrun_error *err)
{
        char want[SHA256_HEX_LEN + 1];
        int rc = digest_parse(digest, want, err);
        if (rc < 0)
                return rc;
        _cleanup_(sha256_freep) struct sha256 *h = NULL;
        if ((rc = sha256_new(&h, err)) < 0)
                return rc;
        if (have > size)
                have = 0;
        /* what an interrupted pull wrote is hashed again, then continued */
        if (have > 0) {
                _cleanup_free_ char *buf = malloc(1 << 20);
                if (!buf)
                        return psrun_error_errno(err, ENOMEM, "image");
                off_t off = 0;
                while (off < have) {
                        size_t want_n = (size_t) (have - off) < (1u << 20) ? (size_t) (have - off)
                                                                           : (1u << 20);
                        ssize_t n = pread(fd, buf, want_n, off);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0) {
                                have = off; /* shorter than it said: resume from here */
                                break;
                        }
                        sha256_update(h, buf, (size_t) n);
                        off += n;
                }
        }
        if (ftruncate(fd, have) < 0 || lseek(fd, have, SEEK_SET) < 0)
                return psrun_error_errno(err, errno, "image: %s: blob %s", c->name, digest);
        char range[48];
        snprintf(range, sizeof(range), "bytes=%lld-", (long long) have);
        struct response r = {.fd = fd, .max = 64u << 10, .hash = h, .base = have, .limit = size};
        rc = get(c, "blobs", digest, NULL, have > 0 && have < size ? range : NULL, &r, digest, err);
        response_reset(&r);
        if (rc < 0) {
                if (r.write_errno)
                        return psrun_error_errno(err, r.write_errno, "image: %s: writing blob %s",
                                                 c->name, digest);
                if (r.overflow)
                        return psrun_error_set(err, EBADMSG,
                                               "image: %s: blob %s is longer than the %lld bytes "
                                               "its descriptor says: refused",
                                               c->name, digest, (long long) size);
                if (r.bad_range)
                        return psrun_error_set(err, EPROTO,
                                               "image: %s: blob %s: the server resumed at another "
                                               "offset than asked",
                                               c->name, digest);
                return rc;
        }
        /* a 206 or 200 with no body byte yet: blob_start never ran */
        if (!r.started && r.status == 200 && have > 0) {
                if (ftruncate(fd, 0) < 0)
                        return psrun_error_errno(err, errno, "image: %s: blob %s", c->name, digest);
                char discard[SHA256_HEX_LEN + 1];
                sha256_final_hex(h, discard);
                r.base = 0;
        }
        int64_t total = r.base + r.written;
        if (total != size)
                return psrun_error_set(err, EBADMSG,
                                       "image: %s: blob %s is %lld bytes, its descriptor says "
                                       "%lld: refused",
                                       c->name, digest, (long long) total, (long long) size);
        char got[SHA256_HEX_LEN + 1];
        sha256_final_hex(h, got);
        if (strcmp(got, want) != 0)
                return psrun_error_set(err, EBADMSG,
                                       "image: %s: blob %s from %s does not match its digest "
                                       "(it hashes to sha256:%s): refused",
                                       c->name, digest, registry_endpoint(c), got);
        return 0;
}
