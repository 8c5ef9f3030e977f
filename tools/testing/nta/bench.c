#include "harness.h"
const struct test bench_tests[] = { { NULL } };
