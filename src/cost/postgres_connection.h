// One libpq connection to a PostgreSQL server, for the PostgreSQL cost database
// (cost/postgres_cost_database.h): statements with text parameters, results read as text, and
// errors that name the database without its password and carry libpq's message. Only built
// with libpq (COLLAGE_HAVE_POSTGRESQL).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collage/status.h"

struct pg_conn;
struct pg_result;

namespace collage {

// A statement's result: rows of text columns.
class PgResult {
 public:
  explicit PgResult(pg_result* result);
  int rows() const;
  // Rows a command changed (INSERT, UPDATE, DELETE).
  int64_t changed() const;
  std::string Text(int row, int column) const;
  double Double(int row, int column) const;  // "NaN" and "Infinity" as such
  int64_t Int(int row, int column) const;
  bool Bool(int row, int column) const;

 private:
  std::shared_ptr<pg_result> result_;
};

class PgConnection {
 public:
  // Connects to `url` (a libpq connection URL), with a 10 s connect timeout unless the URL
  // sets one. `lock_timeout_ms` bounds every wait for a lock another client holds.
  static StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& url,
                                                         int lock_timeout_ms);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `sql` with `params` as $1, $2, … (text, their types inferred by the server); without
  // parameters `sql` may be several statements. An
  // error — the statement's, or the connection lost — names the database and says why.
  StatusOr<PgResult> Exec(const std::string& sql, const std::vector<std::string>& params = {});

  // The URL as shown to the user: without its password.
  const std::string& shown() const { return shown_; }

  static constexpr int kConnectTimeoutSeconds = 10;

 private:
  PgConnection(pg_conn* connection, std::string shown);
  pg_conn* connection_;
  std::string shown_;
};

}  // namespace collage
