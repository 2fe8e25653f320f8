/* SPDX-License-Identifier: MIT */
/*
 * `psrun image ...`: the image store from the command line (docs/images.md),
 * built on the public API (include/psrun.h: psrun_image_*) only. The
 * subcommands are rows of the command table (cli/cli.h), as `psrun
 * session`'s are; every one takes --store DIR (default
 * psrun_image_store_default()) as its first option, and prints a human
 * table or, with --json, one JSON document on stdout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/json.h"
#include "common/number.h"
#include "common/units.h"

/* Every table's first option: the store. */
#define OPT_STORE 0
#define STORE_OPTION                                                                               \
        {                                                                                          \
                "store", 0, "DIR",                                                                 \
                        "the image store (default $PSRUN_IMAGE_STORE, else /var/lib/psrun/images)" \
        }

static void store_option(const struct cli_call *c, psrun_image_options *o)
{
        o->store = c->value[OPT_STORE];
}

/* --store must be absolute: the same store whatever the working directory. */
static int check_store(struct cli_call *c, psrun_error *err)
{
        char shown[128];
        const char *s = c->value[OPT_STORE];
        if (s && s[0] != '/')
                return cli_usage_error(c, err, "--store: `%s` is not an absolute path",
                                       number_shown(s, shown, sizeof(shown)));
        return 0;
}

/* ---- printing ---- */

/* 1093749 bytes as "1.0 MiB". */
static void human_size(int64_t bytes, char *buf, size_t size)
{
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = (double) (bytes < 0 ? 0 : bytes);
        size_t u = 0;
        while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, size, "%" PRId64 " B", bytes < 0 ? 0 : bytes);
        else
                snprintf(buf, size, "%.1f %s", v, units[u]);
}

static void json_strv(char *const *v, size_t n)
{
        if (!v) {
                fputs("null", stdout);
                return;
        }
        fputc('[', stdout);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        fputc(',', stdout);
                json_write_string(stdout, v[i]);
        }
        fputc(']', stdout);
}

static void json_str_or_null(const char *s)
{
        if (s)
                json_write_string(stdout, s);
        else
                fputs("null", stdout);
}

static void json_info(const psrun_image_info *in)
{
        fputs("{\"reference\":", stdout);
        json_write_string(stdout, in->reference);
        fputs(",\"digest\":", stdout);
        json_write_string(stdout, in->digest);
        fputs(",\"index\":", stdout);
        json_str_or_null(in->index[0] ? in->index : NULL);
        fputs(",\"media_type\":", stdout);
        json_str_or_null(in->media_type);
        fputs(",\"config\":{\"digest\":", stdout);
        json_write_string(stdout, in->config);
        fputs(",\"os\":", stdout);
        json_str_or_null(in->os);
        fputs(",\"architecture\":", stdout);
        json_str_or_null(in->architecture);
        fputs(",\"created\":", stdout);
        json_str_or_null(in->created);
        fputs(",\"Env\":", stdout);
        json_strv(in->env, in->n_env);
        fputs(",\"Entrypoint\":", stdout);
        json_strv(in->entrypoint, in->n_entrypoint);
        fputs(",\"Cmd\":", stdout);
        json_strv(in->cmd, in->n_cmd);
        fputs(",\"WorkingDir\":", stdout);
        json_str_or_null(in->working_dir);
        fputs(",\"User\":", stdout);
        json_str_or_null(in->user);
        printf("},\"size\":%" PRId64 ",\"unpacked\":%s,\"owners\":", in->size,
               in->unpacked ? "true" : "false");
        json_write_string(stdout, in->owners);
        fputs(",\"layers\":[", stdout);
        for (size_t i = 0; i < in->n_layers; i++) {
                printf("%s{\"digest\":", i ? "," : "");
                json_write_string(stdout, in->layers[i].digest);
                fputs(",\"media_type\":", stdout);
                json_str_or_null(in->layers[i].media_type);
                printf(",\"size\":%" PRId64 "}", in->layers[i].size);
        }
        fputc(']', stdout);
}

