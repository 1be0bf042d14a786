# example.text_pipeline_resume: runs text-pipeline on a fresh store with --stop-after, which
# stops without closing the engine (exit 3, as a killed process would), then runs it again on
# the same store, which must continue the same workflow to done.
#   cmake -DPROGRAM=path/to/text-pipeline -DSTORE=path/to/store.sqlite -P RunResume.cmake
foreach(suffix IN ITEMS "" "-wal" "-shm" "-journal")
  file(REMOVE "${STORE}${suffix}")
endforeach()

foreach(stop IN ITEMS 5 25)
  execute_process(COMMAND "${PROGRAM}" --store "${STORE}" --stop-after ${stop}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT code EQUAL 3)
    message(FATAL_ERROR "--stop-after ${stop}: expected exit 3, got ${code}")
  endif()
endforeach()

execute_process(COMMAND "${PROGRAM}" --store "${STORE}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "continuing: expected exit 0, got ${code}")
endif()
if(NOT out MATCHES "Workflow wf-1 \\(continuing\\)")
  message(FATAL_ERROR "the second run did not continue workflow wf-1")
endif()
if(NOT out MATCHES "OK: the workflow is done")
  message(FATAL_ERROR "the continued run did not finish")
endif()
foreach(suffix IN ITEMS "" "-wal" "-shm" "-journal")
  file(REMOVE "${STORE}${suffix}")
endforeach()
