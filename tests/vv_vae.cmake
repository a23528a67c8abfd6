vocis_script_test(golden_vv_vae golden/vv_vae.sh)
