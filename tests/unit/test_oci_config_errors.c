/* SPDX-License-Identifier: MIT */
/*
 * The config.json parser's value rules (unknown fields, null, -1, integer
 * bounds) and every rejection with its exact message and line:column.
 */
#include "oci_config_test.h"

/* ---- unknown fields, null, -1 ---- */

Test(oci_config_errors, unknown_fields_are_ignored)
{
        struct oci_config c;

        parse_ok(
                "{\"ociVersion\": \"1.0.2\", \"platform\": {\"os\": \"linux\"}, \"x\": [[[]]],\n"
                " \"root\": {\"path\": \"r\", \"extra\": true},\n"
                " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"commandLine\": 5,\n"
                "   \"user\": {\"uid\": 1, \"gid\": 2, \"username\": {}},\n"
                "   \"capabilities\": {\"bounding\": [], \"future\": [\"CAP_X\"]},\n"
                "   \"rlimits\": [{\"type\": \"RLIMIT_AS\", \"soft\": 1, \"hard\": 2, \"x\": 1}],\n"
                "   \"schedulerV9\": {\"policy\": 7}, \"ioLimits\": \"high\"},\n"
                " \"mounts\": [{\"destination\": \"/a\", \"future\": null}],\n"
                " \"hooks\": {\"prestart\": [{\"path\": \"/h\", \"y\": 1}], \"later\": 3},\n"
                " \"linux\": {\"namespaces\": [{\"type\": \"pid\", \"z\": []}],\n"
                "   \"resources\": {\"memory\": {\"limit\": 1, \"future\": \"x\"}, \"rdmaV2\": 1,\n"
                "     \"network\": {\"future\": 1}, \"misc\": {}},\n"
                "   \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [\n"
                "     {\"names\": [\"a\"], \"action\": \"SCMP_ACT_LOG\", \"comment\": 1,\n"
                "      \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\", \"w\": "
                "0}]}]},\n"
                "   \"intelRdtV2\": {\"closID\": 5}, \"netDevices\": {\"eth0\": {}}}}",
                &c);
        cr_assert_str_eq(c.root.path, "r");
        cr_assert_eq(c.process->user.uid, 1);
        cr_assert_eq(c.process->user.gid, 2);
        cr_assert_eq(c.process->rlimits[0].hard, 2);
        cr_assert_str_eq(c.mounts[0].destination, "/a");
        cr_assert_eq(c.hooks.lists[OCI_HOOK_PRESTART].n, 1);
        cr_assert_eq(c.linux_->namespaces[0].type, CLONE_NEWPID);
        cr_assert_eq(c.linux_->resources->memory->limit.value, 1);
        cr_assert_eq(c.linux_->seccomp->syscalls[0].args[0].value, 1);
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config_errors, null_means_not_set)
{
        struct oci_config c;

        parse_ok(HEAD
                 "\"hostname\": null, \"mounts\": null, \"hooks\": null, \"annotations\": null,"
                 " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"oomScoreAdj\": null,"
                 " \"capabilities\": null, \"env\": null},"
                 " \"linux\": {\"resources\": {\"memory\": {\"limit\": null, \"swap\": 5}}}}",
                 &c);
        cr_assert_null(c.hostname);
        cr_assert_null(c.mounts);
        cr_assert_null(c.annotations);
        cr_assert_not(c.process->oom_score_adj.set);
        cr_assert_null(c.process->capabilities);
        cr_assert_null(c.process->env);
        cr_assert_not(c.linux_->resources->memory->limit.set);
        cr_assert_eq(c.linux_->resources->memory->swap.value, 5);
        oci_config_free(&c);

        /* A required field that is null is missing. */
        expect_error(HEAD "\"process\": {\"args\": null, \"cwd\": \"/\"}}", EINVAL,
                     "config.json:2:12: process.args: missing (required)");
        assert_no_leaks();
}

