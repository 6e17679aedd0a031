#pragma once
// A name from a file (a binding, a tensor) as one safe file name: the only way any command
// turns such a name into a path, so a name can never reach outside the folder it is written to.
#include <string>

namespace lockstep::arch {

// Keeps A-Z a-z 0-9 _ - and a '.' that is not first; every other byte becomes %XX (so '/',
// '%' and a leading '.' are escaped, and the mapping is one-to-one). "" becomes "%".
std::string escaped_file_name(const std::string& name);

}  // namespace lockstep::arch
