// Mapping pages writable before a collective touches them.
#ifndef WEFT_CORE_PREFAULT_H
#define WEFT_CORE_PREFAULT_H

#include <cstddef>

namespace weft {

// Maps every page of [addr, addr + bytes) writable now, without changing its
// contents, so that no first write inside a collective takes a page fault
// (12-14 us each on these VMs, where a fault is a trip through the
// hypervisor). MAP_POPULATE is not enough for shared memory: it maps the
// pages read-only, for dirty tracking, and each first write still faults.
// Returns false where the kernel cannot (MADV_POPULATE_WRITE is Linux 5.14);
// the caller then touches fresh memory itself, or lets live memory fault.
bool prefaultWritable(void* addr, size_t bytes);

}  // namespace weft

#endif  // WEFT_CORE_PREFAULT_H
