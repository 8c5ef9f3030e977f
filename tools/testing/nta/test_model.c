#include "harness.h"
const struct test model_tests[] = { { NULL } };
