/* SPDX-License-Identifier: MIT */
/*
 * `psrun features` and `psrun spec`. The features document is read back
 * with libyaml and every name in it is held against the table it claims to
 * describe (the config.json parser's, or seccomp_compile() itself). Both spec
 * variants are read back with oci_config_parse: that keeps `psrun spec` and
 * the parser in agreement.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>
#include <yaml.h>

#include "common/cleanup.h"
#include "policy/caps.h"
#include "policy/seccomp.h"
#include "runtime/oci/config.h"
#include "runtime/oci/features.h"
#include "runtime/oci/state.h"

TestSuite(oci_features, .timeout = 30);
TestSuite(oci_spec, .timeout = 30);

#define CAP(n) (1ULL << (n))

/* ---- helpers ---- */

/* The document a print function writes, as a malloc'ed string. */
static char *capture(int (*print)(FILE *, bool, psrun_error *), bool arg)
{
        char *buf = NULL;
        size_t len = 0;
        psrun_error err = {0};
        FILE *f = open_memstream(&buf, &len);

        cr_assert_not_null(f);
        int r = print(f, arg, &err);
        cr_assert_eq(r, 0, "%d: %s", r, err.msg);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

static int print_features(FILE *f, bool unused, psrun_error *err)
{
        return oci_features_print(f, err);
}

struct doc {
        yaml_document_t doc;
        char *text;
};

static void doc_load(struct doc *d, char *text)
{
        yaml_parser_t parser;

        d->text = text;
        cr_assert(yaml_parser_initialize(&parser));
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, strlen(text));
        cr_assert(yaml_parser_load(&parser, &d->doc), "not JSON: %s at line %zu", parser.problem,
                  parser.problem_mark.line + 1);
        yaml_parser_delete(&parser);
        cr_assert_not_null(yaml_document_get_root_node(&d->doc), "empty document");
}

static void doc_free(struct doc *d)
{
        yaml_document_delete(&d->doc);
        free(d->text);
}

static const char *scalar(const yaml_node_t *n)
{
        cr_assert_eq(n->type, YAML_SCALAR_NODE);
        return (const char *) n->data.scalar.value;
}

/* The value at a path of object keys, separated by '/' since keys may hold
 * dots ("annotations/io.github.psrun.version"). */
static yaml_node_t *at(struct doc *d, const char *path)
{
        yaml_node_t *node = yaml_document_get_root_node(&d->doc);
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        for (char *key = strtok_r(copy, "/", &save); key; key = strtok_r(NULL, "/", &save)) {
                cr_assert_eq(node->type, YAML_MAPPING_NODE, "%s: not an object at %s", path, key);
                yaml_node_t *found = NULL;
                for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
                     p < node->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(&d->doc, p->key);
                        if (strcmp(scalar(k), key) == 0) {
                                cr_assert_null(found, "%s: duplicate key %s", path, key);
                                found = yaml_document_get_node(&d->doc, p->value);
                        }
                }
                cr_assert_not_null(found, "%s: no key %s", path, key);
                node = found;
        }
        return node;
}

static const char *at_string(struct doc *d, const char *path)
{
        yaml_node_t *n = at(d, path);

        cr_assert_eq(n->data.scalar.style, YAML_DOUBLE_QUOTED_SCALAR_STYLE, "%s: not a string",
                     path);
        return scalar(n);
}

static bool at_bool(struct doc *d, const char *path)
{
        const char *v = scalar(at(d, path));

        cr_assert(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "%s: %s", path, v);
        return strcmp(v, "true") == 0;
}

/* The strings of the array at path, NULL-terminated, each once. */
struct strlist {
        const char *items[256];
        size_t n;
};

static void at_strings(struct doc *d, const char *path, struct strlist *out)
{
        yaml_node_t *seq = at(d, path);

        cr_assert_eq(seq->type, YAML_SEQUENCE_NODE, "%s: not an array", path);
        out->n = 0;
        for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top;
             i++) {
                yaml_node_t *n = yaml_document_get_node(&d->doc, *i);
                cr_assert_eq(n->data.scalar.style, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
                cr_assert_lt(out->n, ARRAY_SIZE(out->items) - 1);
                const char *s = scalar(n);
                for (size_t j = 0; j < out->n; j++)
                        cr_assert_str_neq(out->items[j], s, "%s: %s twice", path, s);
                out->items[out->n++] = s;
        }
        out->items[out->n] = NULL;
}

