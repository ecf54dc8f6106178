/*
 * server.c -- the multiple-connections example, server side: serves three clients at once
 * from one thread. It watches the endpoint's fd and every connection's event fd with epoll;
 * all of them are non-blocking, so RPMA_E_NO_EVENT means "nothing more to do on this fd".
 * Each client gets its own slot of the server's memory (the offset travels in the private
 * data); once all three connections have closed, the server prints the slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "examples/common/example.h"

#define SIDE "server"
#define CLIENTS 3
#define SLOT_SIZE 32

struct client {
	struct rpma_conn *conn;
	int fd; /* the connection's event fd */
	int number; /* 1, 2, 3: the order of arrival */
	struct example_common_data data; /* what this client is told */
};

static int
set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		example_say(SIDE, "ERROR: fcntl(O_NONBLOCK): %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* the endpoint's fd is readable: accept every request that is waiting */
static int
handle_requests(struct rpma_ep *ep, struct rpma_mr_local *mr, struct client *clients, int *accepted,
		int epfd)
{
	for (;;) {
		struct rpma_conn_req *req = NULL;
		int ret = rpma_ep_next_conn_req(ep, NULL, &req);
		if (ret == RPMA_E_NO_EVENT)
			return 0; /* nothing more waiting */
		if (ret)
			return example_fail(SIDE, "rpma_ep_next_conn_req", ret);
		if (*accepted == CLIENTS) {
			example_say(SIDE, "a fourth client: rejecting it");
			(void)rpma_conn_req_delete(&req);
			continue;
		}

		struct client *client = &clients[*accepted];
		size_t offset = (size_t)*accepted * SLOT_SIZE;
		if (example_pack_descriptors(SIDE, mr, offset, NULL, &client->data)) {
			(void)rpma_conn_req_delete(&req);
			return -1;
		}
		struct rpma_conn_private_data pdata = { &client->data, sizeof(client->data) };
		if ((ret = rpma_conn_req_connect(&req, &pdata, &client->conn)))
			return example_fail(SIDE, "rpma_conn_req_connect", ret);
		client->number = ++*accepted;
		example_say(SIDE, "accepted client %d, giving it slot %d (offset %zu)",
				client->number, client->number - 1, offset);

		/* from now on this connection's events come through its own fd */
		if ((ret = rpma_conn_get_event_fd(client->conn, &client->fd)))
			return example_fail(SIDE, "rpma_conn_get_event_fd", ret);
		if (set_nonblock(client->fd))
			return -1;
		struct epoll_event event = { .events = EPOLLIN, .data.ptr = client };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, client->fd, &event)) {
			example_say(SIDE, "ERROR: epoll_ctl(ADD): %s", strerror(errno));
			return -1;
		}
	}
}

/* a connection's fd is readable: handle its events; *closed is set when it has closed */
static int
handle_conn_events(struct client *client, int epfd, int *closed)
{
	for (;;) {
		enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
		int ret = rpma_conn_next_event(client->conn, &event);
		if (ret == RPMA_E_NO_EVENT)
			return 0;
		if (ret)
			return example_fail(SIDE, "rpma_conn_next_event", ret);
		if (event == RPMA_CONN_ESTABLISHED) {
			example_say(SIDE, "client %d: connection established", client->number);
			continue;
		}
		if (event != RPMA_CONN_CLOSED) {
			example_say(SIDE, "ERROR: client %d: unexpected event \"%s\"",
					client->number, rpma_utils_conn_event_2str(event));
			return -1;
		}
		example_say(SIDE, "client %d: connection closed", client->number);
		(void)epoll_ctl(epfd, EPOLL_CTL_DEL, client->fd, NULL);
		if ((ret = rpma_conn_disconnect(client->conn)))
			example_fail(SIDE, "rpma_conn_disconnect", ret);
		int ret2 = rpma_conn_delete(&client->conn);
		if (ret2)
			example_fail(SIDE, "rpma_conn_delete", ret2);
		*closed = 1;
		return ret || ret2 ? -1 : 0;
	}
}

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *mr = NULL;
	struct client clients[CLIENTS];
	int epfd = -1, ep_fd = -1;
	int ret, result = -1;

	memset(clients, 0, sizeof(clients));
	/* client i's slot at offset i * SLOT_SIZE */
	char *memory = example_alloc(res, CLIENTS * SLOT_SIZE);
	if (memory == NULL ||
			example_mr_reg(res, memory, CLIENTS * SLOT_SIZE,
					RPMA_MR_USAGE_WRITE_DST |
							RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
					NULL, &mr))
		goto out;

	/* clients may connect from now on: their requests wait until the loop below takes them */
	if (example_listen(res, addr, port))
		goto out;
	example_say(SIDE, "serving %d clients", CLIENTS);

	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		example_say(SIDE, "ERROR: epoll_create1: %s", strerror(errno));
		goto out;
	}
	if ((ret = rpma_ep_get_fd(res->ep, &ep_fd))) {
		example_fail(SIDE, "rpma_ep_get_fd", ret);
		goto out;
	}
	if (set_nonblock(ep_fd))
		goto out;
	struct epoll_event ep_event = { .events = EPOLLIN, .data.ptr = NULL }; /* NULL: the ep */
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ep_fd, &ep_event)) {
		example_say(SIDE, "ERROR: epoll_ctl(ADD): %s", strerror(errno));
		goto out;
	}

	/* in one process with the client: its failure, marked by &gone_marker */
	static int gone_marker;
	int gone_fd = example_client_gone_fd(), client_gone = 0;
	struct epoll_event gone_event = { .events = EPOLLIN, .data.ptr = &gone_marker };
	if (gone_fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, gone_fd, &gone_event)) {
		example_say(SIDE, "ERROR: epoll_ctl(ADD): %s", strerror(errno));
		goto out;
	}

	int accepted = 0, closed = 0;
	while (closed < CLIENTS) {
		struct epoll_event events[CLIENTS + 1];
		int n = epoll_wait(epfd, events, CLIENTS + 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			example_say(SIDE, "ERROR: epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			if (events[i].data.ptr == &gone_marker) {
				client_gone = 1;
				(void)epoll_ctl(epfd, EPOLL_CTL_DEL, gone_fd, NULL);
				continue;
			}
			struct client *client = events[i].data.ptr;
			if (client == NULL) {
				if (handle_requests(res->ep, mr, clients, &accepted, epfd))
					goto out;
				continue;
			}
			int is_closed = 0;
			if (client->conn == NULL)
				continue; /* closed while handling an earlier event */
			if (handle_conn_events(client, epfd, &is_closed))
				goto out;
			closed += is_closed;
		}
		if (client_gone && accepted == closed) {
			example_say(SIDE, "ERROR: the client failed: no client will connect");
			goto out;
		}
	}

	example_say(SIDE, "all %d clients have left; my memory holds:", CLIENTS);
	for (int i = 0; i < CLIENTS; i++) {
		char *slot = &memory[i * SLOT_SIZE];
		slot[SLOT_SIZE - 1] = '\0';
		example_say(SIDE, "slot %d: \"%s\"", i, slot);
	}
	result = 0;
out:
	for (int i = 0; i < CLIENTS; i++) {
		if (clients[i].conn == NULL)
			continue;
		(void)rpma_conn_disconnect(clients[i].conn);
		(void)rpma_conn_delete(&clients[i].conn);
	}
	if (epfd >= 0)
		close(epfd);
	return result;
}
