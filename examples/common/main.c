/*
 * main.c -- runs an example's server and client: as two threads of one process (default),
 * or one side only.
 *
 * usage: EXAMPLE [both|server|client] [ADDR] [PORT]
 *   both (default): server and client in this process, on ADDR (127.0.0.1) and PORT (a free
 *   port the kernel picks); server / client: that side only, ADDR and PORT required. In both,
 *   a client that fails ends the program at once unless the server has finished.
 */
#include <arpa/inet.h>
#include <netdb.h>
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
static int server_done; /* set once the server thread has finished */

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
	pthread_mutex_lock(&listening_mutex);
	server_done = 1;
	pthread_mutex_unlock(&listening_mutex);
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
	pthread_mutex_lock(&listening_mutex);
	int server_finished = server_done;
	pthread_mutex_unlock(&listening_mutex);
	if (client && !server_finished) {
		/*
		 * the server may wait for a client that will not come (the client failed before it
		 * connected, or before its last connection): it is not waited for, and the process
		 * ends without running exit handlers under its feet
		 */
		printf("FAILED (client failed; the server was not waited for)\n");
		fflush(stdout);
		fflush(stderr);
		_exit(1);
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
