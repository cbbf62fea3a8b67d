# Warnings and optimisation flags shared by every strom target.
add_library(strom_build_flags INTERFACE)
# nvcc takes none of the host compiler's warning flags: they apply to C++ sources only.
target_compile_options(strom_build_flags INTERFACE
  "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wpedantic;-Wno-unused-parameter>"
  # sqrt may set errno, which keeps g++ from vectorising the updaters' loops (measured 4x on
  # Adam); nothing in strom reads errno after a maths function.
  $<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>
  $<$<CONFIG:Release>:-O3>)
if(STROM_NATIVE)
  target_compile_options(strom_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
install(TARGETS strom_build_flags EXPORT strom-targets)
