add_executable(stcompare ${VOCIS_TEST_SRC}/tools/stcompare.c)
target_link_libraries(stcompare PRIVATE vocis_static)
add_executable(mkaudio ${VOCIS_TEST_SRC}/tools/mkaudio.c)
target_link_libraries(mkaudio PRIVATE vocis_static)
