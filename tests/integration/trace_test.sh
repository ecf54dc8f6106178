#!/usr/bin/env bash
# trace_test.sh -- runs trace_test.py (RPMA_SIM_TRACE's file) with python3.
exec python3 "$@"