static bool has(const struct strlist *l, const char *s)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i], s) == 0)
                        return true;
        return false;
}

static void load_features(struct doc *d)
{
        doc_load(d, capture(print_features, false));
}

/* A profile that allows everything, for asking seccomp_compile() whether it
 * takes an action, an architecture or a flag. */
static int try_compile(enum seccomp_action_kind action, const char *arch, unsigned flags,
                       psrun_error *err)
{
        struct seccomp_program prog = {0};
        const char *const arches[] = {arch};
        struct seccomp_profile p = {
                .default_action = {.kind = action},
                .badarch_action = {.kind = SECCOMP_ACT_KILL_PROCESS_},
                .architectures = arch ? arches : NULL,
                .n_architectures = arch ? 1 : 0,
                .flags = flags,
                /* As an OCI config with linux.seccomp.listenerPath has it:
                 * SCMP_ACT_NOTIFY compiles only then. */
                .notify = action == SECCOMP_ACT_NOTIFY_,
        };
        int r = seccomp_compile(&p, &prog, err);
        seccomp_program_free(&prog);
        return r;
}

/* ---- features ---- */

Test(oci_features, json_with_the_spec_keys)
{
        struct doc d;

        load_features(&d);
        cr_assert_str_eq(at_string(&d, "ociVersionMin"), "1.0.0");
        cr_assert_str_eq(at_string(&d, "ociVersionMax"), OCI_STATE_SPEC_VERSION);
        cr_assert(at_bool(&d, "linux/cgroup/v1"));
        cr_assert(at_bool(&d, "linux/cgroup/v2"));
        cr_assert_not(at_bool(&d, "linux/cgroup/systemd"));
        cr_assert_not(at_bool(&d, "linux/cgroup/systemdUser"));
        cr_assert_not(at_bool(&d, "linux/cgroup/rdma"));
        cr_assert(at_bool(&d, "linux/seccomp/enabled"));
        cr_assert(at_bool(&d, "linux/apparmor/enabled"));
        cr_assert_not(at_bool(&d, "linux/selinux/enabled"));
        cr_assert_not(at_bool(&d, "linux/intelRdt/enabled"));
        cr_assert(at_bool(&d, "linux/mountExtensions/idmap/enabled"));
        cr_assert_str_eq(at_string(&d, "annotations/io.github.psrun.version"), psrun_version());
        doc_free(&d);
}

/* runc's layout (a 4-space json.Encoder), so diffs against runc read well;
 * and plain JSON: libyaml would also take YAML, so look at the text. */
Test(oci_features, laid_out_like_runc)
{
        _cleanup_free_ char *text = capture(print_features, false);

        cr_assert(strncmp(text, "{\n    \"ociVersionMin\": \"1.0.0\",\n", 32) == 0, "%.60s", text);
        cr_assert(strstr(text, "\n        \"namespaces\": [\n            \""));
        cr_assert(strstr(text, "\"linux\": {"));
        cr_assert_null(strchr(text, '\t'));
        cr_assert_null(strchr(text, '\''));
        size_t len = strlen(text);
        cr_assert(len > 2 && strcmp(text + len - 2, "}\n") == 0);
}

Test(oci_features, every_hook)
{
        struct doc d;
        struct strlist hooks;

        load_features(&d);
        at_strings(&d, "hooks", &hooks);
        cr_assert_eq(hooks.n, _OCI_HOOK_MAX);
        for (int k = 0; k < _OCI_HOOK_MAX; k++)
                cr_assert(has(&hooks, oci_hook_kind_to_string(k)), "%d", k);
        cr_assert(has(&hooks, "createRuntime"));
        doc_free(&d);
}

Test(oci_features, every_mount_option_the_parser_knows)
{
        struct doc d;
        struct strlist opts;
        size_t n = 0;

        load_features(&d);
        at_strings(&d, "mountOptions", &opts);
        for (const char *name; (name = oci_mount_option_name(n)); n++)
                cr_assert(has(&opts, name), "%s missing", name);
        cr_assert_eq(opts.n, n);
        cr_assert(has(&opts, "rbind"));
        cr_assert(has(&opts, "rro"));
        doc_free(&d);
}

