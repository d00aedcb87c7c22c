// A PostgreSQL server of the tests' own, for the PostgreSQL cost database's tests: initdb in a
// temporary folder, a server listening on a Unix socket in that folder only (no TCP port, so
// nothing else on the machine can meet it, and no port can clash), a database per test, and
// everything stopped and removed at the end. initdb refuses to run as root: as root the
// server runs as Debian's `postgres` user. Starting takes seconds: a suite shares one
// (ThrowawayPostgres::Shared in SetUpTestSuite).
#pragma once

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#ifdef COLLAGE_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

namespace collage::testing {

class ThrowawayPostgres {
 public:
  // The suite's server, started on first use; null with `why_not` when it cannot be had.
  // `skip`: true when that is because PostgreSQL is not installed (the test is skipped),
  // false when an installed PostgreSQL failed to start (the test fails).
  static ThrowawayPostgres* Shared(std::string* why_not, bool* skip) {
    static std::unique_ptr<ThrowawayPostgres> server;
    static std::string failure;
    static bool missing = false;
    static bool tried = false;
    if (!tried) {
      tried = true;
      server = Start(&failure, &missing);
    }
    *why_not = failure;
    *skip = missing;
    return server.get();
  }

  // Stops the suite's server (TearDownTestSuite): the next Shared starts a fresh one.
  ~ThrowawayPostgres() {
    Run(Server("pg_ctl") + " -D " + (dir_ / "data").string() + " -m immediate -w stop");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A new, empty database: its URL (user and socket folder in the parameters).
  std::string CreateDatabase(const std::string& name) {
    Exec(Url("postgres"), "DROP DATABASE IF EXISTS " + name);
    Exec(Url("postgres"), "CREATE DATABASE " + name);
    return Url(name);
  }

  std::string Url(const std::string& database) const {
    return "postgresql:///" + database + "?host=" + dir_.string() +
           "&port=" + std::to_string(kPort) + "&user=" + kUser;
  }

  // Runs `sql` on the database at `url` as another client would: "" when it went well, else
  // the server's message.
  static std::string Exec(const std::string& url, const std::string& sql) {
#ifdef COLLAGE_HAVE_POSTGRESQL
    PGconn* connection = PQconnectdb(url.c_str());
    std::string error;
    if (PQstatus(connection) != CONNECTION_OK) {
      error = PQerrorMessage(connection);
    } else {
      PQsetNoticeProcessor(connection, [](void*, const char*) {}, nullptr);
      PGresult* result = PQexec(connection, sql.c_str());
      const ExecStatusType status = PQresultStatus(result);
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        error = PQresultErrorMessage(result);
      PQclear(result);
    }
    PQfinish(connection);
    return error;
#else
    (void)url;
    (void)sql;
    return "built without libpq";
#endif
  }

  // The first column of the first row `sql` gives ("" for none).
  static std::string Query(const std::string& url, const std::string& sql) {
#ifdef COLLAGE_HAVE_POSTGRESQL
    PGconn* connection = PQconnectdb(url.c_str());
    std::string value;
    if (PQstatus(connection) == CONNECTION_OK) {
      PGresult* result = PQexec(connection, sql.c_str());
      if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0)
        value = PQgetvalue(result, 0, 0);
      PQclear(result);
    }
    PQfinish(connection);
    return value;
#else
    (void)url;
    (void)sql;
    return "";
#endif
  }

 private:
  static constexpr int kPort = 5439;  // names the socket file in our folder only
  static constexpr const char* kUser = "collage_test";

  // The folder of PostgreSQL's server programs: Debian's /usr/lib/postgresql/<version>/bin
  // (newest first), else those on the PATH.
  static std::string FindBinDir() {
    namespace fs = std::filesystem;
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
      if (fs::exists(entry.path() / "bin" / "initdb")) found.push_back(entry.path() / "bin");
    }
    if (!found.empty()) {
      std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
        return std::atoi(a.parent_path().filename().c_str()) >
               std::atoi(b.parent_path().filename().c_str());
      });
      return found.front().string();
    }
    if (std::system("command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1") == 0)
      return "";
    return "-";
  }

  static bool Run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }

  // `program` as the server's user runs it.
  std::string Server(const std::string& program) const {
    const std::string path = bin_dir_.empty() ? program : bin_dir_ + "/" + program;
    return as_postgres_ ? "runuser -u postgres -- " + path : path;
  }

  static std::unique_ptr<ThrowawayPostgres> Start(std::string* failure, bool* missing) {
#ifndef COLLAGE_HAVE_POSTGRESQL
    *failure = "this collage was built without libpq (libpq-dev): no PostgreSQL cost database";
    *missing = true;
    return nullptr;
#else
    namespace fs = std::filesystem;
    std::unique_ptr<ThrowawayPostgres> server(new ThrowawayPostgres);
    server->bin_dir_ = FindBinDir();
    if (server->bin_dir_ == "-") {
      *failure =
          "PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install "
          "postgresql (scripts/install_deps.sh --test)";
      *missing = true;
      return nullptr;
    }
    server->as_postgres_ = ::geteuid() == 0;
    if (server->as_postgres_ && ::getpwnam("postgres") == nullptr) {
      *failure = "running as root and there is no `postgres` user to run the server as";
      return nullptr;
    }
    server->dir_ = fs::temp_directory_path() / ("collage-pg-" + std::to_string(::getpid()));
    fs::remove_all(server->dir_);
    fs::create_directories(server->dir_);
    if (server->as_postgres_ &&
        !Run("chown postgres " + server->dir_.string())) {
      *failure = "cannot give " + server->dir_.string() + " to the postgres user";
      return nullptr;
    }
    const std::string data = (server->dir_ / "data").string();
    if (!Run(server->Server("initdb") + " -D " + data + " -A trust -U " + kUser +
             " --no-sync")) {
      *failure = "initdb failed in " + data;
      return nullptr;
    }
    // fsync off: a test server's data needs no durability.
    const std::string options = "-k " + server->dir_.string() + " -c listen_addresses='' -p " +
                                std::to_string(kPort) + " -c fsync=off";
    if (!Run(server->Server("pg_ctl") + " -D " + data + " -l " +
             (server->dir_ / "server.log").string() + " -w -t 60 -o \"" + options + "\" start")) {
      *failure = "pg_ctl start failed: see " + (server->dir_ / "server.log").string();
      return nullptr;
    }
    return server;
#endif
  }

  ThrowawayPostgres() = default;

  std::filesystem::path dir_;
  std::string bin_dir_;
  bool as_postgres_ = false;
};

}  // namespace collage::testing
