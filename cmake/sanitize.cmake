# WT_SANITIZE=ON builds everything (library, tests, tools) with
# AddressSanitizer + UndefinedBehaviorSanitizer; `make test-sanitize` uses it
# in a build folder of its own. UB stops the program (no recovery), so a
# test that hits it fails.
option(WT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(WT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# WT_FUZZ=ON (clang only) instruments everything for libFuzzer, with ASan
# and UBSan, and makes tests/fuzz/fuzz_diff a fuzz target (`make test-fuzz`).
option(WT_FUZZ "Build the libFuzzer targets (clang)" OFF)
if(WT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "WT_FUZZ needs clang (CC=clang)")
  endif()
  # -Wno-pass-failed: with the sanitizers' checks some `omp simd` loops
  # cannot vectorise, which clang reports as a warning.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -Wno-pass-failed)
  add_link_options(-fsanitize=address,undefined)
endif()

# WT_TSAN=ON (clang) builds with ThreadSanitizer; `make test-tsan` builds
# only the threads test there and runs the tests labelled "tsan".
option(WT_TSAN "Build with ThreadSanitizer (clang)" OFF)
if(WT_TSAN)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "WT_TSAN needs clang (CC=clang)")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -Wno-pass-failed)
  add_link_options(-fsanitize=thread)
endif()
