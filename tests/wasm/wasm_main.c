/* main of every test program compiled to WebAssembly: the suite's own main
 * is renamed wt_suite_main. Once a program has waited on the GPU
 * (ASYNCIFY unwinds and rewinds main), returning from main no longer ends
 * it with that status; exit() does, in Node (the process status) and in
 * the browser (Module.onExit, which the test page turns into its last
 * line). */
#include <stdlib.h>

#undef main /* the target renames main for the suite sources, not here */

int wt_suite_main(int argc, char **argv);

int main(int argc, char **argv) { exit(wt_suite_main(argc, argv)); }
