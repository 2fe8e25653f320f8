/* SPDX-License-Identifier: MIT */
/* The effective policy as JSON, in the same vocabulary the parser reads:
 * what `psrun policy` prints, and what other front ends (MCP, Python) can
 * hand back unchanged. Reading the output back gives the same policy. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "policy/policy.h"

static void key(FILE *f, bool *first, const char *name)
{
        fputs(*first ? "{\n  " : ",\n  ", f);
        *first = false;
        json_write_string(f, name);
        fputs(": ", f);
}

static void size_value(FILE *f, uint64_t bytes)
{
        char buf[32];
        format_size(bytes, buf, sizeof(buf));
        json_write_string(f, buf);
}

static void cpus_value(FILE *f, double cpus)
{
        char buf[64];
        format_cpus(cpus, buf, sizeof(buf));
        fputs(buf, f);
}

static void strv_value(FILE *f, bool *first, const char *name, char *const *v, size_t n)
{
        key(f, first, name);
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        fputs(", ", f);
                json_write_string(f, v[i]);
        }
        fputc(']', f);
}

static void duration_value(FILE *f, bool *first, const char *name, uint64_t ms)
{
        char buf[32];
        key(f, first, name);
        snprintf(buf, sizeof(buf), "%" PRIu64 "ms", ms);
        json_write_string(f, buf);
}

void policy_json_write_ports(FILE *f, const struct policy *p)
{
        fputc('[', f);
        for (size_t i = 0; i < p->n_allow_ports; i++)
                fprintf(f, "%s%u", i ? ", " : "", (unsigned) p->allow_ports[i]);
        fputc(']', f);
}

void policy_json_write_approve(FILE *f, const struct policy *p)
{
        uint32_t bit;
        bool any = false;
        fputc('[', f);
        for (size_t i = 0; policy_action_name_at(i, &bit); i++)
                if (p->approve & bit) {
                        fputs(any ? ", " : "", f);
                        json_write_string(f, policy_action_name_at(i, NULL));
                        any = true;
                }
        fputc(']', f);
}

void policy_json_write_env(FILE *f, const struct policy *p)
{
        fputc('{', f);
        for (size_t i = 0; i < p->n_env; i++) {
                fputs(i ? ", " : "", f);
                json_write_string(f, p->env[i].name);
                fputs(": ", f);
                if (p->env[i].value)
                        json_write_string(f, p->env[i].value);
                else
                        fputs("null", f);
        }
        fputc('}', f);
}

int policy_write_json(const struct policy *p, FILE *f)
{
        bool first = true;

        key(f, &first, "network");
        json_write_string(f, policy_network_to_string(p->network));
        key(f, &first, "allow_domains");
        fputc('[', f);
        for (size_t i = 0; i < p->n_allow_domains; i++) {
                if (i)
                        fputs(", ", f);
                json_write_string(f, p->allow_domains[i]);
        }
        fputc(']', f);
        /* Also read by a session's install network with `network: none`. */
        if (p->network != POLICY_NETWORK_NONE || p->install_network != POLICY_NETWORK_NONE) {
                key(f, &first, "allow_ports");
                policy_json_write_ports(f, p);
                strv_value(f, &first, "allow_cidrs", p->allow_cidrs, p->n_allow_cidrs);
                strv_value(f, &first, "allow_private", p->allow_private, p->n_allow_private);
                strv_value(f, &first, "dns_upstream", p->dns_upstream, p->n_dns_upstream);
                duration_value(f, &first, "dns_min_ttl", p->dns_min_ttl_ms);
                duration_value(f, &first, "dns_max_ttl", p->dns_max_ttl_ms);
                if (p->network_pool) {
                        key(f, &first, "network_pool");
                        json_write_string(f, p->network_pool);
                }
                if (p->network_log) {
                        key(f, &first, "network_log");
                        json_write_string(f, p->network_log);
                }
                key(f, &first, "name_check");
                fputs(p->name_check ? "true" : "false", f);
        }
        key(f, &first, "install_network");
        json_write_string(f, policy_network_to_string(p->install_network));
        if (p->install_network == POLICY_NETWORK_RESTRICTED)
                strv_value(f, &first, "install_allow_domains", p->install_allow_domains,
                           p->n_install_allow_domains);
        if (p->pip_index_url) {
                key(f, &first, "pip_index_url");
                json_write_string(f, p->pip_index_url);
        }
        if (p->npm_registry) {
                key(f, &first, "npm_registry");
                json_write_string(f, p->npm_registry);
        }
        key(f, &first, "approve");
        policy_json_write_approve(f, p);
        key(f, &first, "memory_limit");
        size_value(f, p->memory_limit);
        key(f, &first, "cpu_limit");
        cpus_value(f, p->cpu_limit);
        key(f, &first, "pids_limit");
        fprintf(f, "%" PRIu64, p->pids_limit);
        key(f, &first, "disk_limit");
        size_value(f, p->disk_limit);
        key(f, &first, "timeout");
        char ms[32];
        snprintf(ms, sizeof(ms), "%" PRIu64 "ms", p->timeout_ms);
        json_write_string(f, ms);
        key(f, &first, "idle_timeout");
        snprintf(ms, sizeof(ms), "%" PRIu64 "ms", p->idle_timeout_ms);
        json_write_string(f, ms);
        key(f, &first, "lifetime");
        snprintf(ms, sizeof(ms), "%" PRIu64 "ms", p->lifetime_ms);
        json_write_string(f, ms);
        key(f, &first, "output_limit");
        size_value(f, p->output_limit);
        key(f, &first, "background_limit");
        fprintf(f, "%" PRIu64, p->background_limit);
        key(f, &first, "env");
        policy_json_write_env(f, p);
        key(f, &first, "workdir");
        json_write_string(f, p->workdir ? p->workdir : POLICY_DEFAULT_WORKDIR);
        key(f, &first, "readonly_rootfs");
        fputs(p->readonly_rootfs ? "true" : "false", f);
        key(f, &first, "user");
        char user[32];
        snprintf(user, sizeof(user), "%u:%u", (unsigned) p->uid, (unsigned) p->gid);
        json_write_string(f, user);
        key(f, &first, "backend");
        json_write_string(f, policy_backend_to_string(p->backend));
        key(f, &first, "gvisor_platform");
        json_write_string(f, policy_gvisor_platform_to_string(p->gvisor_platform));
        key(f, &first, "mounts");
        fputc('[', f);
        for (size_t i = 0; i < p->n_mounts; i++) {
                fputs(i ? ", {\"source\": " : "{\"source\": ", f);
                json_write_string(f, p->mounts[i].source);
                fputs(", \"target\": ", f);
                json_write_string(f, p->mounts[i].target);
                fprintf(f, ", \"readonly\": %s}", p->mounts[i].readonly ? "true" : "false");
        }
        fputc(']', f);
        key(f, &first, "hostname");
        json_write_string(f, p->hostname ? p->hostname : POLICY_DEFAULT_HOSTNAME);
        key(f, &first, "landlock");
        json_write_string(f, policy_layer_to_string(p->landlock));
        key(f, &first, "apparmor");
        json_write_string(f, policy_layer_to_string(p->apparmor));
        if (p->apparmor_profile) {
                key(f, &first, "apparmor_profile");
                json_write_string(f, p->apparmor_profile);
        }
        key(f, &first, "violations");
        json_write_string(f, policy_violations_to_string(p->violations));
        key(f, &first, "limits");
        json_write_string(f, policy_limits_to_string(p->limits));
        static const struct {
                const char *name;
                size_t offset;
        } quotas[] = {
                {"pty_limit", offsetof(struct policy, pty_limit)},
                {"inotify_limit", offsetof(struct policy, inotify_limit)},
                {"inotify_watch_limit", offsetof(struct policy, inotify_watch_limit)},
                {"fanotify_limit", offsetof(struct policy, fanotify_limit)},
                {"fanotify_mark_limit", offsetof(struct policy, fanotify_mark_limit)},
                {"namespace_limit", offsetof(struct policy, namespace_limit)},
                {"sigpending_limit", offsetof(struct policy, sigpending_limit)},
        };
        for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++) {
                key(f, &first, quotas[i].name);
                fprintf(f, "%" PRIu64,
                        *(const uint64_t *) (const void *) ((const char *) p + quotas[i].offset));
        }
        key(f, &first, "msgqueue_limit");
        size_value(f, p->msgqueue_limit);
        /* The image keys only where they are set: a host-root policy reads
         * as it did before them. */
        if (p->image) {
                key(f, &first, "image");
                json_write_string(f, p->image);
        }
        if (p->image_store) {
                key(f, &first, "image_store");
                json_write_string(f, p->image_store);
        }
        if (p->n_registry_mirrors)
                strv_value(f, &first, "registry_mirrors", p->registry_mirrors,
                           p->n_registry_mirrors);
        if (p->n_insecure_registries)
                strv_value(f, &first, "insecure_registries", p->insecure_registries,
                           p->n_insecure_registries);
        if (p->image_max_size != POLICY_DEFAULT_IMAGE_MAX_SIZE) {
                key(f, &first, "image_max_size");
                size_value(f, p->image_max_size);
        }
        if (p->n_tools)
                strv_value(f, &first, "tools", p->tools, p->n_tools);
        fputs("\n}\n", f);
        return ferror(f) ? -EIO : 0;
}
