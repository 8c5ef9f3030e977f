#include "harness.h"
const struct test frag_tests[] = { { NULL } };
