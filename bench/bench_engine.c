#include "bench_engine.h"

#include <stdio.h>

int bench_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "webtensor bench: not implemented yet\n");
    return 1;
}
