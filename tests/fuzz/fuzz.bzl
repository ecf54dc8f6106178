"""rpma_fuzz_target(): one libFuzzer target, built three ways (docs/testing-the-project.md)."""

def rpma_fuzz_target(name, deps, fuzz_seconds = 5):
    """`<name>_fuzzer.cc` (LLVMFuzzerTestOneInput) and its seed corpus `corpus/<name>/`.

    - `<name>_corpus_test`: a cc_test that replays the corpus (replay_main.cc), in the plain
      run of .ci/test (and on demand under any config but --config=fuzz; the fuzz run replays
      the corpus under clang's ASan+UBSan itself).
    - `<name>_fuzzer`: the libFuzzer binary under --config=fuzz (tagged "fuzz", so only that
      config builds it); elsewhere, if asked for by name, the same replay program.
    - `<name>_fuzz_test`: under --config=fuzz, runs the fuzzer for `fuzz_seconds` from the
      corpus (run_fuzzers.sh) and fails on any crash, leak or sanitizer report.
    """
    corpus = native.glob(["corpus/%s/*" % name])
    corpus_dir = "tests/fuzz/corpus/" + name
    srcs = [name + "_fuzzer.cc", "fuzz_check.h"]
    native.cc_test(
        name = name + "_corpus_test",
        size = "small",
        srcs = srcs,
        args = [corpus_dir],
        data = corpus,
        # Not under ASan+UBSan: the fuzz run (--config=fuzz) replays the same corpus under
        # clang's ASan+UBSan before it fuzzes, so a gcc ASan build of these would only spend
        # CI's time budget.
        tags = [
            "no_asan",
            "sim_only",
        ],
        deps = deps + [":replay_main"],
    )
    native.cc_binary(
        name = name + "_fuzzer",
        srcs = srcs,
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["fuzz", "sim_only"],
        deps = deps + select({
            ":libfuzzer": [],
            "//conditions:default": [":replay_main"],
        }),
    )
    native.sh_test(
        name = name + "_fuzz_test",
        size = "medium",
        srcs = ["run_fuzzers.sh"],
        args = ["-t", str(fuzz_seconds), "$(location :%s_fuzzer)" % name],
        data = [":%s_fuzzer" % name] + corpus,
        tags = ["fuzz", "sim_only"],
    )
