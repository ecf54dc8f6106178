"""The backend build setting: which librpma user code links ("sim" or "real")."""

_BACKENDS = ["sim", "real"]

def _backend_impl(ctx):
    value = ctx.build_setting_value
    if value not in _BACKENDS:
        fail("--//api:backend must be one of %s, not '%s'" % (_BACKENDS, value))
    return []

backend_flag = rule(
    implementation = _backend_impl,
    build_setting = config.string(flag = True),
)