Test(oci_features, namespaces_round_trip)
{
        struct doc d;
        struct strlist ns;

        load_features(&d);
        at_strings(&d, "linux/namespaces", &ns);
        cr_assert_geq(ns.n, 7);
        for (size_t i = 0; i < ns.n; i++) {
                int flag = oci_namespace_from_string(ns.items[i]);
                cr_assert_gt(flag, 0, "%s", ns.items[i]);
                cr_assert_str_eq(oci_namespace_to_string(flag), ns.items[i]);
        }
        cr_assert(has(&ns, "pid"));
        cr_assert(has(&ns, "network"));
        cr_assert(has(&ns, "user"));
        doc_free(&d);
}

/* Each capability listed is one the parser takes (checked by parsing them
 * all as a bounding set), and each one this kernel has is listed. */
Test(oci_features, capabilities_the_parser_and_kernel_know)
{
        struct doc d;
        struct strlist caps;
        struct oci_config c = {0};
        psrun_error err = {0};
        char *json = NULL;
        size_t len = 0;

        load_features(&d);
        at_strings(&d, "linux/capabilities", &caps);
        cr_assert(has(&caps, "CAP_CHOWN"));
        cr_assert(has(&caps, "CAP_SYS_ADMIN"));
        for (int cap = 0; cap <= caps_last_cap(); cap++) {
                char *name = cap_to_name(cap);
                cr_assert_not_null(name);
                if (strncmp(name, "cap_", 4) == 0) {
                        char upper[64];
                        snprintf(upper, sizeof(upper), "CAP_%s", name + 4);
                        for (char *p = upper; *p; p++)
                                *p = (char) toupper((unsigned char) *p);
                        cr_assert(has(&caps, upper), "%s missing", upper);
                }
                cap_free(name);
        }

        FILE *f = open_memstream(&json, &len);
        fputs("{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}, \"process\": "
              "{\"args\": [\"sh\"], \"cwd\": \"/\", \"capabilities\": {\"bounding\": [",
              f);
        for (size_t i = 0; i < caps.n; i++)
                fprintf(f, "%s\"%s\"", i ? ", " : "", caps.items[i]);
        fputs("]}}}", f);
        fclose(f);
        int r = oci_config_parse(json, len, &c, &err);
        cr_assert_eq(r, 0, "%s", err.msg);
        cr_assert_eq((size_t) __builtin_popcountll(c.process->capabilities->bounding), caps.n);
        cr_assert(c.process->capabilities->bounding & CAP(CAP_SYS_ADMIN));
        oci_config_free(&c);
        free(json);
        doc_free(&d);
}

/* Every action listed is parsed and compiles; every action the parser knows
 * but features leaves out is one seccomp_compile() refuses. */
Test(oci_features, seccomp_actions_match_the_compiler)
{
        struct doc d;
        struct strlist actions;
        psrun_error err = {0};
        const char *name;

        load_features(&d);
        at_strings(&d, "linux/seccomp/actions", &actions);
        for (size_t i = 0; i < actions.n; i++) {
                int kind = seccomp_action_kind_from_string(actions.items[i]);
                cr_assert_geq(kind, 0, "%s", actions.items[i]);
                cr_assert_eq(try_compile(kind, NULL, 0, &err), 0, "%s: %s", actions.items[i],
                             err.msg);
        }
        for (int k = 0; (name = seccomp_action_kind_to_string(k)); k++) {
                if (has(&actions, name))
                        continue;
                cr_assert_eq(try_compile(k, NULL, 0, &err), -EOPNOTSUPP, "%s left out", name);
        }
        cr_assert(has(&actions, "SCMP_ACT_ERRNO"));
        cr_assert(has(&actions, "SCMP_ACT_KILL"));
        cr_assert(has(&actions, "SCMP_ACT_NOTIFY"));
        /* ... and only with a listener. */
        struct seccomp_program prog = {0};
        struct seccomp_profile p = {.default_action = {.kind = SECCOMP_ACT_NOTIFY_},
                                    .badarch_action = {.kind = SECCOMP_ACT_KILL_PROCESS_}};
        cr_assert_eq(seccomp_compile(&p, &prog, &err), -EOPNOTSUPP);
        cr_assert(strstr(err.msg, "needs a listener"), "%s", err.msg);
        doc_free(&d);
}

