#pragma once
// Every output file goes through here: it is written under a unique temporary name in its
// own directory, flushed to disk, then renamed into place, so a reader (or a second writer)
// never sees half a file and a failed write leaves the old file and no temporary behind.
// The checks below run before any work starts, so a run never ends in "cannot write".
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::arch {

// Writes `bytes` to `path`: mkstemp "<path>.tmp-XXXXXX", write, fsync, rename. InputError
// "path: cannot write: reason" on failure (the temporary is removed).
void write_file_atomically(const std::string& path, std::string_view bytes);

// The same for output written in pieces: `write` gets the open descriptor and writes all of
// it, throwing std::exception (its what() the reason) on failure.
void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write);

// Throws InputError unless `path` can be written as a file: its directory exists and is
// writable, and `path` does not exist or is a regular file (never a directory, a symbolic
// link, a FIFO or a device, which the rename would replace; write_file_atomically refuses
// them too). `option` names the flag in the message ("-o").
void check_output_file(const std::string& path, const std::string& option);

// Throws InputError unless `dir` is a writable folder or can be made in the nearest
// existing folder above it. Creates nothing, so bad input found later leaves no trace.
void check_output_directory(const std::string& dir, const std::string& option);

// The check above, then the folder (and those above it) made.
void create_output_directory(const std::string& dir, const std::string& option);

// Throws InputError when `output` names the same file as one of `inputs` (writing it would
// destroy the input before or while it is read).
void refuse_overwriting_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace lockstep::arch
