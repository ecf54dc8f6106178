/*
 * rcq.h -- the receive-completion-queue example's two sides, shared by its two variants: each
 * CQ with its own completion channel (cq_wait.c) and one channel shared by the connection's
 * main and receive CQs (receive-completion-queue-shared-channel/shared_channel.c).
 */
#ifndef RECEIVE_COMPLETION_QUEUE_RCQ_H
#define RECEIVE_COMPLETION_QUEUE_RCQ_H

#include <stdbool.h>

/*
 * run one side; shared_channel says whether the connection's CQs share one completion
 * channel, waited for with rpma_conn_wait (which reports the CQ that fired)
 */
int rcq_server(const char *addr, const char *port, bool shared_channel);
int rcq_client(const char *addr, const char *port, bool shared_channel);

#endif /* RECEIVE_COMPLETION_QUEUE_RCQ_H */
