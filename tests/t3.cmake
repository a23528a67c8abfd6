vocis_script_test(golden_t3 golden/t3.sh)
