#pragma once
// Every output file goes through here: it is written under a unique temporary name in its
// own directory, flushed to disk, then renamed into place, so a reader (or a second writer)
// never sees half a file and a failed write leaves the old file and no temporary behind.
// The checks below run before any work starts, so a run never ends in "cannot write".
// A write killed half way (SIGKILL, power) leaves its temporary; the next write of the same
// path removes it (remove_stale_temporaries), so killed writes never pile up.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::arch {

// Writes `bytes` to `path`: removes stale temporaries of `path`, then mkstemp
// "<path>.tmp-XXXXXX" (held with flock while it is written, so no sweep removes it), write,
// fsync, rename. InputError "path: cannot write: reason" on failure (the temporary is removed).
void write_file_atomically(const std::string& path, std::string_view bytes);

// The same for output written in pieces: `write` gets the open descriptor and writes all of
// it, throwing std::exception (its what() the reason) on failure.
void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write);

// What a temporary of `path` is: a regular file (write_file_atomically) or a folder
// (io/staged_directory.hpp).
enum class TemporaryKind { File, Folder };

// True when `name` is what the writers make for an output named `base`: exactly
// base + ".tmp-" + six letters or digits (mkstemp's and mkdtemp's alphabet).
bool is_temporary_name(std::string_view name, std::string_view base);

// Removes the temporaries killed writes of `path` left beside it: every "PATH.tmp-XXXXXX"
// of `kind` that no live writer holds (a writer holds an flock on its temporary until it is
// renamed). Symbolic links, other kinds and every other name are left alone; errors are
// ignored (a temporary that cannot be removed is no reason to fail the write).
void remove_stale_temporaries(const std::string& path, TemporaryKind kind = TemporaryKind::File);

// The same for every "NAME.tmp-XXXXXX" file directly in `dir`, whatever NAME (a resumed
// sweep's folder: its report files are rewritten anyway).
void remove_stale_temporaries_in(const std::string& dir);

// Takes the writer's hold on a temporary just made at `temp` (open as `fd`): a
// non-blocking exclusive flock, then a check that `temp` still names that file or folder.
// False when a sweep got there first (it removes the temporary: make another one).
bool hold_new_temporary(int fd, const std::string& temp);

// Throws InputError unless `path` can be written as a file: its directory exists and is
// writable, and `path` does not exist or is a regular file (never a directory, a symbolic
// link, a FIFO or a device, which the rename would replace; write_file_atomically refuses
// them too). `option` names the flag in the message ("-o").
void check_output_file(const std::string& path, const std::string& option);

// Throws InputError unless `dir` is a writable folder or can be made in the folder above it,
// which must exist (as for a file output: folders are made one level, like mkdir). Creates
// nothing, so bad input found later leaves no trace.
void check_output_directory(const std::string& dir, const std::string& option);

// The check above, then the folder made (not those above it).
void create_output_directory(const std::string& dir, const std::string& option);

// Throws InputError when `output` names the same file as one of `inputs` (writing it would
// destroy the input before or while it is read).
void refuse_overwriting_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace lockstep::arch
