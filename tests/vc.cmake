vocis_script_test(golden_vc golden/vc.sh)
