# I/O parsers: safetensors, torch.save zip + pickle, Chatterbox conds.
vocis_unit_test(test_io ${VOCIS_TEST_SRC}/unit/test_io.c)
set_tests_properties(test_io PROPERTIES LABELS "unit;io")
# Incremental, crash-safe audio files (io/encode.h vx_audio_file).
vocis_unit_test(test_audio_file ${VOCIS_TEST_SRC}/unit/test_audio_file.c)

# libFuzzer targets (clang only): CC=clang cmake -DVOCIS_FUZZ=ON ...; see tests/fuzz/README.md.
option(VOCIS_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
if(VOCIS_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "VOCIS_FUZZ needs clang (CC=clang)")
  endif()
  # Coverage feedback for the library code under test.
  # The conventional macro turns off checksum verification (zip CRC-32) so that
  # mutated archives reach the pickle VM; never use a fuzz build otherwise.
  target_compile_options(vocis_obj PRIVATE -fsanitize=fuzzer-no-link)
  target_compile_definitions(vocis_obj PRIVATE FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  # Each target's CTest test (label fuzz) replays tests/fuzz/corpus/NAME, then fuzzes for
  # VOCIS_FUZZ_SECONDS, with tests/fuzz/NAME.dict when there is one.
  set(VOCIS_FUZZ_SECONDS 20 CACHE STRING "seconds each fuzz CTest test fuzzes after replaying its corpus")
  function(vocis_fuzz_target target)
    add_executable(${target} ${VOCIS_TEST_SRC}/fuzz/${target}.c)
    target_link_libraries(${target} PRIVATE vocis_static)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    target_compile_definitions(${target} PRIVATE VOCIS_FUZZ_DATA="${VOCIS_TEST_DATA}")
    string(REGEX REPLACE "^fuzz_" "" name ${target})
    set(flags ${ARGN})
    if(EXISTS ${VOCIS_TEST_SRC}/fuzz/${name}.dict)
      list(APPEND flags -dict=${VOCIS_TEST_SRC}/fuzz/${name}.dict)
    endif()
    add_test(NAME ${target}
             COMMAND bash ${VOCIS_TEST_SRC}/fuzz/run_fuzz.sh $<TARGET_FILE:${target}> ${VOCIS_TEST_SRC}/fuzz/corpus/${name}
                     ${CMAKE_CURRENT_BINARY_DIR}/scratch/${target} ${VOCIS_FUZZ_SECONDS} ${flags})
    set_tests_properties(${target} PROPERTIES LABELS fuzz TIMEOUT 300)
  endfunction()
  vocis_fuzz_target(fuzz_safetensors)
  vocis_fuzz_target(fuzz_pickle)
  vocis_fuzz_target(fuzz_torchzip)
  vocis_fuzz_target(fuzz_tokenizer_json)
  vocis_fuzz_target(fuzz_tokenize -max_len=4096)
  vocis_fuzz_target(fuzz_vv_config)
  vocis_fuzz_target(fuzz_vv_script -max_len=4096)
  vocis_fuzz_target(fuzz_audio -max_len=8192)
  vocis_fuzz_target(fuzz_turbo_tokenizer)
  vocis_fuzz_target(fuzz_mtl_text -max_len=8192)
  vocis_fuzz_target(fuzz_rt_preset)
  vocis_fuzz_target(fuzz_checkpoint -max_len=65536)
endif()