Test(oci_config_errors, minus_one_means_unlimited)
{
        struct oci_config c;

        parse_ok(HEAD
                 "\"linux\": {\"resources\": {\"memory\": {\"limit\": -1, \"reservation\": -1,"
                 " \"swap\": -1, \"kernel\": -1, \"kernelTCP\": -1}, \"pids\": {\"limit\": -1},"
                 " \"cpu\": {\"quota\": -1, \"realtimeRuntime\": -1},"
                 " \"devices\": [{\"allow\": true, \"major\": -1, \"minor\": -1}]}}}",
                 &c);
        const struct oci_resources *res = c.linux_->resources;
        cr_assert_eq(res->memory->limit.value, -1);
        cr_assert_eq(res->memory->reservation.value, -1);
        cr_assert_eq(res->memory->swap.value, -1);
        cr_assert_eq(res->memory->kernel.value, -1);
        cr_assert_eq(res->memory->kernel_tcp.value, -1);
        cr_assert_eq(res->pids->limit.value, -1);
        cr_assert_eq(res->cpu->quota.value, -1);
        cr_assert_eq(res->devices[0].major.value, -1);
        oci_config_free(&c);

        /* Limit -1 with a swap is fine: unlimited memory. */
        parse_ok(HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": -1, \"swap\": 100}}}}",
                 &c);
        oci_config_free(&c);

        expect_error(HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": -2}}}}", ERANGE,
                     "config.json:2:45: linux.resources.memory.limit: -2 is out of range "
                     "(-1..9223372036854775807)");
        expect_error(HEAD
                     "\"linux\": {\"resources\": {\"memory\": {\"swap\": -9223372036854775808}}}}",
                     ERANGE,
                     "config.json:2:44: linux.resources.memory.swap: -9223372036854775808 is out "
                     "of range (-1..9223372036854775807)");
        expect_error(HEAD "\"linux\": {\"resources\": {\"pids\": {\"limit\": -2}}}}", ERANGE,
                     "config.json:2:43: linux.resources.pids.limit: -2 is out of range "
                     "(-1..9223372036854775807)");
        expect_error(
                HEAD
                "\"linux\": {\"resources\": {\"devices\": [{\"allow\": true, \"minor\": -2}]}}}",
                ERANGE,
                "config.json:2:62: linux.resources.devices[0].minor: -2 is out of range "
                "(-1..9223372036854775807)");
        assert_no_leaks();
}

Test(oci_config_errors, integer_bounds)
{
        struct oci_config c;

        parse_ok(HEAD "\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 4294967295,"
                      " \"size\": 1}], \"timeOffsets\": {\"monotonic\": {\"secs\": "
                      "-9223372036854775808, \"nanosecs\": 999999999}}, \"resources\": "
                      "{\"hugepageLimits\": [{\"pageSize\": \"64KB\", \"limit\": "
                      "18446744073709551615}]}}}",
                 &c);
        cr_assert_eq(c.linux_->uid_mappings[0].host_id, UINT32_MAX);
        cr_assert_eq(c.linux_->time_offsets->monotonic->secs, INT64_MIN);
        cr_assert_eq(c.linux_->resources->hugepage_limits[0].limit, UINT64_MAX);
        oci_config_free(&c);

        /* "-0" is 0. */
        parse_ok(PROCESS_HEAD "\"user\": {\"uid\": -0, \"gid\": 0}}}", &c);
        cr_assert_eq(c.process->user.uid, 0);
        oci_config_free(&c);

        expect_error(HEAD "\"linux\": {\"resources\": {\"hugepageLimits\": [{\"pageSize\": \"2MB\","
                          " \"limit\": 18446744073709551616}]}}}",
                     ERANGE,
                     "config.json:2:73: linux.resources.hugepageLimits[0].limit: "
                     "18446744073709551616 is out of range (0..18446744073709551615)");
        expect_error(HEAD "\"linux\": {\"timeOffsets\": {\"boottime\": {\"secs\": "
                          "-9223372036854775809}}}}",
                     ERANGE,
                     "config.json:2:48: linux.timeOffsets.boottime.secs: -9223372036854775809 is "
                     "out of range (-9223372036854775808..9223372036854775807)");
        expect_error(HEAD "\"linux\": {\"timeOffsets\": {\"boottime\": {\"nanosecs\": "
                          "1000000000}}}}",
                     ERANGE,
                     "config.json:2:52: linux.timeOffsets.boottime.nanosecs: 1000000000 is out of "
                     "range (0..999999999)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 4294967296, \"gid\": 0}}}", ERANGE,
                     "config.json:2:57: process.user.uid: 4294967296 is out of range "
                     "(0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": -1, \"gid\": 0}}}", ERANGE,
                     "config.json:2:57: process.user.uid: -1 is out of range (0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 99999999999999999999999, \"gid\": 0}}}",
                     ERANGE,
                     "config.json:2:57: process.user.uid: 99999999999999999999999 is out of range "
                     "(0..4294967295)");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 1.0, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got 1.0");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": 1e3, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got 1e3");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": \"5\", \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got a string");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": true, \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got a boolean");
        expect_error(PROCESS_HEAD "\"user\": {\"uid\": [], \"gid\": 0}}}", EINVAL,
                     "config.json:2:57: process.user.uid: expected an integer, got an array");
        assert_no_leaks();
}

