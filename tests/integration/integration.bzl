"""integration_test() and examples_test(): the test rules of tests/integration, so that each
test there says only what is its own."""

# What every integration test links: the API on the simulator, and the verbs header
# (struct ibv_wc).
_BASE_DEPS = [
    "//api:rpma",
    "//third_party:ibverbs",
]

def integration_test(
        name,
        srcs = None,
        deps = [],
        size = "medium",
        transports = None,
        env = {},
        tsan = True,
        no_asan = False,
        gtest_main = False,
        data = []):
    """A GoogleTest program of this folder, on the simulator only (tag "sim_only").

    Args:
      name: the test's name; with `transports`, the stem of one test per transport,
        `<name>_<transport>_test`, each run with RPMA_SIM_TRANSPORT=<transport>.
      srcs: the sources; `<name>.cc`, or `<name>_test.cc` with `transports`, by default.
      deps: what it uses beyond the API, the verbs header and GoogleTest.
      size: Bazel's test size.
      transports: see `name`.
      env: more of the test's environment.
      tsan: tagged "tsan" (the ThreadSanitizer run of CI runs it; its threads or processes
        are the point).
      no_asan: tagged "no_asan" (left out of the ASan+UBSan run; the BUILD file says why).
      gtest_main: linked with GoogleTest's main (else the test has its own: a child-process
        mode, say).
      data: files it reads.
    """
    tags = ["sim_only"] + (["tsan"] if tsan else []) + (["no_asan"] if no_asan else [])
    gtest = ["//third_party:gtest_main" if gtest_main else "//third_party:gtest"]
    transports = transports or [None]

    # The first transport's test is the program; the others run that same binary (built once,
    # not once per transport) through exec_test.sh with their own environment.
    binary = "%s_%s_test" % (name, transports[0]) if transports[0] else name
    for transport in transports:
        test_env = dict(env)
        if transport:
            test_env["RPMA_SIM_TRANSPORT"] = transport
        test_name = "%s_%s_test" % (name, transport) if transport else name
        if test_name == binary:
            native.cc_test(
                name = test_name,
                size = size,
                srcs = srcs or [name + ("_test.cc" if transport else ".cc")],
                env = test_env,
                data = data,
                tags = tags,
                deps = _BASE_DEPS + gtest + deps,
            )
        else:
            native.sh_test(
                name = test_name,
                size = size,
                srcs = ["//tests/common:exec_test.sh"],
                args = ["$(location :%s)" % binary],
                env = test_env,
                data = data + [":" + binary],
                tags = tags,
            )

def examples_test(name, mode, examples, size = "medium", env = {}, tags = []):
    """run_examples.sh in `mode` over every program of `examples`, on the simulator only.

    It reads examples/*/BUILD from the source tree (they are not visible as data), so the
    test is tagged "external": never a cached result.
    """
    native.sh_test(
        name = name,
        size = size,
        srcs = ["run_examples.sh"],
        args = [mode] + ["$(location %s)" % label for label in examples],
        data = examples,
        env = env,
        tags = ["external", "sim_only"] + tags,
    )
