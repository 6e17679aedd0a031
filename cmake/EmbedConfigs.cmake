# Embeds every file under configs/ into the binary, so `lockstep` finds its machines,
# workloads and sweep definitions wherever it is run from.
file(GLOB_RECURSE LOCKSTEP_CONFIG_FILES CONFIGURE_DEPENDS
     RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/configs/*.yaml)
list(SORT LOCKSTEP_CONFIG_FILES)
set(LOCKSTEP_EMBEDDED_CPP ${PROJECT_BINARY_DIR}/generated/embedded_configs.cpp)
string(REPLACE ";" "," _embed_list "${LOCKSTEP_CONFIG_FILES}")
set(_embed_inputs "")
foreach(f IN LISTS LOCKSTEP_CONFIG_FILES)
  list(APPEND _embed_inputs ${PROJECT_SOURCE_DIR}/${f})
endforeach()
add_custom_command(
  OUTPUT ${LOCKSTEP_EMBEDDED_CPP}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${LOCKSTEP_EMBEDDED_CPP}
          "-DFILES=${_embed_list}" -P ${PROJECT_SOURCE_DIR}/cmake/WriteEmbedded.cmake
  DEPENDS ${_embed_inputs} ${PROJECT_SOURCE_DIR}/cmake/WriteEmbedded.cmake
  COMMENT "Embedding configs/" VERBATIM)
