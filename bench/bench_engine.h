/* Benchmark engine of the `webtensor bench` command. */
#ifndef WEBTENSOR_BENCH_ENGINE_H
#define WEBTENSOR_BENCH_ENGINE_H

int bench_main(int argc, char **argv);

#endif
