// SgdMomentumUpdate and AdamUpdate (ACCVEC on the accumulators) against the same update in C++ float
// arithmetic (IEEE binary32, round to nearest even, as the host interpreter computes the HLO's
// f32 ops), bit for bit on the golden model: m' = m·mu + g, p' = p − m'·lr, and p' rounded to
// bf16 for the weights. Sizes inside one chunk of rows, of exactly two, and past them (both
// slot sets and a short last chunk), for the default chunk, a small one and the largest;
// bf16 configurations; a bias's replicated rows follow its update.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "tests/codegen/codegen_test_util.hpp"

namespace systole::codegen::testing {
namespace {

class SgdUpdateTest : public ::testing::TestWithParam<std::string> {};

// One update of `rows` rows, `requested` rows per chunk (0: the default), against float.
void ExpectHostUpdate(const Config& config, std::mt19937_64& rng, std::uint64_t rows, std::uint64_t requested) {
  const std::uint64_t c = config.cols;
  const float mu = 0.9f, lr = 0.05f;
  ProgramBuilder builder(config);
  const Tensor p = builder.AddInput("p", DataType::kFp32, {rows, c});
  const Tensor m = builder.AddInput("m", DataType::kFp32, {rows, c});
  const Tensor g = builder.AddInput("g", DataType::kFp32, {rows, c});
  const Tensor w = builder.AddOutput("w", DataType::kBf16, {rows, c});
  SgdMomentumUpdate(builder, p, m, g, {w}, mu, lr, requested);
  const image::Program program = builder.Finish();
  const std::vector<std::uint32_t> pb = RandomBits(rng, DataType::kFp32, rows * c, 1.0);
  const std::vector<std::uint32_t> mb = RandomBits(rng, DataType::kFp32, rows * c, 0.1);
  const std::vector<std::uint32_t> gb = RandomBits(rng, DataType::kFp32, rows * c, 0.01);
  auto device = RunOnModel(config, program, {{p, pb}, {m, mb}, {g, gb}});
  std::vector<std::uint32_t> want_p, want_m, want_w;
  for (std::size_t i = 0; i < pb.size(); ++i) {
    const float m2 = std::bit_cast<float>(mb[i]) * mu + std::bit_cast<float>(gb[i]);
    const float p2 = std::bit_cast<float>(pb[i]) - m2 * lr;
    want_m.push_back(std::bit_cast<std::uint32_t>(m2));
    want_p.push_back(std::bit_cast<std::uint32_t>(p2));
    want_w.push_back(numerics::F32ToBf16(std::bit_cast<std::uint32_t>(p2)));
  }
  ExpectSameBits(want_p, ReadTensor(*device, p), "p'");
  ExpectSameBits(want_m, ReadTensor(*device, m), "m'");
  ExpectSameBits(want_w, ReadTensor(*device, w), "weights");
}

TEST_P(SgdUpdateTest, IsTheHostsFloat32UpdateBitForBit) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  for (const std::uint64_t requested : {std::uint64_t{0}, std::uint64_t{16}, config.AccRows() / 8}) {
    const std::uint64_t chunk = std::min<std::uint64_t>(requested == 0 ? 32 : requested, config.AccRows() / 8);
    for (const std::uint64_t rows : {std::uint64_t{3}, 2 * chunk, 2 * chunk + 5, 5 * chunk + 1}) {
      SCOPED_TRACE(::testing::Message() << config.name << " rows " << rows << " chunk " << chunk);
      ExpectHostUpdate(config, rng, rows, requested);
    }
  }
}

// One Adam update of `rows` rows against float, as optax's HLO computes it.
void ExpectHostAdam(const Config& config, std::mt19937_64& rng, std::uint64_t rows, std::uint64_t requested) {
  const std::uint64_t c = config.cols;
  const AdamParams params;
  const float s = 0.0063245553f;  // a step size: lr·sqrt(1 − b2^t)/(1 − b1^t) at t = 1, lr 0.002
  ProgramBuilder builder(config);
  const Tensor p = builder.AddInput("p", DataType::kFp32, {rows, c});
  const Tensor m = builder.AddInput("m", DataType::kFp32, {rows, c});
  const Tensor v = builder.AddInput("v", DataType::kFp32, {rows, c});
  const Tensor g = builder.AddInput("g", DataType::kFp32, {rows, c});
  const Tensor step = builder.AddInput("s", DataType::kFp32, {1});
  const Tensor w = builder.AddOutput("w", DataType::kBf16, {rows, c});
  AdamUpdate(builder, p, m, v, g, step, {w}, params, requested);
  const image::Program program = builder.Finish();
  const std::vector<std::uint32_t> pb = RandomBits(rng, DataType::kFp32, rows * c, 1.0);
  const std::vector<std::uint32_t> mb = RandomBits(rng, DataType::kFp32, rows * c, 0.01);
  std::vector<std::uint32_t> vb = RandomBits(rng, DataType::kFp32, rows * c, 1e-4);
  for (std::uint32_t& bits : vb) bits &= 0x7FFFFFFFu;  // a second moment is not negative
  const std::vector<std::uint32_t> gb = RandomBits(rng, DataType::kFp32, rows * c, 0.01);
  auto device = RunOnModel(config, program, {{p, pb}, {m, mb}, {v, vb}, {g, gb}, {step, {std::bit_cast<std::uint32_t>(s)}}});
  std::vector<std::uint32_t> want_p, want_m, want_v, want_w;
  for (std::size_t i = 0; i < pb.size(); ++i) {
    const float gi = std::bit_cast<float>(gb[i]);
    const float m2 = std::bit_cast<float>(mb[i]) * params.b1 + gi * params.one_minus_b1;
    const float v2 = std::bit_cast<float>(vb[i]) * params.b2 + (gi * params.one_minus_b2) * gi;
    const float p2 = std::bit_cast<float>(pb[i]) - (s * m2) / (std::sqrt(v2) + params.epsilon);
    want_m.push_back(std::bit_cast<std::uint32_t>(m2));
    want_v.push_back(std::bit_cast<std::uint32_t>(v2));
    want_p.push_back(std::bit_cast<std::uint32_t>(p2));
    want_w.push_back(numerics::F32ToBf16(std::bit_cast<std::uint32_t>(p2)));
  }
  ExpectSameBits(want_p, ReadTensor(*device, p), "p'");
  ExpectSameBits(want_m, ReadTensor(*device, m), "m'");
  ExpectSameBits(want_v, ReadTensor(*device, v), "v'");
  ExpectSameBits(want_w, ReadTensor(*device, w), "weights");
}

TEST_P(SgdUpdateTest, AdamIsTheHostsFloat32UpdateBitForBit) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  for (const std::uint64_t requested : {std::uint64_t{0}, std::uint64_t{16}}) {
    const std::uint64_t chunk = requested == 0 ? 32 : requested;
    for (const std::uint64_t rows : {std::uint64_t{3}, 2 * chunk, 2 * chunk + 5, 5 * chunk + 1}) {
      SCOPED_TRACE(::testing::Message() << config.name << " rows " << rows << " chunk " << chunk);
      ExpectHostAdam(config, rng, rows, requested);
    }
  }
}

