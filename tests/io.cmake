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
  foreach(target fuzz_safetensors fuzz_pickle fuzz_torchzip fuzz_tokenizer_json fuzz_tokenize fuzz_vv_config fuzz_vv_script fuzz_audio)
    add_executable(${target} ${VOCIS_TEST_SRC}/fuzz/${target}.c)
    target_link_libraries(${target} PRIVATE vocis_static)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    target_compile_definitions(${target} PRIVATE VOCIS_FUZZ_DATA="${VOCIS_TEST_DATA}")
  endforeach()
endif()
