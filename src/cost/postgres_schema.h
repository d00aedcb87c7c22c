// The tables of the PostgreSQL cost database (cost/postgres_cost_database.h), created and
// upgraded by collage: `costs` (the rows, keyed as in SQLite, plus what claims across
// machines need), `optimize_runs` (each finished optimize) and `collage_schema` (the schema's
// version, CostDatabase::kSchemaVersion). Only built with libpq.
#pragma once

#include "collage/status.h"

namespace collage {

class PgConnection;

// Makes the database's schema ours: creates the tables in an empty database (in the current
// schema, PostgreSQL's search_path), accepts our version, and refuses a newer version and a
// `costs` table collage did not create — both left as they are, never dropped. All of it in
// one transaction under an advisory lock, so that collages opening a new database at once do
// not race to create it.
Status EnsurePostgresSchema(PgConnection& connection);

}  // namespace collage
