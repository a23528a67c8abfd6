# vocis serve (src/server/): curl-driven API test, the openai npm client, the web page in Chromium,
# every model family against vocis speak (serve_models.sh).
vocis_script_test(server_api server/serve_api.sh)
vocis_script_test(server_openai_npm server/openai_client.sh)
vocis_script_test(server_webpage server/webpage.sh)
vocis_script_test(server_scale_out server/scale_out.sh)
vocis_script_test(server_soak server/soak.sh)
vocis_script_test(server_models server/serve_models.sh)
vocis_script_test(server_warnings server/warnings.sh)
vocis_script_test(server_http server/serve_http.sh)
vocis_script_test(server_multi_speaker server/multi_speaker.sh)
set_tests_properties(server_api server_openai_npm server_webpage server_scale_out server_soak server_models
                     server_warnings server_http server_multi_speaker PROPERTIES LABELS "cli;server"
                     RUN_SERIAL ON)

# the pure request helpers: the limits shared with vocis speak, client-safe error messages
vocis_unit_test(test_server_proto ${VOCIS_TEST_SRC}/unit/test_server_proto.c)

# libFuzzer target for the request parser / router (built like those of tests/io.cmake: VOCIS_FUZZ=ON, clang).
if(VOCIS_FUZZ)
  vocis_fuzz_target(fuzz_server -max_len=8192)
endif()

# slow-loris and stalled clients (issue 23 item 5): a small C client, driven by slow_clients.sh
add_executable(slow_clients ${VOCIS_TEST_SRC}/server/slow_clients.c)
target_link_options(slow_clients PRIVATE -pthread)
add_test(NAME server_slow_clients
         COMMAND bash ${VOCIS_TEST_SRC}/server/slow_clients.sh $<TARGET_FILE:vocis> ${VOCIS_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/scratch/server_slow_clients $<TARGET_FILE:slow_clients>)
set_tests_properties(server_slow_clients PROPERTIES LABELS "cli;server" RUN_SERIAL ON TIMEOUT 600 SKIP_RETURN_CODE 77
                     ENVIRONMENT VOCIS_PRECISION=exact)
