#!/usr/bin/env bash
# exec_test.sh -- runs another test binary as this test (same arguments, this test's
# environment), so one binary can run again under another configuration (for example
# RPMA_SIM_TRANSPORT=tcp) without being built twice.
exec "$@"