/* ---- every rejection, with its message ---- */

Test(oci_config_errors, top_level_errors)
{
        CASES({"{\"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:1: ociVersion: missing (required)"},
              {"{\"ociVersion\": \"1.0.2\"}", EINVAL, "config.json:1:1: root: missing (required)"},
              {"{\"ociVersion\": \"2.0.0\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: \"2.0.0\" is not supported (psrun reads version "
               "1.x)"},
              {"{\"ociVersion\": \"1\", \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: \"1\" is not supported (psrun reads version 1.x)"},
              {"{\"ociVersion\": 1.0, \"root\": {\"path\": \"r\"}}", EINVAL,
               "config.json:1:16: ociVersion: expected a string, got a number"},
              {"{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"\"}}", EINVAL,
               "config.json:1:42: root.path: must not be empty"},
              {"{\"ociVersion\": \"1.0.0\", \"root\": \"rootfs\"}", EINVAL,
               "config.json:1:33: root: expected an object, got a string"},
              {HEAD "\"root\": {\"path\": \"again\"}}", EINVAL,
               "config.json:2:1: root: duplicate key"},
              {HEAD "\"hostname\": 5}", EINVAL,
               "config.json:2:13: hostname: expected a string, got a number"},
              {HEAD "\"hostname\": \"a\", \"hostname\": \"b\"}", EINVAL,
               "config.json:2:18: hostname: duplicate key"},
              {HEAD "\"hostname\": \"a\\u0000b\"}", EINVAL,
               "config.json:2:13: hostname: must not contain NUL characters"},
              {HEAD "\"hostname\": "
                    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
               EINVAL, "config.json:2:13: hostname: longer than 64 characters"},
              {HEAD "\"domainname\": []}", EINVAL,
               "config.json:2:15: domainname: expected a string, got an array"},
              {HEAD "\"annotations\": {\"a\": 1}}", EINVAL,
               "config.json:2:22: annotations[\"a\"]: expected a string, got a number"},
              {HEAD "\"annotations\": {\"\": \"x\"}}", EINVAL,
               "config.json:2:17: annotations: keys must not be empty"},
              {HEAD "\"annotations\": {\"a\\u0000\": \"x\"}}", EINVAL,
               "config.json:2:17: annotations: keys must not contain NUL characters"},
              {HEAD "\"annotations\": {\"b\": \"x\", \"a\": \"y\", \"b\": \"z\"}}", EINVAL,
               "config.json:2:37: annotations[\"b\"]: duplicate key"},
              {HEAD "\"annotations\": [\"a=b\"]}", EINVAL,
               "config.json:2:16: annotations: expected an object of strings, got an array"},
              {"[1]", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got an array"},
              {"\"x\"", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got a string"},
              {"null", EINVAL,
               "config.json:1:1: expected a JSON object at the top level, got null"});
        assert_no_leaks();
}

Test(oci_config_errors, process_errors)
{
        CASES({HEAD "\"process\": {\"cwd\": \"/\"}}", EINVAL,
               "config.json:2:12: process.args: missing (required)"},
              {HEAD "\"process\": {\"args\": [\"sh\"]}}", EINVAL,
               "config.json:2:12: process.cwd: missing (required)"},
              {HEAD "\"process\": {\"args\": [], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:21: process.args: must not be empty"},
              {HEAD "\"process\": {\"args\": [\"\"], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:22: process.args[0]: the program must not be empty"},
              {HEAD "\"process\": {\"args\": [\"sh\", 1], \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:28: process.args[1]: expected a string, got a number"},
              {HEAD "\"process\": {\"args\": \"sh\", \"cwd\": \"/\"}}", EINVAL,
               "config.json:2:21: process.args: expected an array of strings, got a string"},
              {PROCESS_HEAD "\"cwd\": \"/\"}}", EINVAL,
               "config.json:2:41: process.cwd: duplicate key"},
              {HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"relative\"}}", EINVAL,
               "config.json:2:36: process.cwd: \"relative\" is not an absolute path"},
              {PROCESS_HEAD "\"terminal\": \"yes\"}}", EINVAL,
               "config.json:2:53: process.terminal: expected a boolean, got a string"},
              {PROCESS_HEAD "\"noNewPrivileges\": 1}}", EINVAL,
               "config.json:2:60: process.noNewPrivileges: expected a boolean, got a number"},
              {PROCESS_HEAD "\"env\": [\"FOO\"]}}", EINVAL,
               "config.json:2:49: process.env[0]: \"FOO\" is not NAME=value"},
              {PROCESS_HEAD "\"env\": [\"=x\"]}}", EINVAL,
               "config.json:2:49: process.env[0]: \"=x\" has an empty name"},
              {PROCESS_HEAD "\"consoleSize\": {\"height\": 1, \"width\": 65536}}}", ERANGE,
               "config.json:2:79: process.consoleSize.width: 65536 is out of range (0..65535)"},
              {PROCESS_HEAD "\"consoleSize\": {\"height\": 1}}}", EINVAL,
               "config.json:2:56: process.consoleSize.width: missing (required)"},
              {PROCESS_HEAD "\"user\": {\"gid\": 0}}}", EINVAL,
               "config.json:2:49: process.user.uid: missing (required)"},
              {PROCESS_HEAD "\"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [-1]}}}",
               ERANGE,
               "config.json:2:89: process.user.additionalGids[0]: -1 is out of range "
               "(0..4294967295)"},
              {PROCESS_HEAD "\"user\": {\"uid\": 0, \"gid\": 0, \"umask\": 4294967296}}}", ERANGE,
               "config.json:2:79: process.user.umask: 4294967296 is out of range "
               "(0..4294967295)"},
              {PROCESS_HEAD "\"capabilities\": {\"bounding\": [\"CAP_FOO\"]}}}", EINVAL,
               "config.json:2:71: process.capabilities.bounding[0]: unknown capability "
               "\"CAP_FOO\""},
              {PROCESS_HEAD "\"capabilities\": {\"ambient\": [\"CAP_KILL\", \"cap_kill\"]}}}",
               EINVAL,
               "config.json:2:82: process.capabilities.ambient[1]: unknown capability "
               "\"cap_kill\""},
              {PROCESS_HEAD "\"capabilities\": {\"effective\": [\"KILL\"]}}}", EINVAL,
               "config.json:2:72: process.capabilities.effective[0]: unknown capability "
               "\"KILL\""},
              {PROCESS_HEAD "\"capabilities\": [\"CAP_KILL\"]}}", EINVAL,
               "config.json:2:57: process.capabilities: expected an object, got an array"},
              {PROCESS_HEAD "\"oomScoreAdj\": 1001}}", ERANGE,
               "config.json:2:56: process.oomScoreAdj: 1001 is out of range (-1000..1000)"},
              {PROCESS_HEAD "\"oomScoreAdj\": -1001}}", ERANGE,
               "config.json:2:56: process.oomScoreAdj: -1001 is out of range (-1000..1000)"},
              {PROCESS_HEAD "\"apparmorProfile\": false}}", EINVAL,
               "config.json:2:60: process.apparmorProfile: expected a string, got a boolean"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": -1, "
                            "\"hard\": 1}]}}",
               ERANGE,
               "config.json:2:87: process.rlimits[0].soft: -1 is out of range "
               "(0..18446744073709551615)"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, "
                            "\"hard\": 1}]}}",
               EINVAL, "config.json:2:87: process.rlimits[0].soft: 2 is above the hard limit 1"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1}]}}", EINVAL,
               "config.json:2:53: process.rlimits[0].hard: missing (required)"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"NOFILE\", \"soft\": 1, \"hard\": 1}]}}",
               EINVAL,
               "config.json:2:62: process.rlimits[0].type: \"NOFILE\" is not one of RLIMIT_CPU, "
               "RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS, RLIMIT_NPROC, "
               "RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_AS, RLIMIT_LOCKS, RLIMIT_SIGPENDING, "
               "RLIMIT_MSGQUEUE, RLIMIT_NICE, RLIMIT_RTPRIO, RLIMIT_RTTIME"},
              {PROCESS_HEAD "\"rlimits\": [{\"type\": \"RLIMIT_AS\", \"soft\": 1, \"hard\": 1},\n"
                            "{\"type\": \"RLIMIT_CORE\", \"soft\": 1, \"hard\": 1},\n"
                            "{\"type\": \"RLIMIT_AS\", \"soft\": 2, \"hard\": 2}]}}",
               EINVAL,
               "config.json:4:10: process.rlimits[2].type: RLIMIT_AS is already set by "
               "process.rlimits[0]"});
        assert_no_leaks();
}

