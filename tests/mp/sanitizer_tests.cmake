# The multi-process tests a sanitizer build runs (label mp-san; registered
# only when WEFT_SANITIZE is set). tools/test.sh builds just the targets these
# and the unit tests need and runs `-L '^(unit|mp-san)$'`. Chosen for
# coverage per second: at full size TSan took 99 s for mp.collectives.n3 and
# ran mp.coll_full.n3 past its 280 s limit on 2 cores. A short soak covers
# every collective, datatype and transport mix; mp_collectives and
# mp_coll_full at small counts cover the async forms, groups and split;
# mismatch covers the call and p2p headers (boards, TCP, shm FIFOs); mp_fault
# covers kill, abort from another thread while blocked, and shrink;
# kill_rank covers weft-run's own handling of a dead rank. The hostalloc cases
# run on weftHostAlloc buffers that peers map; TSan sees a peer's writes at a
# different address than the owner's, so there it checks the barriers around
# the copies, not the copies themselves.
set(_san_env WEFT_TIMEOUT=60)
# The plainest variants (label asan-only) run under ASan+UBSan only: under TSan
# (5-10x slower) their coverage is already in a sibling that adds something
# (collectives.n4.tree and .n3.hostalloc; coll_full.n4.layout2_2 and
# .n3.hostalloc_mixed; soak.n4.mixed, .n3.tcp and .n4.ring), and they took
# about 60 of the TSan tier's 255 s on 2 cores.
set(_san_asan_only collectives.n3 coll_full.n3 soak.n3)

# mp_collectives and mp_coll_full with small counts: name; ranks; environment; program arguments.
foreach(case "collectives.n3|3||mp_collectives|--large-count;100003;--huge-mib;8"
             "collectives.n4.tree|4|WEFT_ALGO=tree|mp_collectives|--large-count;100003;--huge-mib;8"
             "coll_full.n3|3||mp_coll_full|--large-count;30003"
             "coll_full.n4.layout2_2|4||mp_coll_full|--large-count;30003;--layout;2,2"
             "collectives.n3.hostalloc|3||mp_collectives|--large-count;100003;--huge-mib;8;--host-alloc;all"
             "coll_full.n3.hostalloc_mixed|3||mp_coll_full|--large-count;30003;--host-alloc;mixed")
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 n)
  list(GET fields 2 env)
  list(GET fields 3 program)
  list(SUBLIST fields 4 -1 args)
  add_test(NAME mp-san.${name}
           COMMAND weft-run -n ${n} --timeout 280 $<TARGET_FILE:${program}> ${args})
  set_tests_properties(mp-san.${name} PROPERTIES
    TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env};${env}")
endforeach()

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

# Calls on a stream with the fake CUDA: the flags between the stream threads
# and the progress thread, the staging pool, and a peer's abort. The GPU
# ring's groups (ring, ringmixed) run in device.ring.n3.layout2_1 below, whose
# node of two ranks has the intra-node ring and whose third has the proxy; here
# under TSan they added 15 s of the 62 s.
foreach(case "device.n3||--only;collectives,inflight,stalled,interleaved,group,badinput"
             "device.peer_abort.n3|WEFT_TIMEOUT=8|--peer-abort")
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 env)
  list(SUBLIST fields 2 -1 arg)
  add_test(NAME mp-san.${name}
           COMMAND weft-run -n 3 --timeout 280 $<TARGET_FILE:mp_device> ${arg})
  set_tests_properties(mp-san.${name} PROPERTIES
    TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env};${env}")
endforeach()
# A rank sits out a ring call: the host reads the CTAs' status words while
# the fake kernel's threads may still write them.
add_test(NAME mp-san.device.peer_absent.n3
         COMMAND weft-run -n 3 --timeout 100 $<TARGET_FILE:mp_device> --peer-absent)
set_tests_properties(mp-san.device.peer_absent.n3 PROPERTIES
  TIMEOUT 120 LABELS mp-san ENVIRONMENT "WEFT_TIMEOUT=5;WEFT_CHECK_CALLS=0")
# The GPU ring across two emulated nodes: the host proxy's frames and credits
# against the fake kernel's threads, ring channels sharing host streams.
add_test(NAME mp-san.device.ring.n3.layout2_1
         COMMAND weft-run -n 3 --timeout 280 $<TARGET_FILE:mp_device> --only ring,ringmixed
                 --layout 2,1)
set_tests_properties(mp-san.device.ring.n3.layout2_1 PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env};WEFT_SOCKET_NSTREAMS=2;WEFT_MAX_CTAS=3")

# Init's watch of the rendezvous (a thread per rank, the root's broadcast) as
# ranks die at random moments of init, and split/shrink votes with a refusing
# rank. Sanitized ranks start and fail slower: a wider window and limit.
add_test(NAME mp-san.init_kill.tcp
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/init_kill_test.py
                 $<TARGET_FILE:mp_init_probe> --transport tcp --trials 8 --window 0.6 --limit 3)
set_tests_properties(mp-san.init_kill.tcp PROPERTIES TIMEOUT 300 LABELS mp-san RUN_SERIAL TRUE)
add_test(NAME mp-san.create_refuse.n3
         COMMAND weft-run -n 3 --timeout 280 $<TARGET_FILE:mp_create_refuse>)
set_tests_properties(mp-san.create_refuse.n3 PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env}")

# The perf harness with several ranks per process (-t, -g): its threads share
# one process, so the sanitizers see any state they share.
add_test(NAME mp-san.perf.threads
         COMMAND weft-run -n 2 --timeout 280 $<TARGET_FILE:all_reduce_perf> -t 2 -g 2 -b 8 -e 1M
                 -f 32 -w 1 -n 3 -m 2 -o all)
set_tests_properties(mp-san.perf.threads PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env}")

# Grow and replace: a death, shrink, then a standby joining by rendezvous.
add_test(NAME mp-san.grow.replace
         COMMAND weft-run -n 5 --timeout 280 $<TARGET_FILE:mp_grow> --replace)
set_tests_properties(mp-san.grow.replace PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env}")
add_test(NAME mp-san.standby.one
         COMMAND weft-run -n 4 --standby 1 --timeout 280 $<TARGET_FILE:mp_standby> --one)
set_tests_properties(mp-san.standby.one PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env}")
# Replicas: a kill during a commit (seed 1), and a standby dying as it joins;
# commits run on the progress thread while the caller computes.
add_test(NAME mp-san.replica.kill
         COMMAND weft-run -n 4 --standby 1 --timeout 280 $<TARGET_FILE:mp_replica> --kill 1)
add_test(NAME mp-san.replica.standby_dies
         COMMAND weft-run -n 4 --standby 2 --timeout 280 $<TARGET_FILE:mp_replica> --standby-dies
                 ${CMAKE_CURRENT_BINARY_DIR}/replica_marker_san)
# Survivors asking weft-run's pool which rank died: the launcher's thread and
# the pool's share the record of who holds which rank.
add_test(NAME mp-san.replica.ask
         COMMAND weft-run -n 4 --standby 1 --timeout 280 $<TARGET_FILE:mp_replica> --kill 2 --ask)
set_tests_properties(mp-san.replica.kill mp-san.replica.standby_dies mp-san.replica.ask PROPERTIES
  TIMEOUT 300 LABELS mp-san ENVIRONMENT "${_san_env}")

foreach(name ${_san_asan_only})
  set_tests_properties(mp-san.${name} PROPERTIES LABELS "mp-san;asan-only")
endforeach()
