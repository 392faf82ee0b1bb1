# Locates the Arrow C++ and Parquet headers and shared libraries shipped in the pinned pyarrow
# wheel inside the repo's virtualenv (ARCHITECTURE.md §7: Arrow is not packaged in Debian 12).
#
# Inputs:  FLOE_PYTHON (default <repo>/.venv/bin/python)
# Outputs: imported targets Arrow::arrow, Arrow::parquet, Arrow::s3 (S3FileSystem) and
#          Arrow::compute (compute functions: sort, take),
#          ARROW_WHEEL_LIBDIR (for RPATH).
if(TARGET Arrow::arrow)
  return()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/FloePython.cmake")
execute_process(
  COMMAND "${FLOE_PYTHON}" -c
    "import pyarrow as pa; print(pa.get_include()); print(pa.get_library_dirs()[0]); print(pa.__version__)"
  OUTPUT_VARIABLE _pa_out
  RESULT_VARIABLE _pa_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pa_rc EQUAL 0)
  message(FATAL_ERROR "pyarrow not importable with ${FLOE_PYTHON}; run `make setup` first")
endif()
string(REPLACE "\n" ";" _pa_lines "${_pa_out}")
list(GET _pa_lines 0 ARROW_WHEEL_INCLUDE)
list(GET _pa_lines 1 ARROW_WHEEL_LIBDIR)
list(GET _pa_lines 2 ARROW_WHEEL_VERSION)
find_library(ARROW_WHEEL_LIB NAMES arrow PATHS "${ARROW_WHEEL_LIBDIR}" NO_DEFAULT_PATH)
find_library(PARQUET_WHEEL_LIB NAMES parquet PATHS "${ARROW_WHEEL_LIBDIR}" NO_DEFAULT_PATH)
find_library(ARROW_S3_WHEEL_LIB NAMES arrow_s3 PATHS "${ARROW_WHEEL_LIBDIR}" NO_DEFAULT_PATH)
find_library(ARROW_COMPUTE_WHEEL_LIB NAMES arrow_compute PATHS "${ARROW_WHEEL_LIBDIR}"
             NO_DEFAULT_PATH)
if(NOT ARROW_WHEEL_LIB OR NOT PARQUET_WHEEL_LIB OR NOT ARROW_S3_WHEEL_LIB
   OR NOT ARROW_COMPUTE_WHEEL_LIB)
  message(FATAL_ERROR "libarrow.so/libparquet.so not found in ${ARROW_WHEEL_LIBDIR}; "
                      "run `.venv/bin/python -c 'import pyarrow; pyarrow.create_library_symlinks()'`")
endif()
add_library(Arrow::arrow SHARED IMPORTED)
set_target_properties(Arrow::arrow PROPERTIES
  IMPORTED_LOCATION "${ARROW_WHEEL_LIB}"
  INTERFACE_INCLUDE_DIRECTORIES "${ARROW_WHEEL_INCLUDE}"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ARROW_WHEEL_INCLUDE}")
add_library(Arrow::parquet SHARED IMPORTED)
set_target_properties(Arrow::parquet PROPERTIES
  IMPORTED_LOCATION "${PARQUET_WHEEL_LIB}"
  INTERFACE_LINK_LIBRARIES Arrow::arrow)
add_library(Arrow::s3 SHARED IMPORTED)
set_target_properties(Arrow::s3 PROPERTIES
  IMPORTED_LOCATION "${ARROW_S3_WHEEL_LIB}"
  INTERFACE_LINK_LIBRARIES Arrow::arrow)
add_library(Arrow::compute SHARED IMPORTED)
set_target_properties(Arrow::compute PROPERTIES
  IMPORTED_LOCATION "${ARROW_COMPUTE_WHEEL_LIB}"
  INTERFACE_LINK_LIBRARIES Arrow::arrow)
message(STATUS "Arrow ${ARROW_WHEEL_VERSION} from pyarrow wheel: ${ARROW_WHEEL_LIBDIR}")
