// An optimize's report as JSON text (declared in collage/report.h): the report's one document
// (report/report_document.h), written out.
#include <algorithm>

#include "collage/report.h"
#include "report/report_document.h"
#include "session/session_access.h"

namespace collage {

std::string OptimizeReportJson(const Session& session, const OptimizeReport& report,
                               const OptimizeJsonContext& context) {
  ReportDocumentContext about{context.model, context.plan_path, session.num_threads(),
                              session.DescribePlacement(), report.warnings};
  // The optimize's warnings and the session's (a plan's, a backend's), each once.
  for (const std::string& w : session.warnings()) {
    if (std::find(about.warnings.begin(), about.warnings.end(), w) == about.warnings.end())
      about.warnings.push_back(w);
  }
  const ReportDocument document =
      OptimizeReportDocument(SessionGraph(session), report, report.in_run, about);
  // Replaced, not thrown on: a model path or a skip reason need not be valid UTF-8.
  return document.dump(2, ' ', false, ReportDocument::error_handler_t::replace) + "\n";
}

}  // namespace collage
