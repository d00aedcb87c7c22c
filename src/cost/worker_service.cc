#include "cost/worker_service.h"

#include "cost/group_signature.h"
#include "onnx/onnx_import.h"
#include "runtime/threading.h"

namespace collage {
namespace {

CostRecord Invalid(std::string reason) {
  CostRecord record;
  record.reason = std::move(reason);
  return record;
}

// Signatures of big groups run long; the start says which group it was.
std::string Abbreviated(const std::string& text) {
  constexpr size_t kShown = 300;
  return text.size() <= kShown ? text : text.substr(0, kShown) + "...";
}

}  // namespace

WorkerHello MeasureWorkerService::Hello() const {
  WorkerHello hello;
  for (const Backend* backend : registry_.backends())
    hello.backends.emplace_back(backend->name(), backend->version());
  return hello;
}

CostRecord MeasureWorkerService::AnswerCandidate(const CandidateRequest& request) {
  if (!graph_ || request.model != model_) {
    graph_.reset();
    model_.clear();
    measurer_.ForgetReference();
    ImportOptions options;
    options.fold_constants = false;  // the nodes as they were sent
    StatusOr<Graph> imported =
        ImportOnnxBytes(request.model, options, "the group sent by the parent");
    if (!imported.ok()) {
      return Invalid("the measurement worker cannot import the group: " +
                     imported.status().message());
    }
    graph_ = std::make_unique<Graph>(std::move(*imported));
    model_ = request.model;
  }
  std::vector<NodeId> all(static_cast<size_t>(graph_->num_nodes()));
  for (NodeId n = 0; n < graph_->num_nodes(); ++n) all[static_cast<size_t>(n)] = n;
  const SubGraph nodes(graph_->num_nodes(), all);
  const std::string signature = GroupSignature(*graph_, nodes);
  if (signature != request.signature) {
    return Invalid("the group arrived changed in the measurement worker: its signature there is '" +
                   Abbreviated(signature) + "', in the parent '" + Abbreviated(request.signature) +
                   "'");
  }
  ApplyThreadPolicy(request.threads);
  StatusOr<CostRecord> record =
      measurer_.Candidate(*graph_, nodes, request.backend, request.rule, request.precision,
                          request.threads, request.tolerance, request.settings);
  if (!record.ok()) return Invalid("in the measurement worker: " + record.status().message());
  return *record;
}

CostRecord MeasureWorkerService::AnswerConversion(const ConversionRequest& request) {
  StatusOr<TensorType> type = TensorTypeFromText(request.type);
  StatusOr<Layout> from = LayoutFromText(request.from);
  StatusOr<Layout> to = LayoutFromText(request.to);
  for (const Status* s : {&type.status(), &from.status(), &to.status()}) {
    if (!s->ok())
      return Invalid("the measurement worker cannot read the conversion: " + s->message());
  }
  ApplyThreadPolicy(request.threads);
  StatusOr<CostRecord> record =
      measurer_.Conversion(*type, *from, *to, request.threads, request.settings);
  if (!record.ok()) return Invalid("in the measurement worker: " + record.status().message());
  return *record;
}

std::string MeasureWorkerService::Answer(const std::string& payload) {
  StatusOr<WorkerMessage> kind = PayloadKind(payload);
  if (kind.ok() && *kind == WorkerMessage::kCandidate) {
    StatusOr<CandidateRequest> request = DecodeCandidate(payload);
    if (request.ok()) return EncodeRecord(AnswerCandidate(*request));
    kind = request.status();
  } else if (kind.ok() && *kind == WorkerMessage::kConversion) {
    StatusOr<ConversionRequest> request = DecodeConversion(payload);
    if (request.ok()) return EncodeRecord(AnswerConversion(*request));
    kind = request.status();
  } else if (kind.ok()) {
    kind = Status(StatusCode::kInvalidArgument, "not a request");
  }
  return EncodeRecord(
      Invalid("the measurement worker cannot read the request: " + kind.status().message()));
}

}  // namespace collage
