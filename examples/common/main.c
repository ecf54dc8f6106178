/*
 * main.c -- runs an example's server and client: as two threads of one process (default),
 * or one side only.
 *
 * usage: EXAMPLE [both|server|client] [ADDR] [PORT]
 *   both (default): server and client in this process, on ADDR (127.0.0.1) and PORT (a free
 *   port the kernel picks); server / client: that side only, ADDR and PORT required. In both,
 *   a server that waits for a client that failed gives up (example_wait_for_client).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "examples/common/example.h"

static pthread_mutex_t listening_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t listening_cond = PTHREAD_COND_INITIALIZER;
static int listening; /* set once the server listens, or gives up */
/* 'both': readable (client_gone[0]) once the client has failed; -1 otherwise */
static int client_gone[2] = { -1, -1 };

void
example_server_listening(void)
{
	pthread_mutex_lock(&listening_mutex);
	listening = 1;
	pthread_cond_broadcast(&listening_cond);
	pthread_mutex_unlock(&listening_mutex);
}

int
example_client_gone_fd(void)
{
	return client_gone[0];
}

int
example_wait_for_client(const char *side, struct rpma_ep *ep)
{
	if (client_gone[0] < 0)
		return 0; /* a process of its own: rpma_ep_next_conn_req waits */
	int ep_fd;
	int ret = rpma_ep_get_fd(ep, &ep_fd);
	if (ret)
		return example_fail(side, "rpma_ep_get_fd", ret);
	struct pollfd fds[2] = { { ep_fd, POLLIN, 0 }, { client_gone[0], POLLIN, 0 } };
	while (poll(fds, 2, -1) < 0) {
		if (errno != EINTR) {
			example_say(side, "ERROR: poll: %s", strerror(errno));
			return -1;
		}
	}
	if (fds[0].revents & POLLIN)
		return 0; /* a request is there */
	example_say(side, "ERROR: the client failed: no client will connect");
	return -1;
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

/*
 * a port nobody uses now on ADDR (a name, an IPv4 or an IPv6 address, as rpma_ep_listen takes
 * it): bind to port 0 and ask the kernel which one it gave
 */
static int
free_port(const char *addr, char *port, size_t size)
{
	struct addrinfo hints;
	struct addrinfo *found = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(addr, "0", &hints, &found) != 0)
		return -1;
	int result = -1;
	for (struct addrinfo *ai = found; ai != NULL && result != 0; ai = ai->ai_next) {
		struct sockaddr_storage bound;
		socklen_t len = sizeof(bound);
		int fd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (fd < 0)
			continue;
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
				getsockname(fd, (struct sockaddr *)&bound, &len) == 0) {
			in_port_t number = bound.ss_family == AF_INET6
					? ((struct sockaddr_in6 *)&bound)->sin6_port
					: ((struct sockaddr_in *)&bound)->sin_port;
			snprintf(port, size, "%u", ntohs(number));
			result = 0;
		}
		close(fd);
	}
	freeaddrinfo(found);
	return result;
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

	if (pipe(client_gone)) {
		fprintf(stderr, "cannot make a pipe: %s\n", strerror(errno));
		return 1;
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
	if (client) {
		/* a server waiting for this client's (next) connection gives up */
		char gone = 1;
		if (write(client_gone[1], &gone, 1) != 1)
			fprintf(stderr, "cannot tell the server that the client failed\n");
	}
	pthread_join(thread, NULL);
	if (client || server.result) {
		printf("FAILED (server %s, client %s)\n", server.result ? "failed" : "ok",
				client ? "failed" : "ok");
		return 1;
	}
	printf("OK: server and client both finished successfully\n");
	return 0;
}
