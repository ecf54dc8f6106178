/*
 * server.c -- the remote-log example, server side: its log lives in persistent memory, a
 * file mapping (REMOTE_LOG_FILE; by default remote-log.pmem in TEST_TMPDIR or the working
 * directory), which it starts empty. It tells the client that writes go straight to persistent
 * memory, exposes the log, waits for the client to append its records and leave, and says how many
 * the log holds. What survives a crash is for rpma-sim-crash and check.c to find out.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "examples/common/example.h"
#include "examples/remote-log/log.h"

#define SIDE "server"

/* the log file, mapped shared: the server's persistent memory */
static char *
map_log(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, LOG_SIZE) != 0) {
		example_say(SIDE, "cannot make the log file %s", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *log = mmap(NULL, LOG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (log == MAP_FAILED) {
		example_say(SIDE, "cannot map the log file %s", path);
		return NULL;
	}
	memset(log, 0, LOG_SIZE); /* an empty log, the same at every run */
	msync(log, LOG_SIZE, MS_SYNC);
	return log;
}

/* the records the log holds up to its tail */
static int
count_records(const char *log)
{
	uint64_t tail;
	memcpy(&tail, log + LOG_TAIL_OFFSET, sizeof(tail));
	int records = 0;
	for (uint64_t at = 0; at < tail && at < LOG_RECORDS_SIZE; ++records) {
		struct log_record_header header;
		memcpy(&header, log + LOG_RECORDS_OFFSET + at, sizeof(header));
		at += log_record_size(header.length);
	}
	return records;
}

/* REMOTE_LOG_FILE, or remote-log.pmem in a test's directory or here */
static const char *
log_path(char *buffer, size_t size)
{
	const char *path = getenv("REMOTE_LOG_FILE");
	if (path != NULL && *path != '\0')
		return path;
	const char *dir = getenv("TEST_TMPDIR");
	snprintf(buffer, size, "%s%sremote-log.pmem", dir != NULL ? dir : "",
			dir != NULL ? "/" : "");
	return buffer;
}

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	char buffer[4096];
	struct rpma_mr_local *mr = NULL;
	int ret;

	char *log = map_log(log_path(buffer, sizeof(buffer)));
	if (log == NULL)
		return -1;
	/* the client may flush to persistence: writes reach persistent memory directly */
	if ((ret = rpma_peer_cfg_new(&res->pcfg)) ||
			(ret = rpma_peer_cfg_set_direct_write_to_pmem(res->pcfg, true))) {
		munmap(log, LOG_SIZE);
		return example_fail(SIDE, "rpma_peer_cfg", ret);
	}
	/* registered here, not with example_mr_reg: it is deregistered before the unmap */
	if ((ret = rpma_mr_reg(res->peer, log, LOG_SIZE,
			     RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr))) {
		munmap(log, LOG_SIZE);
		return example_fail(SIDE, "rpma_mr_reg", ret);
	}
	ret = example_pack_mr(res, mr, 0) || example_listen(res, addr, port) ||
			example_accept(res, &res->pdata) ||
			example_wait_for_disconnect(SIDE, res->conn);
	if (ret == 0)
		example_say(SIDE, "the client has left; the log holds %d records",
				count_records(log));
	(void)rpma_mr_dereg(&mr);
	munmap(log, LOG_SIZE);
	return ret ? -1 : 0;
}
