#include "harness.h"
const struct test mt_tests[] = { { NULL } };
