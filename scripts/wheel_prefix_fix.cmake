# Injected with -DCMAKE_PROJECT_INCLUDE=... only when building against ROS 2 wheels from PyPI.
#
# The wheels' exported CMake targets carry include directories of the machine that built them
# (/opt/python/cp311-cp311/...). CMake refuses to generate while an imported target names a
# directory that does not exist. At the end of configuration, replace those two directories with
# this interpreter's include directory and numpy's; nothing outside the build tree is written.
function(cosim_fix_wheel_include_dirs)
  get_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_fixed "")
    set(_changed FALSE)
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^/opt/python/[^/]+/include/python")
        list(APPEND _fixed "${COSIM_PYTHON_INCLUDE_DIR}")
        set(_changed TRUE)
      elseif(_dir MATCHES "^/opt/python/.*/numpy/.*include$")
        list(APPEND _fixed "${COSIM_NUMPY_INCLUDE_DIR}")
        set(_changed TRUE)
      else()
        list(APPEND _fixed "${_dir}")
      endif()
    endforeach()
    if(_changed)
      list(REMOVE_DUPLICATES _fixed)
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
    endif()
  endforeach()
endfunction()

if(NOT COSIM_PYTHON_INCLUDE_DIR OR NOT COSIM_NUMPY_INCLUDE_DIR)
  message(FATAL_ERROR "wheel_prefix_fix.cmake needs -DCOSIM_PYTHON_INCLUDE_DIR and -DCOSIM_NUMPY_INCLUDE_DIR")
endif()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL cosim_fix_wheel_include_dirs)
