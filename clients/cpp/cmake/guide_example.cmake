# Writes the code block of the bot guide that starts with MARKER to OUTPUT (when it changed), so
# that the guide's C++ example is compiled and run by the SDK's tests (test/sdk_test.cpp):
#   cmake -DGUIDE=docs/bot-guide.md -DMARKER="// rules_example.cpp:" -DOUTPUT=x.cpp -P this
file(READ "${GUIDE}" guide)
set(opening "```cpp\n${MARKER}")
string(FIND "${guide}" "${opening}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${GUIDE} has no C++ block starting \"${MARKER}\"")
endif()
math(EXPR start "${start} + 7")  # after "```cpp\n"
string(SUBSTRING "${guide}" ${start} -1 rest)
string(FIND "${rest}" "```" length)
string(SUBSTRING "${rest}" 0 ${length} block)
file(WRITE "${OUTPUT}.new" "${block}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUTPUT}.new" "${OUTPUT}")
file(REMOVE "${OUTPUT}.new")
