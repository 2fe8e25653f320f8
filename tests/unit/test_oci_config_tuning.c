/* SPDX-License-Identifier: MIT */
/*
 * process.scheduler, process.ioPriority and process.execCPUAffinity (the
 * runtime-spec 1.2 fields), and linux.intelRdt: what the parser keeps, and
 * each rejection with its location (runc's checks).
 */
#include "oci_config_test.h"

Test(oci_config_tuning, the_values_are_kept)
{
        struct oci_config c;
        parse_ok(PROCESS_HEAD "\"scheduler\": {\"policy\": \"SCHED_DEADLINE\", \"flags\": "
                              "[\"SCHED_FLAG_RESET_ON_FORK\", \"SCHED_FLAG_RECLAIM\"], "
                              "\"runtime\": 10000, \"deadline\": 20000, \"period\": 30000},\n"
                              "\"ioPriority\": {\"class\": \"IOPRIO_CLASS_RT\", \"priority\": 7},\n"
                              "\"execCPUAffinity\": {\"initial\": \"0-1\", \"final\": \"\"}}}",
                 &c);
        const struct oci_scheduler *s = c.process->scheduler;
        cr_assert_not_null(s);
        cr_assert_eq(s->policy, OCI_SCHED_DEADLINE);
        cr_assert_eq(s->flags, 0x03);
        cr_assert_eq(s->runtime, 10000);
        cr_assert_eq(s->deadline, 20000);
        cr_assert_eq(s->period, 30000);
        cr_assert_not(s->nice.set);
        cr_assert_eq(c.process->io_priority->klass, OCI_IOPRIO_CLASS_RT);
        cr_assert_eq(c.process->io_priority->priority, 7);
        cr_assert_str_eq(c.process->exec_cpu_affinity->initial, "0-1");
        cr_assert_str_eq(c.process->exec_cpu_affinity->final, "");
        oci_config_free(&c);
        assert_no_leaks();
}

Test(oci_config_tuning, cpu_lists)
{
        cpu_set_t set;
        cr_assert_eq(oci_cpu_list_parse("0-3,7,9-10", &set), 0);
        cr_assert_eq(CPU_COUNT(&set), 7);
        cr_assert(CPU_ISSET(0, &set) && CPU_ISSET(3, &set) && CPU_ISSET(7, &set) &&
                  CPU_ISSET(10, &set) && !CPU_ISSET(8, &set));
        cr_assert_eq(oci_cpu_list_parse("5", &set), 0);
        cr_assert_eq(CPU_COUNT(&set), 1);
        static const char *const bad[] = {"",    ",",   "1,", ",1",   "1-",  "-1",
                                          "3-1", "1 2", "a",  "1--2", "1,,2"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_expect_eq(oci_cpu_list_parse(bad[i], &set), -EINVAL, "\"%s\"", bad[i]);
        cr_expect_eq(oci_cpu_list_parse("0-1024", &set), -ERANGE);
        cr_expect_eq(oci_cpu_list_parse("99999999999999999999", &set), -ERANGE);
}

Test(oci_config_tuning, rejections)
{
        CASES({PROCESS_HEAD "\"scheduler\": {\"nice\": 1}}}", EINVAL,
               "config.json:2:54: process.scheduler.policy: missing (required)"},
              {PROCESS_HEAD "\"scheduler\": {\"policy\": \"SCHED_FAST\"}}}", EINVAL,
               "config.json:2:65: process.scheduler.policy: \"SCHED_FAST\" is not one of "
               "SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_ISO, SCHED_IDLE, "
               "SCHED_DEADLINE"},
              {PROCESS_HEAD "\"scheduler\": {\"policy\": \"SCHED_BATCH\", \"nice\": -21}}}", ERANGE,
               "config.json:2:88: process.scheduler.nice: -21 is out of range -20..19 for "
               "SCHED_BATCH"},
              {PROCESS_HEAD "\"scheduler\": {\"policy\": \"SCHED_IDLE\", \"priority\": 1}}}",
               EINVAL,
               "config.json:2:91: process.scheduler.priority: only SCHED_FIFO and SCHED_RR "
               "take a priority, not SCHED_IDLE"},
              {PROCESS_HEAD "\"scheduler\": {\"policy\": \"SCHED_FIFO\", \"period\": 1}}}", EINVAL,
               "config.json:2:89: process.scheduler.period: only SCHED_DEADLINE takes one, "
               "not SCHED_FIFO"},
              {PROCESS_HEAD "\"ioPriority\": {\"class\": \"IOPRIO_CLASS_BE\", \"priority\": "
                            "8}}}",
               ERANGE, "config.json:2:96: process.ioPriority.priority: 8 is out of range (0..7)"},
              {PROCESS_HEAD "\"ioPriority\": {\"priority\": 1}}}", EINVAL,
               "config.json:2:55: process.ioPriority.class: missing (required)"},
              {HEAD "\"linux\": {\"resources\": {\"rdma\": 1}}}", EINVAL,
               "config.json:2:33: linux.resources.rdma: expected an object, got a number"},
              {PROCESS_HEAD "\"execCPUAffinity\": {\"final\": \"0-\"}}}", EINVAL,
               "config.json:2:70: process.execCPUAffinity.final: \"0-\" is not a CPU list "
               "(\"0-3,7\": numbers and ranges, comma-separated)"});
}
