/*
 * example.h -- the frame every example program shares.
 *
 * Each example folder provides example_server() and example_client(); common/main.c runs
 * them as two threads of one process ("both", the default), or as one side only ("server" or
 * "client", for running them as separate processes or on separate hosts).
 */
#ifndef RPMA_SIM_EXAMPLES_EXAMPLE_H
#define RPMA_SIM_EXAMPLES_EXAMPLE_H

#include <librpma.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* provided by each example: return 0 on success */
int example_server(const char *addr, const char *port);
int example_client(const char *addr, const char *port);

/* the server calls this once it listens, so that an in-process client may connect */
void example_server_listening(void);

/* prints "[side] message" to stdout and flushes, so that output of both sides interleaves */
void example_say(const char *side, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* reports a failed librpma call and returns -1 */
int example_fail(const char *side, const char *call, int ret);

/* waits for the next connection event and checks that it is the expected one */
int example_expect_event(const char *side, struct rpma_conn *conn,
		enum rpma_conn_event expected);

/* waits for one completion on cq and checks its status; prints it */
int example_wait_completion(const char *side, struct rpma_cq *cq, struct ibv_wc *wc);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_SIM_EXAMPLES_EXAMPLE_H */
