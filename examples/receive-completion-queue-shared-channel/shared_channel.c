/*
 * shared_channel.c -- the receive-completion-queue-shared-channel example: as in
 * receive-completion-queue, receives complete on the connection's receive CQ and sends on its
 * main CQ, but both CQs share one completion channel. rpma_cq_wait does not work on such CQs;
 * both sides wait with rpma_conn_wait, which reports the CQ that fired. An event may also come
 * for a completion that was already taken (rpma_cq_get_wc then says RPMA_E_NO_COMPLETION):
 * the side just waits again.
 */
#include "examples/receive-completion-queue/rcq.h"

const bool rcq_shared_channel = true;
