# Plugin registration: each plugin directory calls xo_add_plugin(NAME TARGET) after
# creating its static library target. The core then gets a generated C file that
# lists every enabled plugin's single register function, xo_plugin_<NAME>(), in order
# (cpu first: device 0 is always the host CPU).
set_property(GLOBAL PROPERTY XO_PLUGINS_ENABLED "")
set_property(GLOBAL PROPERTY XO_PLUGIN_TARGETS "")

function(xo_add_plugin name target)
  set_property(GLOBAL APPEND PROPERTY XO_PLUGINS_ENABLED ${name})
  set_property(GLOBAL APPEND PROPERTY XO_PLUGIN_TARGETS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${target})
endfunction()

function(xo_generate_plugin_registry core_target)
  get_property(names GLOBAL PROPERTY XO_PLUGINS_ENABLED)
  get_property(targets GLOBAL PROPERTY XO_PLUGIN_TARGETS)
  set(XO_PLUGIN_DECLS "")
  set(XO_PLUGIN_ENTRIES "")
  foreach(n IN LISTS names)
    string(APPEND XO_PLUGIN_DECLS "const xo_plugin *xo_plugin_${n}(void);\n")
    string(APPEND XO_PLUGIN_ENTRIES "    xo_plugin_${n},\n")
  endforeach()
  set(out "${CMAKE_BINARY_DIR}/generated/xo_plugins_init.c")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/xo_plugins_init.c.in" "${out}" @ONLY)
  target_sources(${core_target} PRIVATE "${out}")
  target_link_libraries(${core_target} PUBLIC ${targets})
  set(XO_PLUGIN_TARGETS_ALL ${targets} PARENT_SCOPE)
  message(STATUS "crossover plugins: ${names}")
endfunction()
