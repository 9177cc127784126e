# The WebAssembly build (make wasm): Emscripten, no OpenBLAS (the portable
# GEMM of src/cpu/gemm_portable.c), no OpenMP (one thread), and the WebGPU
# backend bound to the host's navigator.gpu (src/webgpu/browser) instead of
# a WebGPU library loaded with dlopen.
set(WT_LIB_DEPS m)
set(WT_LIB_DEFS WT_BROWSER_WEBGPU)
set(WT_EXTRA_SOURCE_GLOBS "${CMAKE_SOURCE_DIR}/src/webgpu/browser/*.c")
# "#pragma omp" lines are plain loops without OpenMP, which leaves the
# variables only their clauses read unused (the native build, with OpenMP,
# keeps the unused-variable check); clang, unlike the native gcc, also
# flags the compile-time-only table of tests/op_table.c. SIMD128 lets the
# compiler vectorise the loops (every current browser and Node have it).
add_compile_options(-msimd128)
set(WT_WASM_NO_WARN -Wno-source-uses-openmp -Wno-unused-variable
                    -Wno-unneeded-internal-declaration)

# Blocking waits on the GPU (a map, a device request) suspend the wasm
# stack through ASYNCIFY: every program that links the library needs it.
set(WT_WASM_LINK_OPTIONS
  -sASYNCIFY -sASYNCIFY_STACK_SIZE=65536 -sALLOW_MEMORY_GROWTH=1)

macro(wt_wasm_library)
  set_target_properties(webtensor_obj PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(webtensor_obj PRIVATE ${WT_WASM_NO_WARN})
  add_library(webtensor STATIC $<TARGET_OBJECTS:webtensor_obj>)
  target_include_directories(webtensor PUBLIC "$<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>")
  target_link_libraries(webtensor PRIVATE m)
  target_link_options(webtensor INTERFACE ${WT_WASM_LINK_OPTIONS})
  add_library(webtensor_static ALIAS webtensor)
endmacro()

# The test suites that run in Node and in Chromium (tests/wasm), and the
# benchmark program.
macro(wt_wasm_programs)
  if(WT_BUILD_TESTS)
    add_subdirectory(tests/wasm)
  endif()
endmacro()