/* What a pull or an import did, in its JSON object. */
static void json_pulled(const psrun_image_info *in)
{
        json_info(in);
        printf(",\"fetched\":{\"blobs\":%u,\"bytes\":%" PRId64
               ",\"present\":%u,\"resumed\":%u,\"layers_unpacked\":%u,\"network\":%s}}\n",
               in->blobs_fetched, in->bytes_fetched, in->blobs_present, in->blobs_resumed,
               in->layers_unpacked, in->network ? "true" : "false");
}

static void print_pulled(const psrun_image_info *in, bool quiet)
{
        if (quiet) {
                printf("%s\n", in->digest);
                return;
        }
        char size[32];
        human_size(in->bytes_fetched, size, sizeof(size));
        printf("%s\nDigest: %s\n", in->reference, in->digest);
        if (in->blobs_fetched == 0)
                printf("Status: up to date, nothing fetched (%u blobs present%s)\n",
                       in->blobs_present, in->network ? "" : ", no registry asked");
        else
                printf("Status: fetched %u blob%s (%s)%s, %u present, %u layer%s unpacked\n",
                       in->blobs_fetched, in->blobs_fetched == 1 ? "" : "s", size,
                       in->blobs_resumed ? " resuming an interrupted pull" : "", in->blobs_present,
                       in->layers_unpacked, in->layers_unpacked == 1 ? "" : "s");
        if (strcmp(in->owners, "one id") == 0)
                printf("Owners: one id (no /etc/subuid range: every file is this user's, "
                       "whatever owner the image gives it)\n");
        else if (strcmp(in->owners, "shifted") != 0)
                printf("Owners: %s\n", in->owners);
}

/* ---- pull, import ---- */

enum {
        PL_STORE,
        PL_REGISTRIES,
        PL_AUTHFILE,
        PL_CA,
        PL_MIRROR,
        PL_INSECURE,
        PL_MAX_SIZE,
        PL_NO_UNPACK,
        PL_JSON,
        PL_QUIET
};
static const struct option_def pull_options[] = {
        [PL_STORE] = STORE_OPTION,
        [PL_REGISTRIES] = {"registries", 0, "FILE",
                           "mirrors, insecure registries, CA (JSON, docs/images.md)"},
        [PL_AUTHFILE] = {"authfile", 0, "FILE",
                         "credentials (auth.json format; default: podman's and Docker's files)"},
        [PL_CA] = {"ca-file", 0, "FILE", "verify TLS against this CA, not the system's"},
        [PL_MIRROR] = {"mirror", 0, "[REGISTRY=]MIRROR",
                       "try MIRROR first (default registry docker.io; repeatable)"},
        [PL_INSECURE] = {"insecure", 0, "HOST[:PORT]", "reach HOST over plain HTTP (repeatable)"},
        [PL_MAX_SIZE] = {"max-size", 0, "SIZE", "unpacked bytes a layer may declare (default 8G)"},
        [PL_NO_UNPACK] = {"no-unpack", 0, NULL, "fetch and verify only, leave the layers packed"},
        [PL_JSON] = {"json", 0, NULL, "print the image and what was fetched as one JSON object"},
        [PL_QUIET] = {"quiet", 'q', NULL, "print the digest only"},
        {0},
};

enum { IM_STORE, IM_MAX_SIZE, IM_NO_UNPACK, IM_JSON, IM_QUIET };
static const struct option_def import_options[] = {
        [IM_STORE] = STORE_OPTION,
        [IM_MAX_SIZE] = {"max-size", 0, "SIZE", "unpacked bytes a layer may declare (default 8G)"},
        [IM_NO_UNPACK] = {"no-unpack", 0, NULL, "copy and verify only, leave the layers packed"},
        [IM_JSON] = {"json", 0, NULL, "print the image and what was copied as one JSON object"},
        [IM_QUIET] = {"quiet", 'q', NULL, "print the digest only"},
        {0},
};