Test(oci_features, seccomp_operators_match_the_parser)
{
        struct doc d;
        struct strlist ops;
        const char *name;
        size_t n = 0;

        load_features(&d);
        at_strings(&d, "linux/seccomp/operators", &ops);
        for (size_t i = 0; i < ops.n; i++)
                cr_assert_geq(seccomp_cmp_op_from_string(ops.items[i]), 0, "%s", ops.items[i]);
        for (; (name = seccomp_cmp_op_to_string(n)); n++)
                cr_assert(has(&ops, name), "%s missing", name);
        cr_assert_eq(ops.n, n);
        cr_assert(has(&ops, "SCMP_CMP_MASKED_EQ"));
        doc_free(&d);
}

/* Each arch listed is one seccomp_compile() recognises. Recognised is what
 * features.md asks for: libseccomp refuses (EDOM) to mix byte orders in one
 * filter, so on x86_64 the big-endian ones (MIPS, PPC64, S390X...) still
 * fail, as they do with runc. */
Test(oci_features, seccomp_archs_are_recognised)
{
        struct doc d;
        struct strlist archs;
        psrun_error err = {0};
        size_t compiled = 0;

        load_features(&d);
        at_strings(&d, "linux/seccomp/archs", &archs);
        cr_assert(has(&archs, "SCMP_ARCH_X86_64"));
        cr_assert(has(&archs, "SCMP_ARCH_AARCH64"));
        for (size_t i = 0; i < archs.n; i++) {
                int r = try_compile(SECCOMP_ACT_ALLOW_, archs.items[i], 0, &err);
                cr_assert(r == 0 || r == -EDOM, "%s: %s", archs.items[i], err.msg);
                compiled += r == 0;
        }
        /* The native one and its compat ABIs at least. */
        cr_assert_geq(compiled, 1);
        /* The check above can tell "unknown" apart. */
        cr_assert_eq(try_compile(SECCOMP_ACT_ALLOW_, "SCMP_ARCH_VAX", 0, &err), -EINVAL);
        doc_free(&d);
}

/* knownFlags: all the parser knows; supportedFlags: those that compile;
 * the rest are refused with EOPNOTSUPP. */
Test(oci_features, seccomp_flags_match_the_compiler)
{
        struct doc d;
        struct strlist known, supported;
        psrun_error err = {0};
        size_t n = 0;

        load_features(&d);
        at_strings(&d, "linux/seccomp/knownFlags", &known);
        at_strings(&d, "linux/seccomp/supportedFlags", &supported);
        for (unsigned bit = 0; bit < 32; bit++)
                if (seccomp_filter_flag_to_string(1U << bit))
                        n++;
        cr_assert_eq(known.n, n);
        for (size_t i = 0; i < known.n; i++) {
                int flag = seccomp_filter_flag_from_string(known.items[i]);
                cr_assert_gt(flag, 0, "%s", known.items[i]);
                int r = try_compile(SECCOMP_ACT_ALLOW_, NULL, (unsigned) flag, &err);
                if (has(&supported, known.items[i]))
                        cr_assert_eq(r, 0, "%s: %s", known.items[i], err.msg);
                else
                        cr_assert_eq(r, -EOPNOTSUPP, "%s: %d", known.items[i], r);
        }
        for (size_t i = 0; i < supported.n; i++)
                cr_assert(has(&known, supported.items[i]), "%s", supported.items[i]);
        cr_assert(has(&supported, "SECCOMP_FILTER_FLAG_LOG"));
        cr_assert_not(has(&supported, "SECCOMP_FILTER_FLAG_NEW_LISTENER"));
        doc_free(&d);
}

Test(oci_features, write_error_is_reported)
{
        psrun_error err = {0};
        FILE *f = fopen("/dev/full", "we");

        cr_assert_not_null(f);
        setvbuf(f, NULL, _IONBF, 0);
        cr_assert_eq(oci_features_print(f, &err), -EIO);
        cr_assert(strncmp(err.msg, "features: write", 15) == 0, "%s", err.msg);
        fclose(f);
}

/* ---- spec ---- */

static void load_spec(bool rootless, struct oci_config *c)
{
        _cleanup_free_ char *text = capture(oci_spec_print, rootless);
        psrun_error err = {0};

        int r = oci_config_parse(text, strlen(text), c, &err);
        cr_assert_eq(r, 0, "%s\n%s", err.msg, text);
}