TEST(SgdUpdate, RefusesAnInt8ConfigurationAndMismatchedTensors) {
  ProgramBuilder int8(LoadConfig("small-int8"));
  const Tensor t{0, {4, 16}, DataType::kFp32};
  EXPECT_THROW(SgdMomentumUpdate(int8, t, t, t, {Tensor{0, {4, 16}, DataType::kInt8}}, 0.9f, 0.1f), std::invalid_argument);
  ProgramBuilder bf16(LoadConfig("small"));
  EXPECT_THROW(SgdMomentumUpdate(bf16, t, Tensor{0, {5, 16}, DataType::kFp32}, t, {Tensor{0, {4, 16}, DataType::kBf16}},
                                 0.9f, 0.1f),
               std::invalid_argument);
  EXPECT_THROW(SgdMomentumUpdate(bf16, Tensor{0, {4, 8}, DataType::kFp32}, Tensor{0, {4, 8}, DataType::kFp32},
                                 Tensor{0, {4, 8}, DataType::kFp32}, {Tensor{0, {4, 8}, DataType::kBf16}}, 0.9f, 0.1f),
               std::invalid_argument);
  // A replica must hold each parameter row: [rows, replicas, C] in fp32.
  EXPECT_THROW(SgdMomentumUpdate(bf16, t, t, t, {std::nullopt, {Tensor{0, {3, 8, 16}, DataType::kFp32}}}, 0.9f, 0.1f),
               std::invalid_argument);
  EXPECT_THROW(SgdMomentumUpdate(bf16, t, t, t, {std::nullopt, {Tensor{0, {4, 8, 16}, DataType::kBf16}}}, 0.9f, 0.1f),
               std::invalid_argument);
}