/* --store, --max-size, --no-unpack: at these indices of c's table. */
static int store_setup(struct cli_call *c, int max_size, int no_unpack, psrun_image_options *o,
                       psrun_error *err)
{
        char shown[128];
        int r = check_store(c, err);
        if (r < 0)
                return r;
        store_option(c, o);
        o->fetch_only = c->value[no_unpack] != NULL;
        if (c->value[max_size] &&
            (parse_size(c->value[max_size], &o->max_size) < 0 || o->max_size == 0))
                return cli_usage_error(c, err, "--max-size: `%s` is not a size (use e.g. 8G, 512M)",
                                       number_shown(c->value[max_size], shown, sizeof(shown)));
        return 0;
}

/* The options of a pull as psrun_image_options; the lists point into c. */
static int pull_setup(struct cli_call *c, psrun_image_options *o, const char ***mirrors,
                      const char ***insecure, psrun_error *err)
{
        int r = store_setup(c, PL_MAX_SIZE, PL_NO_UNPACK, o, err);
        if (r < 0)
                return r;
        o->registries_file = c->value[PL_REGISTRIES];
        o->auth_file = c->value[PL_AUTHFILE];
        o->ca_file = c->value[PL_CA];
        const int idx[2] = {PL_MIRROR, PL_INSECURE};
        const char ***out[2] = {mirrors, insecure};
        for (int k = 0; k < 2; k++) {
                size_t n = c->n_list[idx[k]];
                if (!n)
                        continue;
                const char **v = calloc(n + 1, sizeof(char *));
                if (!v)
                        return psrun_error_errno(err, ENOMEM, "options");
                for (size_t i = 0; i < n; i++)
                        v[i] = c->list[idx[k]][i];
                *out[k] = v;
        }
        o->mirrors = *mirrors;
        o->insecure = *insecure;
        return 0;
}

static int print_result(psrun_image_info *info, bool json, bool quiet)
{
        if (json)
                json_pulled(info);
        else
                print_pulled(info, quiet);
        psrun_image_info_free(info);
        return 0;
}

static int sub_pull(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        _cleanup_free_ const char **mirrors = NULL, **insecure = NULL;
        int r = pull_setup(c, &o, &mirrors, &insecure, err);
        if (r < 0)
                return r;
        psrun_image_info info;
        if ((r = psrun_image_pull(c->args[0], &o, &info, err)) < 0)
                return r;
        return print_result(&info, c->value[PL_JSON], c->value[PL_QUIET]);
}

static int sub_import(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        int r = store_setup(c, IM_MAX_SIZE, IM_NO_UNPACK, &o, err);
        if (r < 0)
                return r;
        psrun_image_info info;
        if ((r = psrun_image_import(c->args[0], &o, &info, err)) < 0)
                return r;
        return print_result(&info, c->value[IM_JSON], c->value[IM_QUIET]);
}

/* ---- ls, inspect ---- */

enum { LS_STORE, LS_JSON, LS_QUIET };
static const struct option_def ls_options[] = {
        [LS_STORE] = STORE_OPTION,
        [LS_JSON] = {"json", 0, NULL, "one JSON array on stdout"},
        [LS_QUIET] = {"quiet", 'q', NULL, "the references only, one a line"},
        {0},
};

