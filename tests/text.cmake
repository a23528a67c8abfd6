# Text front ends: tokenizer.json BPE, Chatterbox punc_norm, `vocis tokenize`.
vocis_unit_test(test_text ${VOCIS_TEST_SRC}/unit/test_text.c)
vocis_script_test(cli_tokenize cli/tokenize.sh)
