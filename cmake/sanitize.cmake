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
