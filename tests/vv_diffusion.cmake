# VibeVoice connectors, diffusion head and DPM-Solver++ sampler: schedule / step /
# sampler unit test, and the debug stages against upstream's golden 05 / 07.
vocis_unit_test(test_dpm_solver ${VOCIS_TEST_SRC}/unit/test_dpm_solver.c)
vocis_script_test(golden_vv_diffusion golden/vv_diffusion.sh)
