# Run by `cmake --install`: installs the public headers of strom::actors and strom::strom, which
# are what strom/strom.hpp offers a host program: the headers reachable from it through
# `#include "strom/..."`. Every other header of actors/ and runtime/ is internal (an actor's
# steps, the job_master's parts, the simulator's model) and stays out of the installed tree,
# so a host cannot come to depend on it. Computed when installing, from the sources as they
# are, so that the list never drifts from the includes. strom::compute's and strom::schema's
# headers are all public and installed by their own folders.
#
# Expects STROM_SOURCE_DIR and STROM_INCLUDE_DESTINATION (absolute, under the prefix).
set(source_dirs ${STROM_SOURCE_DIR}/actors ${STROM_SOURCE_DIR}/runtime)
set(pending strom/strom.hpp)
set(seen)
while(pending)
  list(POP_FRONT pending header)
  list(FIND seen ${header} known)  # not IN_LIST: an install script runs under old policies
  if(NOT known EQUAL -1)
    continue()
  endif()
  list(APPEND seen ${header})
  foreach(dir IN LISTS source_dirs)
    if(NOT EXISTS ${dir}/${header})
      continue()
    endif()
    get_filename_component(folder ${header} DIRECTORY)
    file(INSTALL ${dir}/${header} DESTINATION ${STROM_INCLUDE_DESTINATION}/${folder})
    file(STRINGS ${dir}/${header} includes REGEX "^#include [\"<]strom/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include [\"<]([^\">]+)[\">].*" "\\1" included "${line}")
      list(APPEND pending ${included})
    endforeach()
  endforeach()
endwhile()