static int sub_ls(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        int r = check_store(c, err);
        if (r < 0)
                return r;
        store_option(c, &o);
        psrun_image_info *list = NULL;
        size_t n = 0;
        if ((r = psrun_image_list(&o, &list, &n, err)) < 0)
                return r;
        bool json = c->value[LS_JSON] != NULL, quiet = c->value[LS_QUIET] != NULL;
        if (json)
                fputc('[', stdout);
        else if (!quiet)
                printf("%-48s %-19s %-6s %-9s %s\n", "REFERENCE", "DIGEST", "LAYERS", "SIZE",
                       "UNPACKED");
        for (size_t i = 0; i < n; i++) {
                const psrun_image_info *in = &list[i];
                if (json) {
                        if (i)
                                fputc(',', stdout);
                        json_info(in);
                        fputc('}', stdout);
                } else if (quiet) {
                        printf("%s\n", in->reference);
                } else {
                        char size[32];
                        human_size(in->size, size, sizeof(size));
                        printf("%-48s %-19.19s %-6zu %-9s %s\n", in->reference, in->digest,
                               in->n_layers, size, in->unpacked ? "yes" : "no");
                }
        }
        if (json)
                fputs("]\n", stdout);
        psrun_image_list_free(list, n);
        return 0;
}

enum { IN_STORE, IN_JSON };
static const struct option_def inspect_options[] = {
        [IN_STORE] = STORE_OPTION,
        [IN_JSON] = {"json", 0, NULL, "one JSON object on stdout"},
        {0},
};

static void print_strv(const char *label, char *const *v, size_t n)
{
        printf("%-11s", label);
        if (!v)
                fputs(" -", stdout);
        for (size_t i = 0; i < n; i++) {
                fputc(' ', stdout);
                json_write_string(stdout, v[i]);
        }
        fputc('\n', stdout);
}

static int sub_inspect(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        int r = check_store(c, err);
        if (r < 0)
                return r;
        store_option(c, &o);
        psrun_image_info in;
        if ((r = psrun_image_inspect(c->args[0], &o, &in, err)) < 0)
                return r;
        if (c->value[IN_JSON]) {
                json_info(&in);
                fputs("}\n", stdout);
                psrun_image_info_free(&in);
                return 0;
        }
        char size[32];
        human_size(in.size, size, sizeof(size));
        printf("Reference:  %s\nDigest:     %s\n", in.reference, in.digest);
        if (in.index[0])
                printf("Index:      %s\n", in.index);
        printf("MediaType:  %s\nConfig:     %s\nPlatform:   %s/%s\nCreated:    %s\n",
               in.media_type ? in.media_type : "-", in.config, in.os ? in.os : "-",
               in.architecture ? in.architecture : "-", in.created ? in.created : "-");
        printf("User:       %s\nWorkingDir: %s\n", in.user && in.user[0] ? in.user : "-",
               in.working_dir && in.working_dir[0] ? in.working_dir : "-");
        print_strv("Entrypoint:", in.entrypoint, in.n_entrypoint);
        print_strv("Cmd:", in.cmd, in.n_cmd);
        printf("Env:\n");
        for (size_t i = 0; i < in.n_env; i++)
                printf("  %s\n", in.env[i]);
        printf("Size:       %s (packed), %s\nOwners:     %s\nLayers:\n", size,
               in.unpacked ? "unpacked" : "not unpacked", in.owners);
        for (size_t i = 0; i < in.n_layers; i++) {
                human_size(in.layers[i].size, size, sizeof(size));
                printf("  %s %9s %s\n", in.layers[i].digest, size,
                       in.layers[i].media_type ? in.layers[i].media_type : "-");
        }
        psrun_image_info_free(&in);
        return 0;
}

/* ---- rm, prune ---- */

enum { RM_STORE };
static const struct option_def rm_options[] = {
        [RM_STORE] = STORE_OPTION,
        {0},
};

static int sub_rm(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        int r = check_store(c, err);
        if (r < 0)
                return r;
        store_option(c, &o);
        /* every one named is tried; the first failure is the report */
        int first = 0;
        for (int i = 0; i < c->n_args; i++) {
                psrun_error e = {0};
                r = psrun_image_remove(c->args[i], &o, first < 0 ? &e : err);
                if (r < 0 && first == 0)
                        first = r;
                else if (r >= 0)
                        printf("%s\n", c->args[i]);
        }
        return first;
}

