/* SPDX-License-Identifier: MIT */
#pragma once

/* imgtool seed KEY=VALUE... -- ARGV... (tests/registry/seed.c) */
int seed_main(int argc, char **argv);
