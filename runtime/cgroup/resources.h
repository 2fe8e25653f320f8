/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * linux.resources of an OCI config.json (runtime-spec config-linux.md), as
 * plain C data: what the cgroup drivers apply. The OCI config parser
 * (runtime/oci/config.h) fills it; it lives here so that runtime/cgroup/
 * includes nothing from runtime/ outside itself.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct oci_opt_i64 {
        bool set;
        int64_t value;
};

struct oci_opt_u64 {
        bool set;
        uint64_t value;
};

struct oci_opt_bool {
        bool set;
        bool value;
};

/* One entry of a string-to-string map (annotations, sysctl, unified), in
 * document order; keys are unique and non-empty. */
struct oci_kv {
        char *key;
        char *value;
};

struct oci_device_rule {
        bool allow;
        int type;                 /* 'a' (also when not given), 'b' or 'c' */
        struct oci_opt_i64 major; /* not set, or -1: any */
        struct oci_opt_i64 minor;
        char *access; /* some of "rwm", each once; "rwm" when not given */
};

struct oci_memory {
        /* bytes; -1: unlimited */
        struct oci_opt_i64 limit, reservation, swap, kernel, kernel_tcp;
        struct oci_opt_u64 swappiness; /* 0..100 */
        struct oci_opt_bool disable_oom_killer, use_hierarchy, check_before_update;
};

struct oci_cpu {
        struct oci_opt_u64 shares;
        struct oci_opt_i64 quota; /* >= burst when both are given and quota > 0 */
        struct oci_opt_u64 burst, period;
        struct oci_opt_i64 realtime_runtime;
        struct oci_opt_u64 realtime_period;
        char *cpus, *mems;
        struct oci_opt_i64 idle;
};

struct oci_pids {
        struct oci_opt_i64 limit; /* -1 (or 0): unlimited */
};

struct oci_weight_device {
        int64_t major, minor;
        struct oci_opt_u64 weight, leaf_weight; /* uint16; at least one given */
};

struct oci_throttle_device {
        int64_t major, minor;
        uint64_t rate;
};

struct oci_block_io {
        struct oci_opt_u64 weight, leaf_weight; /* uint16 */
        struct oci_weight_device *weight_device;
        size_t n_weight_device;
        struct oci_throttle_device *throttle_read_bps, *throttle_write_bps;
        size_t n_throttle_read_bps, n_throttle_write_bps;
        struct oci_throttle_device *throttle_read_iops, *throttle_write_iops;
        size_t n_throttle_read_iops, n_throttle_write_iops;
};

struct oci_hugepage_limit {
        char *page_size; /* "2MB", "1GB", "64KB" */
        uint64_t limit;
};

struct oci_net_priority {
        char *name; /* an interface */
        uint32_t priority;
};

struct oci_network {
        struct oci_opt_u64 class_id; /* net_cls.classid, uint32 */
        struct oci_net_priority *priorities;
        size_t n_priorities;
};

struct oci_resources {
        struct oci_network *network; /* net_cls/net_prio: v1 only */
        struct oci_memory *memory;
        struct oci_cpu *cpu;
        struct oci_pids *pids;
        struct oci_block_io *block_io;
        struct oci_hugepage_limit *hugepage_limits;
        size_t n_hugepage_limits;
        struct oci_device_rule *devices; /* in order: later rules win */
        size_t n_devices;
        struct oci_kv *unified; /* cgroup v2 file name -> content */
        size_t n_unified;
        bool rdma; /* given: refused, psrun has no rdma controller support */
};
