/* SPDX-License-Identifier: MIT */
/*
 * The image tier's driver (tests/image/run.sh): the store and the registry
 * client through libpsrun's internal archive, one operation per call, as
 * `psrun image ...` will run them. Prints what the tier checks: one line
 * of results on stdout, the error's one line on stderr (exit 1).
 *
 *   imgtool pull STORE REF [--registries F] [--auth F] [--ca F] [--rate B/s] [--unpack]
 *   imgtool import-oci STORE DIR [TAG] [--unpack]
 *   imgtool lookup STORE REF
 *   imgtool rm STORE REF
 *   imgtool prune STORE
 *   imgtool hold STORE REF         (holds the layers until stdin closes)
 *   imgtool sha-bench FILE         (MB/s of each SHA-256 implementation)
 *   imgtool seed KEY=VALUE... -- ARGV...  (a session of those keys, public API: seed.c)
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/error.h"
#include "image/digest.h"
#include "image/oci-layout.h"
#include "image/registries.h"
#include "image/registry.h"
#include "image/store.h"
#include "seed.h"

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(const psrun_error *err)
{
        fprintf(stderr, "%s\n", err->msg);
        return 1;
}

static void print_record(const struct image_record *rec)
{
        printf(" manifest=%s index=%s config=%s layers=%zu unpacked=%d", rec->manifest,
               rec->index ? rec->index : "-", rec->config.digest, rec->n_layers, rec->unpacked);
        for (size_t i = 0; i < rec->n_layers; i++)
                printf(" layer=%s", rec->layers[i].digest);
}

static const char *opt(int argc, char **argv, const char *name)
{
        for (int i = 0; i + 1 < argc; i++)
                if (strcmp(argv[i], name) == 0)
                        return argv[i + 1];
        return NULL;
}

static bool flag(int argc, char **argv, const char *name)
{
        for (int i = 0; i < argc; i++)
                if (strcmp(argv[i], name) == 0)
                        return true;
        return false;
}

static int cmd_pull(struct image_store *s, int argc, char **argv)
{
        psrun_error err = {0};
        struct registries regs = {0};
        const char *conf = opt(argc, argv, "--registries");
        if (conf && registries_load(&regs, conf, &err) < 0)
                return fail(&err);
        const char *rate = opt(argc, argv, "--rate");
        struct registry_options ro = {
                .registries = &regs,
                .auth_file = opt(argc, argv, "--auth"),
                .ca_file = opt(argc, argv, "--ca"),
                .max_recv_bytes_per_s = rate ? atol(rate) : 0,
        };
        struct store_pull_options po = {.registry = &ro,
                                        .fetch_only = !flag(argc, argv, "--unpack")};
        struct image_record rec;
        struct store_pull_stats st;
        double t0 = now_ms();
        int r = image_store_pull(s, argv[3], &po, &rec, &st, &err);
        double t1 = now_ms();
        registries_free(&regs);
        if (r < 0)
                return fail(&err);
        printf("fetched=%u present=%u resumed=%u network=%d ms=%.1f", st.blobs_fetched,
               st.blobs_present, st.blobs_resumed, st.network, t1 - t0);
        print_record(&rec);
        printf("\n");
        image_record_free(&rec);
        return 0;
}

static int cmd_import(struct image_store *s, int argc, char **argv)
{
        psrun_error err = {0};
        const char *tag = argc > 4 && argv[4][0] != '-' ? argv[4] : NULL;
        struct image_record rec;
        struct store_pull_stats st;
        if (image_store_import_oci(s, argv[3], tag, NULL, !flag(argc, argv, "--unpack"), &rec, &st,
                                   &err) < 0)
                return fail(&err);
        printf("fetched=%u present=%u reference=%s", st.blobs_fetched, st.blobs_present,
               rec.reference);
        print_record(&rec);
        printf("\n");
        image_record_free(&rec);
        return 0;
}

static int cmd_sha_bench(const char *file)
{
        for (int portable = 0; portable < 2; portable++) {
                sha256_force_portable(portable);
                _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        perror(file);
                        return 1;
                }
                off_t size = lseek(fd, 0, SEEK_END);
                lseek(fd, 0, SEEK_SET);
                char hex[SHA256_HEX_LEN + 1];
                psrun_error err = {0};
                double t0 = now_ms();
                if (sha256_fd(fd, hex, &err) < 0)
                        return fail(&err);
                double ms = now_ms() - t0;
                printf("%s %s %.0f MB/s\n", sha256_implementation(), hex,
                       (double) size / 1e6 / (ms / 1e3));
        }
        return 0;
}

int main(int argc, char **argv)
{
        if (argc >= 2 && strcmp(argv[1], "seed") == 0)
                return seed_main(argc - 2, argv + 2);
        if (argc >= 3 && strcmp(argv[1], "sha-bench") == 0)
                return cmd_sha_bench(argv[2]);
        if (argc < 3) {
                fprintf(stderr, "usage: imgtool pull|import-oci|lookup|rm|prune|hold STORE ...\n");
                return 2;
        }
        psrun_error err = {0};
        _cleanup_(image_store_closep) struct image_store *s = NULL;
        if (image_store_open(argv[2], &s, &err) < 0)
                return fail(&err);
        const char *cmd = argv[1];
        if (strcmp(cmd, "pull") == 0 && argc >= 4)
                return cmd_pull(s, argc, argv);
        if (strcmp(cmd, "import-oci") == 0 && argc >= 4)
                return cmd_import(s, argc, argv);
        if (strcmp(cmd, "prune") == 0) {
                struct store_prune_stats st;
                if (image_store_prune(s, &st, &err) < 0)
                        return fail(&err);
                printf("blobs_removed=%u layers_removed=%u tmp_removed=%u kept_in_use=%u\n",
                       st.blobs_removed, st.layers_removed, st.tmp_removed, st.kept_in_use);
                return 0;
        }
        if (argc < 4) {
                fprintf(stderr, "imgtool: %s needs a reference\n", cmd);
                return 2;
        }
        if (strcmp(cmd, "rm") == 0)
                return image_store_remove(s, argv[3], &err) < 0 ? fail(&err) : 0;
        struct image_record rec;
        if (image_store_lookup(s, argv[3], &rec, &err) < 0)
                return fail(&err);
        if (strcmp(cmd, "lookup") == 0) {
                printf("reference=%s", rec.reference);
                print_record(&rec);
                printf("\n");
        } else if (strcmp(cmd, "hold") == 0) {
                struct image_hold h;
                if (image_store_hold(s, &rec, &h, &err) < 0) {
                        image_record_free(&rec);
                        return fail(&err);
                }
                printf("held %zu\n", h.n);
                fflush(stdout);
                char c;
                while (read(0, &c, 1) > 0)
                        ;
                image_hold_release(&h);
        }
        image_record_free(&rec);
        return 0;
}
