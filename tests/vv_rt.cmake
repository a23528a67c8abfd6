# VibeVoice-Realtime-0.5B on the tiny checkpoint + preset (tests/data/vibevoice-realtime): every
# debug stage against upstream's golden 02-07, generate() end to end from the seed alone (08, 09)
# through the stage and vocis speak (file, raw PCM, --stream-text), text pushed in pieces through
# the API (unit), preset conversion, and bad input.
vocis_unit_test(test_vv_rt ${VOCIS_TEST_SRC}/unit/test_vv_rt.c)
# sessions stepped together (continuous batching) == each alone, every part batched
vocis_unit_test(test_rt_batch ${VOCIS_TEST_SRC}/unit/test_rt_batch.c)
vocis_script_test(golden_vv_rt_stages golden/vv_rt_stages.sh)
vocis_script_test(golden_vv_rt_e2e golden/vv_rt_e2e.sh)
vocis_script_test(cli_vv_rt_bad_input cli/vv_rt_bad_input.sh)
vocis_script_test(cli_vv_rt_labels cli/vv_rt_labels.sh)
