# Warnings and optimisation flags shared by every strom target.
add_library(strom_build_flags INTERFACE)
target_compile_options(strom_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wno-unused-parameter
  $<$<CONFIG:Release>:-O3>)
if(STROM_NATIVE)
  target_compile_options(strom_build_flags INTERFACE -march=native)
endif()
install(TARGETS strom_build_flags EXPORT strom-targets)
