"""installer(): `bazel run //:install -- PREFIX`, always with an optimized library.

Whatever flags the user gives `bazel run` (fastbuild by default, -c dbg, --config=asan, ...),
the library it installs is built as Debian builds its packages: -O2 with debug information,
the symbols then split off into lib/.debug/librpma.so.0.debug (found by gdb through the
library's .gnu_debuglink), the library itself stripped of them. The testing kit's archive
(librpma_sim_testing.a, //testing) goes through the same transition: -O2 -g, position
independent, so user tests link it into anything.
"""

def _optimized_impl(settings, attr):
    return {
        # opt: -O2 -DNDEBUG -D_FORTIFY_SOURCE=1 and section garbage collection.
        "//command_line_option:compilation_mode": "opt",
        # The user's copts (sanitizers, -O0, ...) are replaced: -g only, after opt's -g0.
        "//command_line_option:copt": ["-g"],
        "//command_line_option:linkopt": [],
    }

_optimized = transition(
    implementation = _optimized_impl,
    inputs = [],
    outputs = [
        "//command_line_option:compilation_mode",
        "//command_line_option:copt",
        "//command_line_option:linkopt",
    ],
)

def _one(target):
    """The target behind an attribute with a 1:1 transition (a list of one in Bazel 4.2)."""
    return target[0] if type(target) == "list" else target

def _own_static_archive(target):
    """The static archive of the cc_library `target` itself (not of its dependencies)."""
    for linker_input in target[CcInfo].linking_context.linker_inputs.to_list():
        if linker_input.owner != target.label:
            continue
        for library in linker_input.libraries:
            archive = library.pic_static_library or library.static_library
            if archive:
                return archive
    fail("%s has no static archive" % target.label)

def _installer_impl(ctx):
    library = ctx.files.library[0]
    archive = _own_static_archive(_one(ctx.attr.testing_library))
    installed_archive = ctx.actions.declare_file(ctx.label.name + "_lib/librpma_sim_testing.a")
    ctx.actions.symlink(output = installed_archive, target_file = archive)
    stripped = ctx.actions.declare_file(ctx.label.name + "_lib/librpma.so.0")
    symbols = ctx.actions.declare_file(ctx.label.name + "_lib/librpma.so.0.debug")
    ctx.actions.run_shell(
        inputs = [library],
        outputs = [stripped, symbols],
        command = "objcopy --only-keep-debug \"$1\" \"$3\" && " +
                  "objcopy --strip-debug --add-gnu-debuglink=\"$3\" \"$1\" \"$2\"",
        arguments = [library.path, stripped.path, symbols.path],
        mnemonic = "SplitDebug",
        progress_message = "Splitting the debug symbols off %s" % library.short_path,
    )
    executable = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.expand_template(
        template = ctx.file.script,
        output = executable,
        substitutions = {"@LIBRARY_DIR@": ctx.label.name + "_lib"},
        is_executable = True,
    )
    runfiles = ctx.runfiles(files = [stripped, symbols, installed_archive] + ctx.files.data)
    return [DefaultInfo(executable = executable, runfiles = runfiles)]

installer = rule(
    implementation = _installer_impl,
    doc = "Installs the optimized librpma.so.0 (and its split symbols) and testing kit with `script`.",
    executable = True,
    attrs = {
        "library": attr.label(
            cfg = _optimized,
            allow_single_file = True,
            mandatory = True,
            doc = "The shared library, built optimized whatever the command line says.",
        ),
        "testing_library": attr.label(
            cfg = _optimized,
            providers = [CcInfo],
            mandatory = True,
            doc = "The testing kit's cc_library (built -fPIC), installed as its static archive.",
        ),
        "script": attr.label(allow_single_file = True, mandatory = True),
        "data": attr.label_list(allow_files = True, doc = "Headers and the .pc template."),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
