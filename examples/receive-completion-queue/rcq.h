/*
 * rcq.h -- what the two sides of the receive-completion-queue example share; client.c and
 * server.c also make receive-completion-queue-shared-channel, where shared_channel.c turns
 * the shared completion channel on (cq_wait.c leaves it off here).
 */
#ifndef RECEIVE_COMPLETION_QUEUE_RCQ_H
#define RECEIVE_COMPLETION_QUEUE_RCQ_H

#include <stdbool.h>

#define ROUNDS 3
#define MSG_SIZE 16
#define RCQ_SIZE 10

/*
 * whether the connection's main CQ and receive CQ share one completion channel, waited for
 * with rpma_conn_wait (which reports the CQ that fired)
 */
extern const bool rcq_shared_channel;

#endif /* RECEIVE_COMPLETION_QUEUE_RCQ_H */
