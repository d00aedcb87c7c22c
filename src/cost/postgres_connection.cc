// Built only with libpq (CMakeLists.txt defines COLLAGE_HAVE_POSTGRESQL where it is found).
#ifdef COLLAGE_HAVE_POSTGRESQL
#include "cost/postgres_connection.h"

#include <libpq-fe.h>

#include <cstdlib>

#include "collage/sdk/errors.h"
#include "cost/postgres_url.h"

namespace collage {

namespace {

// libpq's messages end with a newline (sometimes two lines): one line for ours.
std::string OneLine(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text.empty() ? "unknown error" : text;
}

// The server's notices ("relation already exists, skipping") are not the user's business.
void IgnoreNotice(void*, const char*) {}

}  // namespace

PgResult::PgResult(pg_result* result) : result_(result, &PQclear) {}

int PgResult::rows() const { return PQntuples(result_.get()); }

int64_t PgResult::changed() const {
  const char* tuples = PQcmdTuples(result_.get());
  return tuples != nullptr && tuples[0] != '\0' ? std::strtoll(tuples, nullptr, 10) : 0;
}

std::string PgResult::Text(int row, int column) const {
  if (PQgetisnull(result_.get(), row, column)) return "";
  return std::string(PQgetvalue(result_.get(), row, column),
                     static_cast<size_t>(PQgetlength(result_.get(), row, column)));
}

double PgResult::Double(int row, int column) const {
  // strtod reads PostgreSQL's "NaN", "Infinity" and "-Infinity" as the values they name,
  // which the caller then judges.
  return std::strtod(Text(row, column).c_str(), nullptr);
}

int64_t PgResult::Int(int row, int column) const {
  return std::strtoll(Text(row, column).c_str(), nullptr, 10);
}

bool PgResult::Bool(int row, int column) const { return Text(row, column) == "t"; }

StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& url,
                                                              int lock_timeout_ms) {
  const std::string shown = RedactPassword(url);
  pg_conn* connection = PQconnectdb(WithConnectTimeout(url, kConnectTimeoutSeconds).c_str());
  if (connection == nullptr) return IoError("cannot connect to cost database {}: out of memory", shown);
  if (PQstatus(connection) != CONNECTION_OK) {
    const std::string message = OneLine(PQerrorMessage(connection));
    PQfinish(connection);
    return IoError("cannot connect to cost database {}: {}", shown, message);
  }
  PQsetNoticeProcessor(connection, &IgnoreNotice, nullptr);
  std::unique_ptr<PgConnection> opened(new PgConnection(connection, shown));
  // A lock held by another client (a claim being decided, the schema being created) is waited
  // for as long as a SQLite lock would be, then the statement fails instead of hanging.
  COLLAGE_RETURN_IF_ERROR(
      opened->Exec("SELECT set_config('lock_timeout', $1, false), "
                   "set_config('application_name', 'collage', false)",
                   {std::to_string(lock_timeout_ms) + "ms"})
          .status());
  return opened;
}

PgConnection::PgConnection(pg_conn* connection, std::string shown)
    : connection_(connection), shown_(std::move(shown)) {}

PgConnection::~PgConnection() { PQfinish(connection_); }

StatusOr<PgResult> PgConnection::Exec(const std::string& sql,
                                      const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  // Without parameters, PQexec: it runs a script of several statements (PQexecParams
  // refuses more than one).
  pg_result* raw =
      params.empty()
          ? PQexec(connection_, sql.c_str())
          : PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                         values.data(), nullptr, nullptr, /*resultFormat=*/0);
  PgResult result(raw);
  const ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  if (PQstatus(connection_) == CONNECTION_BAD) {
    return IoError("lost the connection to cost database {}: {}", shown_,
                   OneLine(PQerrorMessage(connection_)));
  }
  return IoError("cost database {}: {}", shown_,
                 OneLine(raw != nullptr ? PQresultErrorMessage(raw) : PQerrorMessage(connection_)));
}

}  // namespace collage

#endif  // COLLAGE_HAVE_POSTGRESQL
