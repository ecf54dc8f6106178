/*
 * example.c -- helpers shared by the examples: output, error reports, events, completions.
 */
#include "examples/common/example.h"

#include <stdarg.h>

void
example_say(const char *side, const char *format, ...)
{
	va_list args;
	flockfile(stdout);
	printf("[%s] ", side);
	va_start(args, format);
	vprintf(format, args);
	va_end(args);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

int
example_fail(const char *side, const char *call, int ret)
{
	example_say(side, "ERROR: %s failed: %s", call, rpma_err_2str(ret));
	return -1;
}

int
example_expect_event(const char *side, struct rpma_conn *conn,
		enum rpma_conn_event expected)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);
	if (ret)
		return example_fail(side, "rpma_conn_next_event", ret);
	if (event != expected) {
		example_say(side, "ERROR: expected \"%s\", got \"%s\"",
			rpma_utils_conn_event_2str(expected),
			rpma_utils_conn_event_2str(event));
		return -1;
	}
	example_say(side, "%s", rpma_utils_conn_event_2str(event));
	return 0;
}

int
example_wait_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc)
{
	int ret = rpma_cq_wait(cq);
	if (ret)
		return example_fail(side, "rpma_cq_wait", ret);
	ret = rpma_cq_get_wc(cq, 1, wc, NULL);
	if (ret)
		return example_fail(side, "rpma_cq_get_wc", ret);
	if (wc->status != IBV_WC_SUCCESS) {
		example_say(side, "ERROR: completion failed: %s",
			ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}