Test(oci_config_errors, mount_and_hook_errors)
{
        CASES({HEAD "\"mounts\": {}}", EINVAL,
               "config.json:2:11: mounts: expected an array, got an object"},
              {HEAD "\"mounts\": [null]}", EINVAL,
               "config.json:2:12: mounts[0]: expected an object, got null"},
              {HEAD "\"mounts\": [\"/tmp\"]}", EINVAL,
               "config.json:2:12: mounts[0]: expected an object, got a string"},
              {HEAD "\"mounts\": [{\"type\": \"tmpfs\"}]}", EINVAL,
               "config.json:2:12: mounts[0].destination: missing (required)"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\"}, {\"destination\": \"tmp\"}]}", EINVAL,
               "config.json:2:51: mounts[1].destination: \"tmp\" is not an absolute path"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"options\": [\"ro\", \"\"]}]}", EINVAL,
               "config.json:2:52: mounts[0].options[1]: must not be empty"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"options\": \"ro\"}]}", EINVAL,
               "config.json:2:45: mounts[0].options: expected an array of strings, got a "
               "string"},
              {HEAD "\"mounts\": [{\"destination\": \"/a\", \"uidMappings\": [{\"containerID\": "
                    "0, \"hostID\": 0, \"size\": 0}]}]}",
               EINVAL, "config.json:2:90: mounts[0].uidMappings[0].size: must be at least 1"},
              {HEAD "\"hooks\": []}", EINVAL,
               "config.json:2:10: hooks: expected an object, got an array"},
              {HEAD "\"hooks\": {\"prestart\": {\"path\": \"/h\"}}}", EINVAL,
               "config.json:2:23: hooks.prestart: expected an array, got an object"},
              {HEAD "\"hooks\": {\"prestart\": [{\"path\": \"hook\"}]}}", EINVAL,
               "config.json:2:33: hooks.prestart[0].path: \"hook\" is not an absolute path"},
              {HEAD "\"hooks\": {\"poststart\": [{\"args\": [\"x\"]}]}}", EINVAL,
               "config.json:2:25: hooks.poststart[0].path: missing (required)"},
              {HEAD "\"hooks\": {\"poststop\": [{\"path\": \"/h\", \"timeout\": 0}]}}", ERANGE,
               "config.json:2:50: hooks.poststop[0].timeout: 0 is out of range "
               "(1..2147483647)"},
              {HEAD "\"hooks\": {\"createRuntime\": [{\"path\": \"/h\", \"env\": [\"X\"]}]}}",
               EINVAL, "config.json:2:52: hooks.createRuntime[0].env[0]: \"X\" is not NAME=value"});
        assert_no_leaks();
}

