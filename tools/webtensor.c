#include <stdio.h>
#include <string.h>

#include "bench_engine.h"
#include "webtensor.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("webtensor %s\n", WT_VERSION_STRING);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "bench") == 0)
        return bench_main(argc - 2, argv + 2);
    fprintf(stderr, "usage: webtensor info|bench|version|help\n");
    return 2;
}
