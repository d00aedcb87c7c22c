// The measurement worker's protocol: every message survives its encoding, damaged bytes are
// refused with a reason instead of misread, and the worker's side of a request measures the
// group that arrived, or says that it arrived changed.
#include "cost/worker_protocol.h"

#include <gtest/gtest.h>

#include "collage/available_backends.h"
#include "collage/sdk/group_model.h"
#include "cost/group_signature.h"
#include "cost/worker_service.h"
#include "ops/graph_builder.h"
#include "quick_settings.h"

namespace collage {
namespace {

Graph ConvRelu() {
  GraphBuilder b("conv_relu");
  ValueId x = b.Input("x", DType::kFloat32, {1, 8, 6, 6});
  ValueId w = b.RandomNormal("w", {8, 8, 3, 3}, 0.1f);
  ValueId c = b.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "conv");
  b.Output(b.Node("Relu", {c}, {}, "relu"), "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

TEST(WorkerProtocolTest, MessagesSurviveTheirEncoding) {
  WorkerHello hello;
  hello.backends = {{"native", "collage 1"}, {"onednn", "oneDNN 2.6.3 avx2"}};
  auto hello_back = DecodeHello(EncodeHello(hello));
  ASSERT_TRUE(hello_back.ok()) << hello_back.status().ToString();
  EXPECT_EQ(hello_back->version, kWorkerProtocolVersion);
  EXPECT_EQ(hello_back->backends, hello.backends);

  CandidateRequest candidate;
  candidate.model = std::string("\0\x01model\xff", 8);  // bytes, not text
  candidate.signature = "Conv|...";
  candidate.backend = "onednn";
  candidate.rule = "conv";
  candidate.precision = Precision::kBfloat16;
  candidate.threads = 4;
  candidate.tolerance = 1e-3;
  candidate.settings = testing::QuickMeasureSettings();
  candidate.settings.target_spread = 0.125;
  candidate.settings.scrub_bytes = size_t{48} << 20;
  auto candidate_back = DecodeCandidate(EncodeCandidate(candidate));
  ASSERT_TRUE(candidate_back.ok()) << candidate_back.status().ToString();
  EXPECT_EQ(candidate_back->model, candidate.model);
  EXPECT_EQ(candidate_back->signature, candidate.signature);
  EXPECT_EQ(candidate_back->backend, "onednn");
  EXPECT_EQ(candidate_back->rule, "conv");
  EXPECT_EQ(candidate_back->precision, Precision::kBfloat16);
  EXPECT_EQ(candidate_back->threads, 4);
  EXPECT_EQ(candidate_back->tolerance, 1e-3);
  EXPECT_EQ(candidate_back->settings.max_runs, 3);
  EXPECT_EQ(candidate_back->settings.max_seconds, 0.02);
  EXPECT_EQ(candidate_back->settings.target_spread, 0.125);
  EXPECT_EQ(candidate_back->settings.scrub_bytes, size_t{48} << 20);

  ConversionRequest conversion{"float32[1x8x4x4]", "plain", "channels_last", 2,
                               testing::QuickMeasureSettings()};
  auto conversion_back = DecodeConversion(EncodeConversion(conversion));
  ASSERT_TRUE(conversion_back.ok());
  EXPECT_EQ(conversion_back->type, conversion.type);
  EXPECT_EQ(conversion_back->to, "channels_last");
  EXPECT_EQ(conversion_back->threads, 2);

  CostRecord record;
  record.valid = true;
  record.median_ms = 0.123456789;
  record.p90_ms = 0.2;
  record.samples = 17;
  record.input_layouts = {Layout::Plain(), Layout::ChannelsLast()};
  record.output_layouts = {Layout::ChannelsLast()};
  auto record_back = DecodeRecord(EncodeRecord(record));
  ASSERT_TRUE(record_back.ok()) << record_back.status().ToString();
  EXPECT_TRUE(record_back->valid);
  EXPECT_EQ(record_back->median_ms, record.median_ms);  // bit for bit
  EXPECT_EQ(record_back->samples, 17);
  EXPECT_EQ(record_back->input_layouts, record.input_layouts);
  EXPECT_EQ(record_back->output_layouts, record.output_layouts);
}

TEST(WorkerProtocolTest, DamagedBytesAreRefused) {
  const std::string record = EncodeRecord(CostRecord());
  // Little-endian, explicit sizes: the same bytes on every machine.
  EXPECT_EQ(FrameHeader(0x01020304), std::string("\x04\x03\x02\x01", 4));
  auto length = FrameLength(FrameHeader(record.size()));
  ASSERT_TRUE(length.ok());
  EXPECT_EQ(*length, record.size());
  EXPECT_FALSE(FrameLength(FrameHeader(0)).ok());
  EXPECT_FALSE(FrameLength(std::string("\xff\xff\xff\xff", 4)).ok());  // past the limit
  EXPECT_FALSE(FrameLength("abc").ok());

  for (size_t cut = 0; cut < record.size(); ++cut) {
    EXPECT_FALSE(DecodeRecord(record.substr(0, cut)).ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(DecodeRecord(record + "x").ok()) << "bytes left over";
  EXPECT_FALSE(DecodeHello(record).ok()) << "another kind";
  EXPECT_FALSE(PayloadKind("").ok());
  EXPECT_FALSE(PayloadKind("Z").ok());
  // A count larger than the bytes left is refused before anything is allocated.
  std::string huge_hello = EncodeHello(WorkerHello());
  huge_hello.replace(5, 4, std::string("\xff\xff\xff\x7f", 4));
  EXPECT_FALSE(DecodeHello(huge_hello).ok());
  // A precision this collage does not know.
  CandidateRequest candidate;
  std::string encoded = EncodeCandidate(candidate);
  const size_t precision_at = encoded.size() - 4 - 8 - 4 * 3 - 8 * 2 - 8 - 1;  // before i32 threads
  ASSERT_EQ(encoded[precision_at], static_cast<char>(Precision::kFloat32));
  encoded[precision_at] = 9;
  auto unknown = DecodeCandidate(encoded);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown precision 9"), std::string::npos)
      << unknown.status().ToString();
}

TEST(WorkerProtocolTest, TensorTypesReadBackFromText) {
  for (const TensorType& type : {TensorType{DType::kFloat32, {1, 8, 4, 4}},
                                 TensorType{DType::kInt64, {}}, TensorType{DType::kUInt8, {3}}}) {
    auto back = TensorTypeFromText(type.ToString());
    ASSERT_TRUE(back.ok()) << type.ToString() << ": " << back.status().ToString();
    EXPECT_EQ(*back, type);
  }
  EXPECT_FALSE(TensorTypeFromText("float33[1]").ok());
  EXPECT_FALSE(TensorTypeFromText("float32[1x").ok());
}

TEST(WorkerServiceTest, MeasuresTheGroupThatArrivedAndRefusesAChangedOne) {
  Graph graph = ConvRelu();
  // The Conv alone: its weights travel as an initializer.
  SubGraph nodes(graph.num_nodes(), {0});
  auto model = GroupModelBytes(graph, nodes);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  MeasureWorkerService service(GlobalBackendRegistry());
  CandidateRequest request;
  request.model = *model;
  request.signature = GroupSignature(graph, nodes);
  request.backend = "native";
  request.rule = "op";
  request.tolerance = ToleranceFor(graph, nodes);
  request.settings = testing::QuickMeasureSettings();
  CostRecord record = service.AnswerCandidate(request);
  EXPECT_TRUE(record.valid) << record.reason;
  EXPECT_EQ(record.input_layouts.size(), 1u);  // x; the weights are constants
  EXPECT_EQ(record.output_layouts.size(), 1u);

  // The parent's signature of another group (the Relu): the worker must not measure what it
  // was not asked to.
  request.signature = GroupSignature(graph, SubGraph(graph.num_nodes(), {1}));
  record = service.AnswerCandidate(request);
  EXPECT_FALSE(record.valid);
  EXPECT_NE(record.reason.find("arrived changed"), std::string::npos) << record.reason;

  // Through the encoded request and reply, as the worker answers; a damaged request is an
  // invalid record, not a dead worker.
  request.signature = GroupSignature(graph, nodes);
  auto reply = DecodeRecord(service.Answer(EncodeCandidate(request)));
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->valid) << reply->reason;
  reply = DecodeRecord(service.Answer("C garbage"));
  ASSERT_TRUE(reply.ok());
  EXPECT_FALSE(reply->valid);
  EXPECT_NE(reply->reason.find("cannot read the request"), std::string::npos) << reply->reason;
}

}  // namespace
}  // namespace collage
