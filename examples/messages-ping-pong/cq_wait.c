/*
 * cq_wait.c -- the messages-ping-pong example: each CQ has a completion channel of its own,
 * and each side waits for its completions with rpma_cq_wait.
 */
#include "examples/messages-ping-pong/ping_pong.h"

const bool ping_pong_shared_channel = false;
