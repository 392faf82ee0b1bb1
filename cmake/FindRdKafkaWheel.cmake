# Locates librdkafka in the pinned confluent-kafka wheel inside the repo's virtualenv
# (docs/architecture.md "Toolchain facts"): Debian 12's librdkafka is 2.0.2, which cannot refill
# its prefetch queue until a fixed 1 s broker-thread timeout once the queue is full
# (`fetch.queue.backoff.ms` arrived in 2.4.0). With it Floe had to choose between ~110 MB of
# queued messages and a drain capped by that 1 s cadence.
#
# The wheel's library exports only rd_kafka_* (OpenSSL, zstd, lz4, SASL are linked in and
# hidden), and it keeps librdkafka's soname major (…so.1), the C ABI of Debian's headers.
# The headers come from Debian's librdkafka-dev (2.0.2): Floe uses only that API subset, and
# newer properties are plain strings to rd_kafka_conf_set.
#
# Inputs:  FLOE_PYTHON (default <repo>/.venv/bin/python)
# Outputs: imported target RdKafka::rdkafka, RDKAFKA_WHEEL_LIBDIR (for RPATH).
if(TARGET RdKafka::rdkafka)
  return()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/FloePython.cmake")
execute_process(
  COMMAND "${FLOE_PYTHON}" -c
    "import confluent_kafka, glob, os; d = os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), 'confluent_kafka.libs'); print(d); print(';'.join(sorted(glob.glob(os.path.join(d, 'librdkafka*.so*'))))); print(confluent_kafka.libversion()[0])"
  OUTPUT_VARIABLE _ck_out
  RESULT_VARIABLE _ck_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _ck_rc EQUAL 0)
  message(FATAL_ERROR "confluent_kafka not importable with ${FLOE_PYTHON}; run `make setup` first")
endif()
string(REPLACE "\n" "|" _ck_lines "${_ck_out}")
string(REPLACE "|" ";" _ck_list "${_ck_lines}")
list(GET _ck_list 0 RDKAFKA_WHEEL_LIBDIR)
list(LENGTH _ck_list _ck_len)
math(EXPR _ck_last "${_ck_len} - 1")
list(GET _ck_list ${_ck_last} RDKAFKA_WHEEL_VERSION)
list(GET _ck_list 1 RDKAFKA_WHEEL_LIB)
if(NOT RDKAFKA_WHEEL_LIB OR NOT EXISTS "${RDKAFKA_WHEEL_LIB}")
  message(FATAL_ERROR "no librdkafka*.so* in ${RDKAFKA_WHEEL_LIBDIR} (confluent-kafka wheel)")
endif()
find_package(PkgConfig REQUIRED)
pkg_check_modules(RDKAFKA_HEADERS REQUIRED rdkafka)
add_library(RdKafka::rdkafka SHARED IMPORTED)
set_target_properties(RdKafka::rdkafka PROPERTIES
  IMPORTED_LOCATION "${RDKAFKA_WHEEL_LIB}"
  INTERFACE_INCLUDE_DIRECTORIES "${RDKAFKA_HEADERS_INCLUDEDIR}")
message(STATUS "librdkafka ${RDKAFKA_WHEEL_VERSION} from the confluent-kafka wheel: "
               "${RDKAFKA_WHEEL_LIB} (headers: Debian ${RDKAFKA_HEADERS_VERSION})")
