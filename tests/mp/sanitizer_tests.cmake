# The multi-process tests a sanitizer build runs (label mp-san; registered
# only when WEFT_SANITIZE is set). tools/test.sh builds just the targets these
# and the unit tests need and runs `-L '^(unit|mp-san)$'`. Chosen for
# coverage per second (TSan runs the data paths ~5-10x slower, so the full mp
# tier would take most of an hour on 2 cores): a short soak covers every
# collective, datatype and transport mix; mismatch covers the call headers
# (boards, TCP, shm FIFOs); mp_fault covers kill, abort-from-another-thread
# while blocked and shrink; kill_rank covers weft-run's own handling.
set(_san_env WEFT_TIMEOUT=60)

# name; ranks; environment; mp_soak arguments.
foreach(case "n3|3||" "n4.mixed|4||--mixed" "n3.tcp|3|WEFT_SHM_DISABLE=1|"
             "n4.ring|4|WEFT_ALGO=ring|")
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 n)
  list(GET fields 2 env)
  list(GET fields 3 arg)
  add_test(NAME mp-san.soak.${name}
           COMMAND weft-run -n ${n} --timeout 280 $<TARGET_FILE:mp_soak> --iters 400 ${arg})
  set_tests_properties(mp-san.soak.${name} PROPERTIES
    TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env};${env}")
endforeach()

foreach(case "local||" "tcp|WEFT_SHM_DISABLE=1|" "ring|WEFT_ALGO=ring|" "mixed||--mixed")
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 env)
  list(GET fields 2 arg)
  add_test(NAME mp-san.mismatch.n3.${name}
           COMMAND weft-run -n 3 --timeout 100 $<TARGET_FILE:mp_mismatch> ${arg})
  set_tests_properties(mp-san.mismatch.n3.${name} PROPERTIES
    TIMEOUT 120 LABELS mp-san SKIP_RETURN_CODE 77 ENVIRONMENT "WEFT_TIMEOUT=30;${env}")
endforeach()

foreach(transport tcp shm)
  add_test(NAME mp-san.fault.${transport}
           COMMAND mp_fault --transport ${transport} --trials 20 --ranks 4 --seed 20261130)
  set_tests_properties(mp-san.fault.${transport} PROPERTIES TIMEOUT 300 LABELS mp-san)
endforeach()

foreach(mode sigkill exit)
  add_test(NAME mp-san.kill_rank.n3.${mode}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/kill_rank_test.sh $<TARGET_FILE:weft-run>
                   $<TARGET_FILE:mp_kill> 3 ${mode})
  set_tests_properties(mp-san.kill_rank.n3.${mode} PROPERTIES TIMEOUT 120 LABELS mp-san)
endforeach()
