/*
 * check.c -- the remote-log example's recovery check: reads a log file as a crash left it
 * and says whether it can be recovered: every record up to the published tail whole (its
 * length inside the tail, its checksum right). Exit 0 when it can, 1 when it cannot, 2 on
 * bad usage. rpma-sim-crash runs it on a copy of the server's file for each crash state.
 *
 * usage: remote-log-check FILE
 */
#include <stdio.h>
#include <string.h>

#include "examples/remote-log/log.h"

int
main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	unsigned char log[LOG_SIZE];
	FILE *file = fopen(argv[1], "rb");
	if (file == NULL || fread(log, 1, sizeof(log), file) != sizeof(log)) {
		fprintf(stderr, "cannot read %d bytes of %s\n", LOG_SIZE, argv[1]);
		return 2;
	}
	fclose(file);
	uint64_t tail;
	memcpy(&tail, log + LOG_TAIL_OFFSET, sizeof(tail));
	if (tail > LOG_RECORDS_SIZE) {
		printf("not recovered: the tail (%llu) lies beyond the log\n",
				(unsigned long long)tail);
		return 1;
	}
	int records = 0;
	for (uint64_t at = 0; at < tail; ++records) {
		struct log_record_header header;
		memcpy(&header, log + LOG_RECORDS_OFFSET + at, sizeof(header));
		if (header.length == 0 || at + log_record_size(header.length) > tail) {
			printf("not recovered: record %d at %llu has length %u, past the tail "
			       "%llu\n",
					records + 1, (unsigned long long)at, header.length,
					(unsigned long long)tail);
			return 1;
		}
		const unsigned char *bytes = log + LOG_RECORDS_OFFSET + at + sizeof(header);
		if (log_checksum(bytes, header.length) != header.checksum) {
			printf("not recovered: record %d at %llu has a wrong checksum\n",
					records + 1, (unsigned long long)at);
			return 1;
		}
		at += log_record_size(header.length);
	}
	printf("recovered: %d records, tail %llu\n", records, (unsigned long long)tail);
	return 0;
}