static const struct oci_mount *find_mount(const struct oci_config *c, const char *dest)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].destination, dest) == 0)
                        return &c->mounts[i];
        cr_assert_fail("no mount on %s", dest);
        return NULL;
}

static bool has_option(const struct oci_mount *m, const char *opt)
{
        for (size_t i = 0; i < m->n_options; i++)
                if (strcmp(m->options[i], opt) == 0)
                        return true;
        return false;
}

static void assert_namespaces(const struct oci_config *c, const int *want, size_t n)
{
        cr_assert_eq(c->linux_->n_namespaces, n);
        for (size_t i = 0; i < n; i++) {
                cr_assert_eq(c->linux_->namespaces[i].type, want[i], "namespaces[%zu]", i);
                cr_assert_null(c->linux_->namespaces[i].path);
        }
}

/* What both variants share: runc's process, root and paths. */
static void assert_common(const struct oci_config *c)
{
        const uint64_t caps = CAP(CAP_AUDIT_WRITE) | CAP(CAP_KILL) | CAP(CAP_NET_BIND_SERVICE);
        const struct oci_process *p = c->process;

        cr_assert_str_eq(c->oci_version, OCI_STATE_SPEC_VERSION);
        cr_assert_not_null(p);
        cr_assert(p->terminal);
        cr_assert_eq(p->user.uid, 0);
        cr_assert_eq(p->user.gid, 0);
        cr_assert_eq(p->n_args, 1);
        cr_assert_str_eq(p->args[0], "sh");
        cr_assert_null(p->args[1]);
        cr_assert_eq(p->n_env, 2);
        cr_assert(strncmp(p->env[0], "PATH=/usr/local/sbin:", 21) == 0);
        cr_assert_str_eq(p->env[1], "TERM=xterm");
        cr_assert_str_eq(p->cwd, "/");
        cr_assert_not_null(p->capabilities);
        cr_assert_eq(p->capabilities->bounding, caps);
        cr_assert_eq(p->capabilities->effective, caps);
        cr_assert_eq(p->capabilities->permitted, caps);
        cr_assert_eq(p->capabilities->inheritable, 0);
        cr_assert_eq(p->capabilities->ambient, 0);
        cr_assert_eq(p->n_rlimits, 1);
        cr_assert_eq(p->rlimits[0].type, RLIMIT_NOFILE);
        cr_assert_eq(p->rlimits[0].soft, 1024);
        cr_assert_eq(p->rlimits[0].hard, 1024);
        cr_assert(p->no_new_privileges);

        cr_assert_str_eq(c->root.path, "rootfs");
        cr_assert(c->root.readonly);
        cr_assert_str_eq(c->hostname, "psrun");

        const char *dests[] = {"/proc",       "/dev", "/dev/pts",      "/dev/shm",
                               "/dev/mqueue", "/sys", "/sys/fs/cgroup"};
        cr_assert_eq(c->n_mounts, ARRAY_SIZE(dests));
        for (size_t i = 0; i < ARRAY_SIZE(dests); i++)
                cr_assert_str_eq(c->mounts[i].destination, dests[i]);
        cr_assert_eq(find_mount(c, "/proc")->n_options, 0);
        cr_assert_str_eq(find_mount(c, "/dev/shm")->type, "tmpfs");
        cr_assert(find_mount(c, "/dev/shm")->flags & MS_NODEV);
        cr_assert(find_mount(c, "/sys/fs/cgroup")->flags & MS_RDONLY);

        cr_assert_not_null(c->linux_);
        cr_assert_eq(c->linux_->n_masked_paths, 11);
        cr_assert_str_eq(c->linux_->masked_paths[2], "/proc/kcore");
        cr_assert_eq(c->linux_->n_readonly_paths, 5);
        cr_assert_str_eq(c->linux_->readonly_paths[3], "/proc/sys");
        cr_assert_null(c->linux_->seccomp);
}

