vocis_script_test(golden_qwen2 golden/qwen2.sh)