#define LINUX_HEAD HEAD "\"linux\": "

Test(oci_config_errors, linux_errors)
{
        CASES({LINUX_HEAD "[]}", EINVAL,
               "config.json:2:10: linux: expected an object, got an array"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"net\"}]}}", EINVAL,
               "config.json:2:35: linux.namespaces[0].type: \"net\" is not one of pid, network, "
               "mount, ipc, uts, user, cgroup, time"},
              {LINUX_HEAD "{\"namespaces\": [{\"path\": \"/proc/1/ns/pid\"}]}}", EINVAL,
               "config.json:2:26: linux.namespaces[0].type: missing (required)"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"pid\", \"path\": \"ns\"}]}}", EINVAL,
               "config.json:2:50: linux.namespaces[0].path: \"ns\" is not an absolute path"},
              {LINUX_HEAD "{\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"uts\"},\n"
                          "  {\"type\": \"pid\", \"path\": \"/proc/1/ns/pid\"}]}}",
               EINVAL,
               "config.json:3:12: linux.namespaces[2].type: \"pid\" is already in "
               "linux.namespaces[0]"},
              {LINUX_HEAD "{\"uidMappings\": [{\"containerID\": 0, \"hostID\": 4294967296, "
                          "\"size\": 1}]}}",
               ERANGE,
               "config.json:2:56: linux.uidMappings[0].hostID: 4294967296 is out of range "
               "(0..4294967295)"},
              {LINUX_HEAD "{\"gidMappings\": [{\"containerID\": 4294967295, \"hostID\": 0, "
                          "\"size\": 2}]}}",
               ERANGE,
               "config.json:2:76: linux.gidMappings[0].size: the range goes past id "
               "4294967295"},
              {LINUX_HEAD "{\"uidMappings\": [{\"containerID\": 0, \"size\": 2}]}}", EINVAL,
               "config.json:2:27: linux.uidMappings[0].hostID: missing (required)"},
              {LINUX_HEAD "{\"sysctl\": {\"a\": \"1\", \"a\": \"2\"}}}", EINVAL,
               "config.json:2:32: linux.sysctl[\"a\"]: duplicate key"},
              {LINUX_HEAD "{\"sysctl\": {\"net.core.somaxconn\": 256}}}", EINVAL,
               "config.json:2:44: linux.sysctl[\"net.core.somaxconn\"]: expected a string, got "
               "a number"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"x\", \"major\": 1, "
                          "\"minor\": 1}]}}",
               EINVAL, "config.json:2:50: linux.devices[0].type: \"x\" is not one of c, b, u, p"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"minor\": 1}]}}",
               EINVAL,
               "config.json:2:23: linux.devices[0].major: missing (required unless type is "
               "\"p\")"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"dev/x\", \"type\": \"p\"}]}}", EINVAL,
               "config.json:2:32: linux.devices[0].path: \"dev/x\" is not an absolute path"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"b\", \"major\": -1, "
                          "\"minor\": 0}]}}",
               ERANGE,
               "config.json:2:64: linux.devices[0].major: -1 is out of range (0..4294967295)"},
              {LINUX_HEAD "{\"devices\": [{\"path\": \"/dev/x\", \"type\": \"p\", \"fileMode\": "
                          "-1}]}}",
               ERANGE,
               "config.json:2:67: linux.devices[0].fileMode: -1 is out of range "
               "(0..4294967295)"},
              {LINUX_HEAD "{\"maskedPaths\": [\"proc/kcore\"]}}", EINVAL,
               "config.json:2:27: linux.maskedPaths[0]: \"proc/kcore\" is not an absolute path"},
              {LINUX_HEAD "{\"readonlyPaths\": \"/proc/sys\"}}", EINVAL,
               "config.json:2:28: linux.readonlyPaths: expected an array of strings, got a "
               "string"},
              {LINUX_HEAD "{\"rootfsPropagation\": \"bogus\"}}", EINVAL,
               "config.json:2:32: linux.rootfsPropagation: \"bogus\" is not one of private, "
               "rprivate, shared, rshared, slave, rslave, unbindable, runbindable"},
              {LINUX_HEAD "{\"rootfsPropagation\": \"ro\"}}", EINVAL,
               "config.json:2:32: linux.rootfsPropagation: \"ro\" is not one of private, "
               "rprivate, shared, rshared, slave, rslave, unbindable, runbindable"},
              {LINUX_HEAD "{\"personality\": {\"domain\": \"LINUX64\"}}}", EINVAL,
               "config.json:2:37: linux.personality.domain: \"LINUX64\" is not one of LINUX, "
               "LINUX32"},
              {LINUX_HEAD "{\"personality\": {\"flags\": []}}}", EINVAL,
               "config.json:2:26: linux.personality.domain: missing (required)"},
              {LINUX_HEAD "{\"timeOffsets\": {\"monotonic\": {\"secs\": \"1\"}}}}", EINVAL,
               "config.json:2:49: linux.timeOffsets.monotonic.secs: expected an integer, got a "
               "string"},
              {LINUX_HEAD "{\"mountLabel\": 1}}", EINVAL,
               "config.json:2:25: linux.mountLabel: expected a string, got a number"},
              {LINUX_HEAD "{\"cgroupsPath\": {}}}", EINVAL,
               "config.json:2:26: linux.cgroupsPath: expected a string, got an object"});
        assert_no_leaks();
}

