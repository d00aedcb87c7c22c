// The relay's full record and the Ray dispatcher's envelope: every message survives its
// encoding, with the nested worker payloads untouched, and damaged bytes are refused with a
// reason instead of misread (the dispatcher is another program, in another language).
#include "cost/dispatch_protocol.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cost/worker_protocol.h"
#include "quick_settings.h"

namespace collage {
namespace {

CostRecord TimedOut() {
  CostRecord record;
  record.reason = "timed out after 3 s (the measurement worker was killed)";
  record.timed_out_after_s = 3;
  record.output_layouts = {Layout::ChannelsLast()};
  return record;
}

TEST(DispatchProtocolTest, AFullRecordKeepsWhatAnROmits) {
  CostRecord killed;
  killed.reason = "the measurement worker died of SIGKILL while measuring this candidate";
  killed.killed_from_outside = true;
  for (const CostRecord& record : {TimedOut(), killed, CostRecord()}) {
    auto back = DecodeFullRecord(EncodeFullRecord(record));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->reason, record.reason);
    EXPECT_EQ(back->timed_out_after_s, record.timed_out_after_s);
    EXPECT_EQ(back->killed_from_outside, record.killed_from_outside);
    EXPECT_EQ(back->output_layouts, record.output_layouts);
    // An 'R' is not an 'F', nor the other way round.
    EXPECT_FALSE(DecodeRecord(EncodeFullRecord(record)).ok());
    EXPECT_FALSE(DecodeFullRecord(EncodeRecord(record)).ok());
  }
}

TEST(DispatchProtocolTest, AFullRecordDamagedIsRefused) {
  const std::string full = EncodeFullRecord(TimedOut());
  for (size_t cut = 0; cut < full.size(); ++cut)
    EXPECT_FALSE(DecodeFullRecord(full.substr(0, cut)).ok()) << "cut at " << cut;
  EXPECT_FALSE(DecodeFullRecord(full + "x").ok()) << "bytes left over";
  std::string flag = full;
  flag.back() = 2;  // killed_from_outside is 0 or 1
  EXPECT_FALSE(DecodeFullRecord(flag).ok());
  std::string negative = full;
  const double minus_one = -1;
  std::memcpy(negative.data() + negative.size() - 9, &minus_one, 8);  // little-endian hosts
  EXPECT_FALSE(DecodeFullRecord(negative).ok()) << "a negative time-out";
}

TEST(DispatchProtocolTest, EnvelopesSurviveTheirEncoding) {
  ConversionRequest conversion{"float32[1x8x4x4]", "plain", "channels_last", 2,
                               testing::QuickMeasureSettings()};
  const std::string request = EncodeConversion(conversion);
  auto job = DecodeJob(EncodeJob(0xfedcba98u, request));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->job, 0xfedcba98u);
  EXPECT_EQ(job->request, request) << "passed through untouched";

  auto done = DecodeJobDone(EncodeJobDone(7, EncodeFullRecord(TimedOut())));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->job, 7u);
  EXPECT_EQ(done->record.timed_out_after_s, 3);

  auto lost = DecodeJobLost(EncodeJobLost(9, "NodeDiedError after 4 retries"));
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(lost->job, 9u);
  EXPECT_EQ(lost->why, "NodeDiedError after 4 retries");

  auto nodes = DecodeNodes(EncodeNodes(3));
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(*nodes, 3u);
  auto fatal = DecodeFatal(EncodeFatal("no alive node offers collage-device-0123"));
  ASSERT_TRUE(fatal.ok());
  EXPECT_EQ(*fatal, "no alive node offers collage-device-0123");
  for (const std::string& payload :
       {EncodeJob(1, request), EncodeJobDone(1, EncodeFullRecord(CostRecord())),
        EncodeJobLost(1, "x"), EncodeNodes(1), EncodeFatal("x")}) {
    EXPECT_TRUE(PayloadKind(payload).ok()) << payload[0];
  }
}

TEST(DispatchProtocolTest, DamagedEnvelopesAreRefused) {
  const std::string request = EncodeConversion(ConversionRequest());
  // A job must carry a request, a reply a full record: nothing else is passed on.
  EXPECT_FALSE(DecodeJob(EncodeJob(1, "")).ok());
  EXPECT_FALSE(DecodeJob(EncodeJob(1, EncodeFullRecord(CostRecord()))).ok());
  EXPECT_FALSE(DecodeJobDone(EncodeJobDone(1, EncodeRecord(CostRecord()))).ok());
  EXPECT_FALSE(DecodeJobDone(EncodeJobDone(1, "")).ok());
  for (const std::string& payload : {EncodeJobLost(1, "why"), EncodeNodes(2), EncodeFatal("why")}) {
    for (size_t cut = 0; cut < payload.size(); ++cut) {
      const std::string part = payload.substr(0, cut);
      EXPECT_FALSE(DecodeJobLost(part).ok() || DecodeNodes(part).ok() || DecodeFatal(part).ok())
          << payload[0] << " cut at " << cut;
    }
    EXPECT_FALSE(DecodeJobLost(payload + "x").ok() || DecodeNodes(payload + "x").ok() ||
                 DecodeFatal(payload + "x").ok())
        << payload[0] << ": bytes left over";
  }
  EXPECT_FALSE(DecodeJob(EncodeJob(1, request).substr(0, 3)).ok()) << "no whole job id";
  EXPECT_FALSE(DecodeNodes(EncodeFatal("x")).ok()) << "another kind";
  EXPECT_FALSE(DecodeFatal(EncodeNodes(1)).ok()) << "another kind";
}

}  // namespace
}  // namespace collage
