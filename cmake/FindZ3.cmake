# FindZ3: Debian's libz3-dev ships no CMake config, so locate the header and library here.
# Defines Z3_FOUND, Z3_INCLUDE_DIR, Z3_LIBRARY and the imported target act::z3.
find_path(Z3_INCLUDE_DIR NAMES z3++.h PATH_SUFFIXES z3)
find_library(Z3_LIBRARY NAMES z3 libz3)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Z3 REQUIRED_VARS Z3_LIBRARY Z3_INCLUDE_DIR)
if(Z3_FOUND AND NOT TARGET act::z3)
  add_library(act::z3 UNKNOWN IMPORTED)
  set_target_properties(act::z3 PROPERTIES
    IMPORTED_LOCATION "${Z3_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Z3_INCLUDE_DIR}")
endif()
mark_as_advanced(Z3_INCLUDE_DIR Z3_LIBRARY)
