# Warnings and optimisation flags shared by every strom target.
add_library(strom_build_flags INTERFACE)
target_compile_options(strom_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wno-unused-parameter
  # sqrt may set errno, which keeps g++ from vectorising the updaters' loops (measured 4x on
  # Adam); nothing in strom reads errno after a maths function.
  -fno-math-errno
  $<$<CONFIG:Release>:-O3>)
if(STROM_NATIVE)
  target_compile_options(strom_build_flags INTERFACE -march=native)
endif()
install(TARGETS strom_build_flags EXPORT strom-targets)