#define RES_HEAD LINUX_HEAD "{\"resources\": "

Test(oci_config_errors, resources_errors)
{
        CASES({RES_HEAD "{\"memory\": {\"limit\": \"1\"}}}}", EINVAL,
               "config.json:2:45: linux.resources.memory.limit: expected an integer, got a "
               "string"},
              {RES_HEAD "{\"memory\": {\"limit\": 200, \"swap\": 100}}}}", EINVAL,
               "config.json:2:58: linux.resources.memory.swap: 100 is below limit 200 (swap "
               "counts memory+swap)"},
              {RES_HEAD "{\"memory\": {\"swappiness\": 101}}}}", ERANGE,
               "config.json:2:50: linux.resources.memory.swappiness: 101 is out of range "
               "(0..100)"},
              {RES_HEAD "{\"memory\": {\"disableOOMKiller\": \"true\"}}}}", EINVAL,
               "config.json:2:56: linux.resources.memory.disableOOMKiller: expected a boolean, "
               "got a string"},
              {RES_HEAD "{\"cpu\": {\"quota\": 100, \"burst\": 200}}}}", EINVAL,
               "config.json:2:56: linux.resources.cpu.burst: 200 is larger than quota 100"},
              {RES_HEAD "{\"cpu\": {\"idle\": 2}}}}", ERANGE,
               "config.json:2:41: linux.resources.cpu.idle: 2 is out of range (0..1)"},
              {RES_HEAD "{\"cpu\": {\"shares\": -1}}}}", ERANGE,
               "config.json:2:43: linux.resources.cpu.shares: -1 is out of range "
               "(0..18446744073709551615)"},
              {RES_HEAD "{\"cpu\": {\"cpus\": 3}}}}", EINVAL,
               "config.json:2:41: linux.resources.cpu.cpus: expected a string, got a number"},
              {RES_HEAD "{\"pids\": {\"limit\": \"max\"}}}}", EINVAL,
               "config.json:2:43: linux.resources.pids.limit: expected an integer, got a "
               "string"},
              {RES_HEAD "{\"blockIO\": {\"weight\": 65536}}}}", ERANGE,
               "config.json:2:47: linux.resources.blockIO.weight: 65536 is out of range "
               "(0..65535)"},
              {RES_HEAD "{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0}]}}}}",
               EINVAL,
               "config.json:2:54: linux.resources.blockIO.weightDevice[0]: needs weight or "
               "leafWeight (or both)"},
              {RES_HEAD "{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"weight\": 10}]}}}}",
               EINVAL,
               "config.json:2:54: linux.resources.blockIO.weightDevice[0].minor: missing "
               "(required)"},
              {RES_HEAD "{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": "
                        "0}]}}}}",
               EINVAL,
               "config.json:2:63: linux.resources.blockIO.throttleReadBpsDevice[0].rate: "
               "missing (required)"},
              {RES_HEAD "{\"blockIO\": {\"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": "
                        "0, \"rate\": -5}]}}}}",
               ERANGE,
               "config.json:2:98: linux.resources.blockIO.throttleWriteIOPSDevice[0].rate: -5 "
               "is out of range (0..18446744073709551615)"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"2M\", \"limit\": 1}]}}}", EINVAL,
               "config.json:2:57: linux.resources.hugepageLimits[0].pageSize: \"2M\" is not a "
               "page size such as 2MB"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"MB\", \"limit\": 1}]}}}", EINVAL,
               "config.json:2:57: linux.resources.hugepageLimits[0].pageSize: \"MB\" is not a "
               "page size such as 2MB"},
              {RES_HEAD "{\"hugepageLimits\": [{\"pageSize\": \"2MB\"}]}}}", EINVAL,
               "config.json:2:44: linux.resources.hugepageLimits[0].limit: missing (required)"},
              {RES_HEAD "{\"devices\": [{\"access\": \"rwm\"}]}}}", EINVAL,
               "config.json:2:37: linux.resources.devices[0].allow: missing (required)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: \"rwx\" is not some of r, "
               "w, m (each once)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"rr\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: \"rr\" is not some of r, w, "
               "m (each once)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"access\": \"\"}]}}}", EINVAL,
               "config.json:2:63: linux.resources.devices[0].access: must not be empty (use "
               "some of r, w, m)"},
              {RES_HEAD "{\"devices\": [{\"allow\": true, \"type\": \"u\"}]}}}", EINVAL,
               "config.json:2:61: linux.resources.devices[0].type: \"u\" is not one of a, b, c"},
              {RES_HEAD "{\"devices\": [{\"allow\": \"yes\"}]}}}", EINVAL,
               "config.json:2:47: linux.resources.devices[0].allow: expected a boolean, got a "
               "string"},
              {RES_HEAD "{\"unified\": {\"memory.max\": 5}}}}", EINVAL,
               "config.json:2:51: linux.resources.unified[\"memory.max\"]: expected a string, "
               "got a number"});
        assert_no_leaks();
}

