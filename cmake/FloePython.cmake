# FLOE_PYTHON: the interpreter of the repo's virtualenv (created by `make setup`), whose pinned
# wheels provide Arrow/Parquet (FindArrowWheel.cmake) and librdkafka (FindRdKafkaWheel.cmake).
if(NOT FLOE_PYTHON)
  set(FLOE_PYTHON "${CMAKE_SOURCE_DIR}/.venv/bin/python")
endif()
