/*
 * main.c -- runs an example's server and client: as two threads of one process (default),
 * or one side only.
 *
 * usage: EXAMPLE [both|server|client] [ADDR] [PORT]
 *   both (default): server and client in this process, on ADDR (127.0.0.1) and PORT (a free
 *   port the kernel picks); server / client: that side only, ADDR and PORT required.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "examples/common/example.h"

static pthread_mutex_t listening_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t listening_cond = PTHREAD_COND_INITIALIZER;
static int listening; /* set once the server listens, or gives up */

void
example_server_listening(void)
{
	pthread_mutex_lock(&listening_mutex);
	listening = 1;
	pthread_cond_broadcast(&listening_cond);
	pthread_mutex_unlock(&listening_mutex);
}

/* runs one side between example_begin() and example_end() */
static int
run_side(bool server, const char *addr, const char *port)
{
	struct example_res res;
	int result = -1;

	if (server) {
		if (example_begin(&res, "server", addr, RPMA_UTIL_IBV_CONTEXT_LOCAL) == 0)
			result = example_server(&res, addr, port);
	} else {
		if (example_begin(&res, "client", addr, RPMA_UTIL_IBV_CONTEXT_REMOTE) == 0)
			result = example_client(&res, addr, port);
	}
	return example_end(&res, result);
}

struct side_args {
	const char *addr;
	const char *port;
	int result;
};

static void *
server_thread(void *arg)
{
	struct side_args *args = arg;
	args->result = run_side(true, args->addr, args->port);
	example_server_listening(); /* never leave the client waiting */
	return NULL;
}

/* a port nobody uses now: bind to port 0 and ask the kernel which one it gave */
static int
free_port(const char *addr, char *port, size_t size)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
			bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
			getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		close(fd);
		return -1;
	}
	snprintf(port, size, "%u", ntohs(sin.sin_port));
	close(fd);
	return 0;
}

int
main(int argc, char *argv[])
{
	const char *mode = argc > 1 ? argv[1] : "both";
	const char *addr = argc > 2 ? argv[2] : "127.0.0.1";
	char port[16];

	if (argc > 3) {
		snprintf(port, sizeof(port), "%s", argv[3]);
	} else if (strcmp(mode, "both") == 0) {
		if (free_port(addr, port, sizeof(port))) {
			fprintf(stderr, "cannot find a free port on %s\n", addr);
			return 1;
		}
	} else {
		fprintf(stderr, "usage: %s [both|server|client] [ADDR] [PORT]\n", argv[0]);
		return 2;
	}

	if (strcmp(mode, "server") == 0)
		return run_side(true, addr, port) ? 1 : 0;
	if (strcmp(mode, "client") == 0)
		return run_side(false, addr, port) ? 1 : 0;
	if (strcmp(mode, "both") != 0) {
		fprintf(stderr, "usage: %s [both|server|client] [ADDR] [PORT]\n", argv[0]);
		return 2;
	}

	struct side_args server = { addr, port, -1 };
	pthread_t thread;
	if (pthread_create(&thread, NULL, server_thread, &server)) {
		fprintf(stderr, "cannot start the server thread\n");
		return 1;
	}
	pthread_mutex_lock(&listening_mutex);
	while (!listening)
		pthread_cond_wait(&listening_cond, &listening_mutex);
	pthread_mutex_unlock(&listening_mutex);

	int client = run_side(false, addr, port);
	pthread_join(thread, NULL);
	if (client || server.result) {
		printf("FAILED (server %s, client %s)\n", server.result ? "failed" : "ok",
				client ? "failed" : "ok");
		return 1;
	}
	printf("OK: server and client both finished successfully\n");
	return 0;
}
