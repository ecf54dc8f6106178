"""sim_layer(): the cc_library of one sim/ folder (a layer of the simulator)."""

# -fno-gnu-unique where the compiler knows it (see sim_layer); //api uses it too.
NO_GNU_UNIQUE = select({
    "//sim:clang": [],
    "//conditions:default": ["-fno-gnu-unique"],
})

# Warnings are errors in the simulator, the API and the testing kit (.bazelrc turns on -Wall
# -Wextra; under ThreadSanitizer, GCC's -Wtsan about Boost.Asio's fences stays a warning).
WERROR = ["-Werror"]

def sim_layer(name, deps = []):
    """All the folder's sources and headers; `deps` are the layers below it (and libraries).

    Compiled with -fno-gnu-unique: plain weak symbols instead of STB_GNU_UNIQUE ones
    (Boost.Asio's thread-local keys), so the shared library's version script can hide them.
    Only GCC makes such symbols (and knows the flag): clang (--config=fuzz) never does.
    """
    native.cc_library(
        name = name,
        srcs = native.glob(["*.cc"]),
        hdrs = native.glob(["*.h"]),
        copts = NO_GNU_UNIQUE + WERROR,
        visibility = ["//sim:__subpackages__"],
        deps = deps,
    )
