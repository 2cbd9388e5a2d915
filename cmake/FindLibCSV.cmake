# Finds libcsv (RFC 4180 CSV parser and writer; Debian package libcsv-dev), which ships no CMake config.
# Defines LibCSV_FOUND and the imported target LibCSV::LibCSV. Installed beside torchfitConfig.cmake,
# whose find_dependency(LibCSV) uses it: the static torchfit library links libcsv privately, so a
# program linking torchfit needs the library file (not its header).
find_path(LIBCSV_INCLUDE_DIR NAMES csv.h)
find_library(LIBCSV_LIBRARY NAMES csv)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibCSV REQUIRED_VARS LIBCSV_LIBRARY LIBCSV_INCLUDE_DIR)
if(LibCSV_FOUND AND NOT TARGET LibCSV::LibCSV)
  add_library(LibCSV::LibCSV UNKNOWN IMPORTED)
  set_target_properties(LibCSV::LibCSV PROPERTIES
    IMPORTED_LOCATION "${LIBCSV_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBCSV_INCLUDE_DIR}")
endif()
mark_as_advanced(LIBCSV_INCLUDE_DIR LIBCSV_LIBRARY)
