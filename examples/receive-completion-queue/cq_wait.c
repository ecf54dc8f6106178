/*
 * cq_wait.c -- the receive-completion-queue example: the main CQ and the receive CQ have a
 * completion channel each, and each side waits on each CQ with rpma_cq_wait.
 */
#include "examples/receive-completion-queue/rcq.h"

const bool rcq_shared_channel = false;