#define SECCOMP_HEAD LINUX_HEAD "{\"seccomp\": "

Test(oci_config_errors, seccomp_errors)
{
        CASES({SECCOMP_HEAD "{\"syscalls\": []}}}", EINVAL,
               "config.json:2:22: linux.seccomp.defaultAction: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_FOO\"}}}", EINVAL,
               "config.json:2:40: linux.seccomp.defaultAction: \"SCMP_ACT_FOO\" is not one of "
               "SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, "
               "SCMP_ACT_TRAP, SCMP_ACT_LOG, SCMP_ACT_TRACE, SCMP_ACT_NOTIFY"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": 1}}}",
               EINVAL,
               "config.json:2:77: linux.seccomp.defaultErrnoRet: SCMP_ACT_ALLOW takes no errno "
               "(only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": -1}}}",
               ERANGE,
               "config.json:2:77: linux.seccomp.defaultErrnoRet: -1 is out of range "
               "(0..18446744073709551615)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 4096}]}}}",
               ERANGE,
               "config.json:2:128: linux.seccomp.syscalls[0].errnoRet: 4096 is out of range for "
               "SCMP_ACT_ERRNO (0..4095)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_TRACE\", \"errnoRet\": 65536}]}}}",
               ERANGE,
               "config.json:2:128: linux.seccomp.syscalls[0].errnoRet: 65536 is out of range for "
               "SCMP_ACT_TRACE (0..65535)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_KILL\", \"errnoRet\": 1}]}}}",
               EINVAL,
               "config.json:2:127: linux.seccomp.syscalls[0].errnoRet: SCMP_ACT_KILL_THREAD "
               "takes no errno (only SCMP_ACT_ERRNO and SCMP_ACT_TRACE do)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[], \"action\": \"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:81: linux.seccomp.syscalls[0].names: must not be empty"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"\"], \"action\": \"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:82: linux.seccomp.syscalls[0].names[0]: must not be empty"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"action\": "
                            "\"SCMP_ACT_LOG\"}]}}}",
               EINVAL, "config.json:2:71: linux.seccomp.syscalls[0].names: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"]}]}}}",
               EINVAL, "config.json:2:71: linux.seccomp.syscalls[0].action: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 6, "
                            "\"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}}}",
               ERANGE,
               "config.json:2:133: linux.seccomp.syscalls[0].args[0].index: 6 is out of range "
               "(0..5)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 0, "
                            "\"value\": 1, \"op\": \"SCMP_CMP_FOO\"}]}]}}}",
               EINVAL,
               "config.json:2:154: linux.seccomp.syscalls[0].args[0].op: \"SCMP_CMP_FOO\" is "
               "not one of SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_EQ, SCMP_CMP_GE, "
               "SCMP_CMP_GT, SCMP_CMP_MASKED_EQ"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                            "[\"a\"], \"action\": \"SCMP_ACT_LOG\", \"args\": [{\"index\": 0, "
                            "\"op\": \"SCMP_CMP_EQ\"}]}]}}}",
               EINVAL,
               "config.json:2:123: linux.seccomp.syscalls[0].args[0].value: missing (required)"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
                            "[\"SCMP_ARCH_Z80\"]}}}",
               EINVAL,
               "config.json:2:76: linux.seccomp.architectures[0]: unknown architecture "
               "\"SCMP_ARCH_Z80\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
                            "[\"x86_64\"]}}}",
               EINVAL,
               "config.json:2:76: linux.seccomp.architectures[0]: unknown architecture "
               "\"x86_64\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": "
                            "[\"SECCOMP_FILTER_FLAG_FOO\"]}}}",
               EINVAL,
               "config.json:2:68: linux.seccomp.flags[0]: unknown seccomp flag "
               "\"SECCOMP_FILTER_FLAG_FOO\""},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerMetadata\": "
                            "\"x\"}}}",
               EINVAL,
               "config.json:2:78: linux.seccomp.listenerMetadata: must not be set without "
               "listenerPath"},
              {SECCOMP_HEAD "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": "
                            "\"agent.sock\"}}}",
               EINVAL,
               "config.json:2:74: linux.seccomp.listenerPath: \"agent.sock\" is not an absolute "
               "path"});
        assert_no_leaks();
}
