# VibeVoice: audio I/O, config, processor (unit), and the processor stage
# against upstream's golden output.
vocis_unit_test(test_audio ${VOCIS_TEST_SRC}/unit/test_audio.c)
vocis_unit_test(test_vv_config ${VOCIS_TEST_SRC}/unit/test_vv_config.c)
vocis_unit_test(test_vv_processor ${VOCIS_TEST_SRC}/unit/test_vv_processor.c)
vocis_unit_test(test_vv_sessions ${VOCIS_TEST_SRC}/unit/test_vv_sessions.c)
vocis_script_test(golden_vv_processor golden/vv_processor.sh)
vocis_script_test(cli_vv_script cli/vv_script.sh)
vocis_script_test(cli_vv_long cli/vv_long.sh)
# Resumable jobs (issue 22 item 4): --checkpoint / --resume of VibeVoice scripts.
vocis_script_test(cli_vv_resume cli/vv_resume.sh)
set_tests_properties(cli_vv_resume PROPERTIES TIMEOUT 300)
# VOCIS_KV_DEFAULT: bf16 caches past 16384 positions, a full 64K-context script
vocis_script_test(cli_vv_kv_auto cli/vv_kv_auto.sh)
