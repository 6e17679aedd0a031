#pragma once
// Opening files a user names as input. Only regular files are read: a directory, a device
// (/dev/zero), a FIFO or a socket is refused with InputError "PATH: not a regular file"
// before a single byte is read, so no reader can block on a pipe or read forever.
#include <cstdint>
#include <string>

namespace lockstep::arch {

// Opens `path` read-only for reading as a whole file and returns the descriptor (the
// caller closes it). InputError "PATH: cannot open: reason" if it cannot be opened,
// "PATH: not a regular file" if it is not one. Opening never blocks (O_NONBLOCK, cleared
// again once the file is known to be regular).
int open_regular_file(const std::string& path);

// True if `path` names an existing regular file; false if nothing is there; InputError
// "PATH: not a regular file" if something else is (a directory, device, FIFO, socket).
bool regular_file_exists(const std::string& path);

// Reads the whole of a regular file. InputError as open_regular_file, and
// "PATH: N bytes, more than the limit of M" when the file is larger than `max_bytes`.
std::string read_regular_file(const std::string& path, uint64_t max_bytes = UINT64_MAX);

}  // namespace lockstep::arch
