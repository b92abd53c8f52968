# libcrossover.so: the same API as libcrossover.a, with every compiled-in plugin inside.
# It exports the public API only: the objects are compiled with hidden visibility and
# crossover.h marks each public function XO_API; crossover.map hides anything else that
# might carry default visibility (tests/abi_exports.sh checks the result). The plugins'
# register functions (xo_plugin_<name>) stay inside: the core calls them through the
# generated registry, and no plugin is loaded from outside the library. Built from the objects of the core and of the
# plugin archives (after the plugin registry has been generated into the core).
get_property(_xo_plugin_targets GLOBAL PROPERTY XO_PLUGIN_TARGETS)
set(XO_SHARED_OBJECTS $<TARGET_OBJECTS:crossover>)
set(XO_SHARED_DEPS Threads::Threads m ${CMAKE_DL_LIBS})
foreach(t IN LISTS _xo_plugin_targets)
  list(APPEND XO_SHARED_OBJECTS $<TARGET_OBJECTS:${t}>)
endforeach()
if(TARGET crossover_opencl)
  find_package(OpenCL REQUIRED)  # imported targets are local to the plugin's directory
  find_package(XoCLBlast REQUIRED)
  list(APPEND XO_SHARED_DEPS OpenCL::OpenCL crossover::clblast)
endif()

add_library(crossover_shared SHARED ${XO_SHARED_OBJECTS})
add_library(crossover::shared ALIAS crossover_shared)
target_link_libraries(crossover_shared PRIVATE crossover::openblas ${XO_SHARED_DEPS})
target_include_directories(crossover_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/core/include>
  $<BUILD_INTERFACE:${XO_GENERATED_INCLUDE}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(crossover_shared PROPERTIES OUTPUT_NAME crossover EXPORT_NAME shared
  VERSION ${PROJECT_VERSION} SOVERSION 0)
target_link_options(crossover_shared PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/crossover.map" LINKER:--no-undefined)
set_property(TARGET crossover_shared APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/crossover.map)
