# Runs a program twice, with ARGS and with ARGS plus EXTRA, and fails unless
# both succeed and print the same "step K loss X" and "validation loss"
# lines (at least one of each kind is required, so a run that prints none
# fails). Used for replayed-graph training against eager training, whose
# losses must agree bit for bit (printed with 9 significant digits).
#   cmake -DPROG=exe -DARGS="a|b|c" -DEXTRA="--graph" -P same_losses.cmake
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" extra "${EXTRA}")
execute_process(COMMAND ${PROG} ${args} RESULT_VARIABLE rc_a OUTPUT_VARIABLE out_a ERROR_VARIABLE err_a)
execute_process(COMMAND ${PROG} ${args} ${extra} RESULT_VARIABLE rc_b OUTPUT_VARIABLE out_b ERROR_VARIABLE err_b)
if(NOT rc_a EQUAL 0 OR NOT rc_b EQUAL 0)
  message(FATAL_ERROR "a run failed: ${rc_a} / ${rc_b}\n${out_a}${err_a}\n---\n${out_b}${err_b}")
endif()
string(REGEX MATCHALL "step +[0-9]+ loss [^\n]*|validation loss [^\n]*" lines_a "${out_a}")
string(REGEX MATCHALL "step +[0-9]+ loss [^\n]*|validation loss [^\n]*" lines_b "${out_b}")
list(LENGTH lines_a n)
if(n LESS 2 OR NOT "${out_a}" MATCHES "validation loss")
  message(FATAL_ERROR "no loss lines to compare:\n${out_a}")
endif()
if(NOT "${lines_a}" STREQUAL "${lines_b}")
  message(FATAL_ERROR "the losses differ (${extra}):\n${lines_a}\n---\n${lines_b}")
endif()
message(STATUS "${n} loss lines identical with and without ${extra}")
