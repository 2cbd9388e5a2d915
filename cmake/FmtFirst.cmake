# torchfit_fmt_first(<target> <torch include dirs> <fmt include dirs> <binary dir>)
#
# LibTorch 2.x archives and pip wheels ship their own fmt headers in <libtorch>/include/fmt (2.11:
# fmt 12). Those folders come in as -isystem paths ahead of the system's, so spdlog (built against
# the system's fmt, e.g. Debian 12's spdlog 1.10 with fmt 9) would be compiled against LibTorch's fmt
# and fails. When LibTorch carries fmt headers and spdlog's fmt lives elsewhere, a folder holding only
# a link to spdlog's fmt headers is put on <target>'s public include path with -I, which the compiler
# searches before every -isystem folder. Nothing is done when LibTorch has no fmt headers (Debian's
# packages) or both are the same folder.
function(torchfit_fmt_first target torch_dirs fmt_dirs binary_dir)
  set(torch_fmt "")
  foreach(d IN LISTS torch_dirs)
    if(EXISTS "${d}/fmt/format.h")
      set(torch_fmt "${d}")
    endif()
  endforeach()
  set(spdlog_fmt "")
  foreach(d IN LISTS fmt_dirs)
    if(EXISTS "${d}/fmt/format.h" AND NOT d STREQUAL torch_fmt)
      set(spdlog_fmt "${d}")
    endif()
  endforeach()
  if(torch_fmt STREQUAL "" OR spdlog_fmt STREQUAL "")
    return()
  endif()
  set(first "${binary_dir}/fmt-first")
  file(REMOVE_RECURSE "${first}")
  file(MAKE_DIRECTORY "${first}")
  file(CREATE_LINK "${spdlog_fmt}/fmt" "${first}/fmt" SYMBOLIC)
  target_include_directories(${target} BEFORE PUBLIC $<BUILD_INTERFACE:${first}>)
  message(STATUS "torchfit: LibTorch ships fmt headers (${torch_fmt}/fmt); spdlog's fmt (${spdlog_fmt}/fmt) is searched first")
endfunction()
