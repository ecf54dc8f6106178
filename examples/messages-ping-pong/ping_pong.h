/*
 * ping_pong.h -- the messages-ping-pong example's two sides, shared by its two variants: each
 * CQ with its own completion channel (cq_wait.c) and one channel shared by the connection's
 * CQs (messages-ping-pong-shared-channel/shared_channel.c).
 */
#ifndef MESSAGES_PING_PONG_PING_PONG_H
#define MESSAGES_PING_PONG_PING_PONG_H

#include <stdbool.h>

/*
 * run one side; shared_channel says whether the connection's completions come through a
 * shared completion channel, waited for with rpma_conn_wait instead of rpma_cq_wait
 */
int ping_pong_server(const char *addr, const char *port, bool shared_channel);
int ping_pong_client(const char *addr, const char *port, bool shared_channel);

#endif /* MESSAGES_PING_PONG_PING_PONG_H */
