/*
 * ping_pong.h -- what the two sides of the messages-ping-pong example share; client.c and
 * server.c also make messages-ping-pong-shared-channel, where shared_channel.c turns the
 * shared completion channel on (cq_wait.c leaves it off here).
 */
#ifndef MESSAGES_PING_PONG_PING_PONG_H
#define MESSAGES_PING_PONG_PING_PONG_H

#include <stdbool.h>
#include <stdint.h>

#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)

/*
 * whether the connection's completions come through a shared completion channel, waited for
 * with rpma_conn_wait instead of rpma_cq_wait
 */
extern const bool ping_pong_shared_channel;

#endif /* MESSAGES_PING_PONG_PING_PONG_H */
