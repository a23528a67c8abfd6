# Packaging (issue 10): the installed tree, and the Python binding.
# package_install: cmake --install into a scratch prefix, examples/speak.c
# built from it alone (pkg-config shared/static, find_package), nm -D.
set(_vocis_san "")
if(VOCIS_SANITIZE)
  set(_vocis_san "-fsanitize=address,undefined")
endif()
add_test(NAME package_install
         COMMAND bash ${VOCIS_TEST_SRC}/package/install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${VOCIS_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/scratch/package_install "${_vocis_san}")
set_tests_properties(package_install PROPERTIES LABELS package TIMEOUT 600 ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)

# The ctypes mirror of the public structs must match vocis.h exactly.
add_executable(abi_layout ${VOCIS_TEST_SRC}/python/abi_layout.c)
target_include_directories(abi_layout PRIVATE ${CMAKE_SOURCE_DIR}/include)

# Debian's python3 (+ python3-numpy); the tests report SKIPPED (exit 77) without them.
# A sanitizer build's libvocis cannot be loaded into an uninstrumented python3.
if(VOCIS_PYTHON3)
  add_test(NAME python_abi COMMAND ${VOCIS_PYTHON3} ${VOCIS_TEST_SRC}/python/test_abi.py $<TARGET_FILE:abi_layout>)
endif()
if(VOCIS_PYTHON3 AND NOT VOCIS_SANITIZE)
  add_test(NAME python_binding
           COMMAND ${VOCIS_PYTHON3} ${VOCIS_TEST_SRC}/python/test_binding.py $<TARGET_FILE:vocis>
                   $<TARGET_FILE:vocis_shared> ${VOCIS_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/scratch/python_binding)
elseif(VOCIS_SANITIZE)
  add_test(NAME python_binding COMMAND sh -c "echo 'SKIPPED: sanitizer build (libvocis needs the ASan runtime first)'; exit 77")
endif()
foreach(t python_abi python_binding)
  if(NOT TEST ${t})
    add_test(NAME ${t} COMMAND sh -c "echo 'SKIPPED: no python3 found (Debian: apt-get install python3 python3-numpy)'; exit 77")
  endif()
endforeach()
set_tests_properties(python_abi python_binding PROPERTIES LABELS "package;python" TIMEOUT 600 SKIP_RETURN_CODE 77
                     ENVIRONMENT PYTHONDONTWRITEBYTECODE=1) # no __pycache__ in the source tree
