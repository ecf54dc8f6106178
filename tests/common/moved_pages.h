// moved_pages.h -- what tests of registered heap memory ask of this process's mappings:
// whether this run's transport moves registered pages into the region file
// (docs/transports.md), and whether an address is in it.
#ifndef RPMA_SIM_TESTS_COMMON_MOVED_PAGES_H_
#define RPMA_SIM_TESTS_COMMON_MOVED_PAGES_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

// Whether this run's transport moves registered heap pages (rpma_sim(7): SHM_SHARE_HEAP).
bool PagesMoveHere();

// The /proc/self/maps line of the mapping that holds `address` ("" if none).
std::string MappingOf(const void* address);

// Whether `address` is in moved pages (a mapping of the region file).
bool Moved(const void* address);

// The inode of the file mapped at `address` (0 for anonymous memory).
unsigned long long InodeAt(const void* address);

// The descriptor of this process's open file with `inode`, or -1.
int FdOfInode(unsigned long long inode);

// Page-aligned private anonymous memory (as a large heap block is), each byte `fill`; null
// if it cannot be mapped. munmap it.
char* NewPages(size_t pages, uint8_t fill);

// Whether every byte of [address, address + length) is `value`.
bool AllBytes(const void* address, size_t length, uint8_t value);

#endif  // RPMA_SIM_TESTS_COMMON_MOVED_PAGES_H_
