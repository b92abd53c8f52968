# xo_outside_system_dirs(OUT path...): OUT lists the directories of the given files that
# lie outside the system's library folders (the compilers' implicit link directories and
# everything below them), e.g. in a folder given by CMAKE_PREFIX_PATH.
function(xo_outside_system_dirs out)
  set(sys ${CMAKE_C_IMPLICIT_LINK_DIRECTORIES} ${CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES}
          /usr/lib /usr/lib64 /lib /lib64)
  set(dirs "")
  foreach(f IN LISTS ARGN)
    get_filename_component(d "${f}" DIRECTORY)
    set(outside TRUE)
    foreach(s IN LISTS sys)
      string(FIND "${d}/" "${s}/" pos)
      if(pos EQUAL 0)
        set(outside FALSE)
      endif()
    endforeach()
    if(outside AND d)
      list(APPEND dirs "${d}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set(${out} "${dirs}" PARENT_SCOPE)
endfunction()
