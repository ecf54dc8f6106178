"""example(): an example program (server + client) and the test that runs it."""

def _shell_word(text):
    """Keeps text one argument: Bazel splits args like a shell and expands $(...) in them."""
    return "'" + text.replace("$", "$$").replace("'", "'\\''") + "'"

def example(name, srcs, expect = [], env = {}, local_defines = []):
    """Builds `name` from srcs plus the shared frame, and `name_test` that runs it.

    The test runs both sides in one process and checks the exit code and that every line
    pattern in `expect` (grep -E) appears in the output.
    """
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = ["-std=gnu11"],
        local_defines = local_defines,
        visibility = ["//visibility:public"],
        deps = ["//examples/common:example"],
    )
    native.sh_test(
        name = name + "_test",
        size = "small",
        srcs = ["//examples:run_example_test.sh"],
        args = ["$(location :%s)" % name] + [_shell_word(pattern) for pattern in expect],
        data = [":" + name],
        env = env,
        tags = ["sim_only"],
    )