Test(oci_spec, default_parses_back)
{
        struct oci_config c = {0};
        const int ns[] = {CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                          CLONE_NEWUTS, CLONE_NEWNS,  CLONE_NEWCGROUP};

        load_spec(false, &c);
        assert_common(&c);
        assert_namespaces(&c, ns, ARRAY_SIZE(ns));
        cr_assert_eq(c.linux_->n_uid_mappings, 0);
        cr_assert_eq(c.linux_->n_gid_mappings, 0);

        const struct oci_mount *sys = find_mount(&c, "/sys");
        cr_assert_str_eq(sys->type, "sysfs");
        cr_assert_eq(sys->bind, OCI_BIND_NONE);
        cr_assert(sys->flags & MS_RDONLY);
        const struct oci_mount *pts = find_mount(&c, "/dev/pts");
        cr_assert(has_option(pts, "gid=5"));
        cr_assert_eq(pts->n_options, 6);

        const struct oci_resources *res = c.linux_->resources;
        cr_assert_not_null(res);
        cr_assert_eq(res->n_devices, 1);
        cr_assert_not(res->devices[0].allow);
        cr_assert_eq(res->devices[0].type, 'a');
        cr_assert_str_eq(res->devices[0].access, "rwm");
        oci_config_free(&c);
}

Test(oci_spec, rootless_parses_back)
{
        struct oci_config c = {0};
        const int ns[] = {CLONE_NEWPID, CLONE_NEWIPC,    CLONE_NEWUTS,
                          CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUSER};

        load_spec(true, &c);
        assert_common(&c);
        assert_namespaces(&c, ns, ARRAY_SIZE(ns));
        cr_assert_null(c.linux_->resources);

        cr_assert_eq(c.linux_->n_uid_mappings, 1);
        cr_assert_eq(c.linux_->uid_mappings[0].container_id, 0);
        cr_assert_eq(c.linux_->uid_mappings[0].host_id, geteuid());
        cr_assert_eq(c.linux_->uid_mappings[0].size, 1);
        cr_assert_eq(c.linux_->n_gid_mappings, 1);
        cr_assert_eq(c.linux_->gid_mappings[0].container_id, 0);
        cr_assert_eq(c.linux_->gid_mappings[0].host_id, getegid());
        cr_assert_eq(c.linux_->gid_mappings[0].size, 1);

        const struct oci_mount *sys = find_mount(&c, "/sys");
        cr_assert_str_eq(sys->source, "/sys");
        cr_assert_eq(sys->bind, OCI_BIND_RECURSIVE);
        cr_assert(sys->flags & MS_RDONLY);
        cr_assert(sys->flags & MS_NOSUID);
        const struct oci_mount *pts = find_mount(&c, "/dev/pts");
        cr_assert_not(has_option(pts, "gid=5"));
        cr_assert_eq(pts->n_options, 5);
        for (size_t i = 0; i < c.n_mounts; i++)
                for (size_t j = 0; j < c.mounts[i].n_options; j++)
                        cr_assert(strncmp(c.mounts[i].options[j], "uid=", 4) != 0 &&
                                          strncmp(c.mounts[i].options[j], "gid=", 4) != 0,
                                  "%s: %s", c.mounts[i].destination, c.mounts[i].options[j]);
        oci_config_free(&c);
}

/* runc spec writes through json.MarshalIndent with a tab. */
Test(oci_spec, laid_out_like_runc)
{
        for (int rootless = 0; rootless <= 1; rootless++) {
                _cleanup_free_ char *text = capture(oci_spec_print, rootless);
                cr_assert(strncmp(text, "{\n\t\"ociVersion\": \"", 18) == 0, "%.40s", text);
                cr_assert(strstr(text, "\n\t\t\"args\": [\n\t\t\t\"sh\"\n\t\t],\n"));
                cr_assert(strstr(text,
                                 "\n\t\t{\n\t\t\t\"destination\": \"/proc\",\n"
                                 "\t\t\t\"type\": \"proc\",\n\t\t\t\"source\": \"proc\"\n\t\t},"));
                size_t len = strlen(text);
                cr_assert(strcmp(text + len - 3, "\t}\n") == 0 ||
                          strcmp(text + len - 2, "}\n") == 0);
        }
}

Test(oci_spec, write_error_is_reported)
{
        psrun_error err = {0};
        FILE *f = fopen("/dev/full", "we");

        cr_assert_not_null(f);
        cr_assert_eq(oci_spec_print(f, false, &err), -EIO);
        cr_assert(strncmp(err.msg, "spec: write", 11) == 0, "%s", err.msg);
        fclose(f);
}
