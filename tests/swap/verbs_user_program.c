/*
 * verbs_user_program.c -- a librpma program that, as librpma's own examples do, also calls
 * libibverbs itself (ibv_wc_status_str to print a completion's status). Built with nothing
 * but `pkg-config --cflags --libs librpma`, as a Makefile or CMake's pkg_check_modules does.
 */
#include <librpma.h>
#include <stdio.h>

int
main(void)
{
	struct ibv_context *ctx;
	int ret = rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	printf("%s; a completion would say: %s\n", ret ? rpma_err_2str(ret) : "device found",
			ibv_wc_status_str(IBV_WC_SUCCESS));
	return 0;
}
