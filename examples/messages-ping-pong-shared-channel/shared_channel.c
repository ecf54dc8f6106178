/*
 * shared_channel.c -- the messages-ping-pong-shared-channel example: the ping-pong of
 * messages-ping-pong on connections whose completions come through a shared completion
 * channel (rpma_conn_cfg_set_compl_channel). rpma_cq_wait does not work then: both sides
 * wait with rpma_conn_wait, and when an event brings no new completion (rpma_cq_get_wc says
 * RPMA_E_NO_COMPLETION) they simply wait again.
 */
#include "examples/messages-ping-pong/ping_pong.h"

const bool ping_pong_shared_channel = true;
