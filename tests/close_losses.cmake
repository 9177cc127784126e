# Runs a program twice, with ARGS and with ARGS plus EXTRA, and fails unless
# both succeed and print the same "step K loss X" and "validation loss X"
# lines up to TOL (an absolute difference, as a decimal: 0.0001) in each
# value (at least two of them are required, so a run that prints none
# fails). Used for two ways of computing the same model whose losses agree
# up to the order of float additions (same_losses.cmake wants them bit for
# bit).
#   cmake -DPROG=exe -DARGS="a|b|c" -DEXTRA="--qkv|separate" -DTOL=0.0001 -P close_losses.cmake
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" extra "${EXTRA}")
execute_process(COMMAND ${PROG} ${args} RESULT_VARIABLE rc_a OUTPUT_VARIABLE out_a ERROR_VARIABLE err_a)
execute_process(COMMAND ${PROG} ${args} ${extra} RESULT_VARIABLE rc_b OUTPUT_VARIABLE out_b ERROR_VARIABLE err_b)
if(NOT rc_a EQUAL 0 OR NOT rc_b EQUAL 0)
  message(FATAL_ERROR "a run failed: ${rc_a} / ${rc_b}\n${out_a}${err_a}\n---\n${out_b}${err_b}")
endif()

# A plain decimal (digits, a point, digits) in units of 1e-9, as an integer
# CMake's math() takes.
function(nano value out)
  if(NOT value MATCHES "^([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "not a plain decimal: ${value}")
  endif()
  set(whole "${CMAKE_MATCH_1}")
  set(frac "${CMAKE_MATCH_3}000000000")
  string(SUBSTRING "${frac}" 0 9 frac)
  # Without its leading zeros (math() reads no octal, but REGEX REPLACE
  # would match ^ again after each replacement).
  string(REGEX MATCH "[1-9][0-9]*" frac "${frac}")
  if(frac STREQUAL "")
    set(frac 0)
  endif()
  math(EXPR n "${whole} * 1000000000 + ${frac}")
  set(${out} ${n} PARENT_SCOPE)
endfunction()

string(REGEX MATCHALL "step +[0-9]+ loss [0-9.]+|validation loss [0-9.]+" lines_a "${out_a}")
string(REGEX MATCHALL "step +[0-9]+ loss [0-9.]+|validation loss [0-9.]+" lines_b "${out_b}")
list(LENGTH lines_a n)
list(LENGTH lines_b n_b)
if(n LESS 2 OR NOT n EQUAL n_b OR NOT "${out_a}" MATCHES "validation loss")
  message(FATAL_ERROR "no loss lines to compare, or not as many (${n}, ${n_b}):\n${out_a}\n---\n${out_b}")
endif()
nano("${TOL}" tol)
set(worst 0)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  list(GET lines_a ${i} la)
  list(GET lines_b ${i} lb)
  string(REGEX REPLACE " [0-9.]+$" "" key_a "${la}")
  string(REGEX REPLACE " [0-9.]+$" "" key_b "${lb}")
  string(REGEX MATCH "[0-9.]+$" va "${la}")
  string(REGEX MATCH "[0-9.]+$" vb "${lb}")
  nano("${va}" a)
  nano("${vb}" b)
  math(EXPR d "${a} - ${b}")
  if(d LESS 0)
    math(EXPR d "0 - ${d}")
  endif()
  if(d GREATER worst)
    set(worst ${d})
  endif()
  if(NOT key_a STREQUAL key_b OR d GREATER tol)
    message(FATAL_ERROR "the losses differ by more than ${TOL} (${extra}): ${la} / ${lb}\n${lines_a}\n---\n${lines_b}")
  endif()
endforeach()
message(STATUS "${n} loss lines within ${TOL} with and without ${extra} (largest difference ${worst}e-9)")