enum { PR_STORE, PR_JSON };
static const struct option_def prune_options[] = {
        [PR_STORE] = STORE_OPTION,
        [PR_JSON] = {"json", 0, NULL, "one JSON object on stdout"},
        {0},
};

static int sub_prune(struct cli_call *c, psrun_error *err)
{
        psrun_image_options o = {0};
        int r = check_store(c, err);
        if (r < 0)
                return r;
        store_option(c, &o);
        psrun_image_prune_stats st;
        if ((r = psrun_image_prune(&o, &st, err)) < 0)
                return r;
        if (c->value[PR_JSON]) {
                printf("{\"blobs_removed\":%u,\"layers_removed\":%u,\"tmp_removed\":%u,"
                       "\"kept_in_use\":%u,\"bytes_removed\":%" PRId64 "}\n",
                       st.blobs_removed, st.layers_removed, st.tmp_removed, st.kept_in_use,
                       st.bytes_removed);
                return 0;
        }
        char size[32];
        human_size(st.bytes_removed, size, sizeof(size));
        printf("removed %u blob%s, %u layer%s, %u temporary entr%s (%s); %u kept in use\n",
               st.blobs_removed, st.blobs_removed == 1 ? "" : "s", st.layers_removed,
               st.layers_removed == 1 ? "" : "s", st.tmp_removed, st.tmp_removed == 1 ? "y" : "ies",
               size, st.kept_in_use);
        return 0;
}

static const struct command image_commands[] = {
        {"pull", sub_pull,
         "[--store DIR] [--registries FILE] [--authfile FILE] [--mirror M]... [--insecure H]... "
         "[--json|-q]",
         "REFERENCE", 1, 1, "pull an image from a registry into the store", pull_options, 0,
         "REFERENCE: [host[:port]/]path[:tag][@sha256:DIGEST]; `python:3.11-slim` is\n"
         "docker.io/library/python:3.11-slim. Every blob is verified against its digest;\n"
         "what the store has is not fetched again. Credentials come from auth.json /\n"
         "config.json files only, never from the command line.\n",
         NULL},
        {"ls", sub_ls, "[--store DIR] [--json|-q]", "", 0, 0, "list the images in the store",
         ls_options, 0, NULL, NULL},
        {"inspect", sub_inspect, "[--store DIR] [--json]", "REFERENCE", 1, 1,
         "show an image: its manifest, config (Env, WorkingDir, User...) and layers",
         inspect_options, 0, NULL, NULL},
        {"rm", sub_rm, "[--store DIR]", "REFERENCE...", 1, CLI_UNBOUNDED,
         "remove images from the store (their blobs stay until prune)", rm_options, 0, NULL, NULL},
        {"prune", sub_prune, "[--store DIR] [--json]", "", 0, 0,
         "remove the blobs and layers no image refers to", prune_options, 0,
         "A layer a live sandbox or session holds is kept whatever refers to it. Prune\n"
         "waits for running pulls.\n",
         NULL},
        {"import", sub_import, "[--store DIR] [--no-unpack] [--json|-q]", "SOURCE", 1, 1,
         "import a local image: oci:DIR[:TAG] or docker-archive:FILE", import_options, 0,
         "oci:DIR[:TAG] is an OCI image layout (TAG after the last `:`); docker-archive:FILE\n"
         "a `docker save` / `podman save` tar of one image. Recorded under that name with\n"
         "the path made absolute; every blob is verified as it is copied.\n",
         NULL},
};

const struct command_set image_command_set = {
        .parent = "image",
        .commands = image_commands,
        .n_commands = ARRAY_SIZE(image_commands),
        .notes = "The store is content-addressed: each layer is unpacked once and shared by\n"
                 "every image that has it (docs/images.md). Its root: --store DIR, else\n"
                 "$PSRUN_IMAGE_STORE, else /var/lib/psrun/images. Exit status: 0, or 125 when\n"
                 "psrun failed (one line on stderr).\n",
        .fail = cli_fail,
};