// A bias kept as its drains read it: each parameter row replicated (`replicas` rows per
// parameter row), updated with the parameters and equal to them bit for bit afterwards, for
// SGD and Adam, replicas from one row to all the accumulators' rows (several pieces).
void ExpectReplicasFollow(const Config& config, std::mt19937_64& rng, bool adam, std::uint64_t rows,
                          std::uint64_t replicas) {
  const std::uint64_t c = config.cols;
  ProgramBuilder builder(config);
  const Tensor p = builder.AddInput("p", DataType::kFp32, {rows, c});
  const Tensor m = builder.AddInput("m", DataType::kFp32, {rows, c});
  const Tensor v = builder.AddInput("v", DataType::kFp32, {rows, c});
  const Tensor g = builder.AddInput("g", DataType::kFp32, {rows, c});
  const Tensor step = builder.AddInput("s", DataType::kFp32, {1});
  const Tensor r = builder.AddInput("r", DataType::kFp32, {rows, replicas, c});
  if (adam) {
    AdamUpdate(builder, p, m, v, g, step, {std::nullopt, {r}}, AdamParams{});
  } else {
    SgdMomentumUpdate(builder, p, m, g, {std::nullopt, {r}}, 0.9f, 0.05f);
  }
  const image::Program program = builder.Finish();
  const std::vector<std::uint32_t> pb = RandomBits(rng, DataType::kFp32, rows * c, 1.0);
  std::vector<std::uint32_t> vb = RandomBits(rng, DataType::kFp32, rows * c, 1e-4);
  for (std::uint32_t& bits : vb) bits &= 0x7FFFFFFFu;
  // Each row of `values` `replicas` times.
  const auto replicate = [&](const std::vector<std::uint32_t>& values) {
    std::vector<std::uint32_t> out;
    for (std::uint64_t row = 0; row < rows; ++row) {
      for (std::uint64_t k = 0; k < replicas; ++k) {
        for (std::uint64_t j = 0; j < c; ++j) out.push_back(values[row * c + j]);
      }
    }
    return out;
  };
  const std::vector<std::uint32_t> rb = replicate(pb);
  auto device = RunOnModel(config, program,
                           {{p, pb},
                            {m, RandomBits(rng, DataType::kFp32, rows * c, 0.01)},
                            {v, vb},
                            {g, RandomBits(rng, DataType::kFp32, rows * c, 0.01)},
                            {step, {std::bit_cast<std::uint32_t>(0.002f)}},
                            {r, rb}});
  const std::vector<std::uint32_t> new_p = ReadTensor(*device, p);
  EXPECT_NE(new_p, pb) << "the update changed nothing";
  ExpectSameBits(replicate(new_p), ReadTensor(*device, r), "replicas");
}

TEST_P(SgdUpdateTest, ReplicasOfABiasFollowItsUpdateBitForBit) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  for (const bool adam : {false, true}) {
    for (const std::uint64_t rows : {std::uint64_t{1}, std::uint64_t{4}}) {
      for (const std::uint64_t replicas : {std::uint64_t{1}, std::uint64_t{32}, config.AccRows()}) {
        SCOPED_TRACE(::testing::Message() << (adam ? "adam" : "sgd") << " rows " << rows << " replicas " << replicas);
        ExpectReplicasFollow(config, rng, adam, rows, replicas);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bf16, SgdUpdateTest, ::testing::Values("small"));

}  // namespace
}  // namespace systole::codegen::testing
