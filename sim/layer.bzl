"""sim_layer(): the cc_library of one sim/ folder (a layer of the simulator)."""

def sim_layer(name, deps = []):
    """All the folder's sources and headers; `deps` are the layers below it (and libraries).

    Compiled with -fno-gnu-unique: plain weak symbols instead of STB_GNU_UNIQUE ones
    (Boost.Asio's thread-local keys), so the shared library's version script can hide them.
    """
    native.cc_library(
        name = name,
        srcs = native.glob(["*.cc"]),
        hdrs = native.glob(["*.h"]),
        copts = ["-fno-gnu-unique"],
        visibility = ["//sim:__subpackages__"],
        deps = deps,
    )
