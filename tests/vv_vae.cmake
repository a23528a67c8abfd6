vocis_script_test(golden_vv_vae golden/vv_vae.sh)
# the σ-VAE's pool regions: the same bits at 1, 2, 3 and 5 threads
vocis_unit_test(test_vv_vae ${VOCIS_TEST_SRC}/unit/test_vv_vae.c)
