// A PostgreSQL connection URL as collage handles it (cost/postgres_cost_database.h): shown to
// the user without its password, and given a connect timeout where it sets none. Plain text
// handling, so it is the same in a build without libpq.
#pragma once

#include <string>

namespace collage {

// `url` with the password of its user part ("postgresql://user:secret@host/db") and of its
// parameters ("?password=secret") replaced by "***": what error messages and `path()` show.
std::string RedactPassword(const std::string& url);

// `url` with "connect_timeout=<seconds>" added where it has no connect_timeout: an unreachable
// server is then an error after that long, not a wait as long as the system's TCP timeout.
std::string WithConnectTimeout(const std::string& url, int seconds);

}  // namespace collage
