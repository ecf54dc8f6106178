"""Picks one header file out of a cc_library, so a genrule can read it without exports_files."""

def _cc_header_file_impl(ctx):
    lib = ctx.attr.lib
    hdrs = [
        h
        for h in lib[CcInfo].compilation_context.headers.to_list()
        if h.basename == ctx.attr.basename and h.owner != None and
           h.owner.workspace_name == lib.label.workspace_name and
           h.owner.package == lib.label.package
    ]
    if len(hdrs) != 1:
        fail("%s exports %d headers named %s, expected exactly 1: %s" %
             (lib.label, len(hdrs), ctx.attr.basename, hdrs))
    return [DefaultInfo(files = depset(hdrs))]

cc_header_file = rule(
    implementation = _cc_header_file_impl,
    doc = "The header `basename` declared by the cc_library `lib` (in lib's own package).",
    attrs = {
        "lib": attr.label(mandatory = True, providers = [CcInfo]),
        "basename": attr.string(mandatory = True),
    },
)
