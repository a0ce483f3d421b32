// int8 requantization fused into the accumulator drain.
//
// Quantized programs as XLA emits them compute s32 = dot/conv(s8, s8) (+ an s32 bias), then
//   f = convert<f32>(acc) · scale,  r = round(f),  clamp / max to the activation range,
//   (+ zero point), clamp to [-128, 127], convert<s8>
// ACTIVATE on an int8 configuration computes (docs/NUMERICS.md)
//   r = (acc · S + 2^(s-1)) >> s  (exact, half rounds up), clamp to [L, H], + Z, saturate.
// The two agree bit for bit when:
//  * scale = m · 2^-k exactly with k ≤ 16 (S = m, s = k). Then whenever |acc · scale| < 256
//    the f32 convert and product are exact (|acc · m| < 2^24), so only the integer rounding
//    rounds; when it is ≥ 256, both paths are monotone and saturate to the same bound.
//    A scale with more fraction bits rounds the f32 product first (double rounding): host.
//  * the rounding is "half up": floor(f + 0.5) always; round-nearest-afz only if a lower bound
//    ≥ 0 follows (it differs from half up on negative halves only, which the bound removes);
//    round-nearest-even and a truncating convert only when nothing needs rounding (k = 0).
//  * bounds and zero point are integral constants. A bound after the zero point is a bound on
//    r shifted by Z, so all bounds become one clamp [L, H] of r (nonempty: clamps compose as
//    their intersection only then).
// Anything else leaves the chain after the s32 result to the host, with the reason.
#include <fmt/core.h>

#include <cmath>
#include <limits>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxFractionBits = 16;

bool Integral(double v) { return std::isfinite(v) && v == std::floor(v); }

// The operand of binary `user` that is not `current`, as a uniform constant.
std::optional<double> OtherConstant(const Instruction& user, const Instruction* current) {
  for (const Instruction* operand : user.operands) {
    if (operand != current) return UniformConstant(*operand);
  }
  return std::nullopt;
}

}  // namespace

void PlanRequantization(Group& group, const Users& users, const Instruction* root) {
  const auto next = [&](const Instruction* value) -> const Instruction* {
    if (value == root) return nullptr;
    const auto it = users.find(value);
    if (it == users.end() || it->second.size() != 1) return nullptr;
    return it->second.front();
  };
  const Instruction* start = next(group.Result());
  if (start == nullptr || start->opcode != Opcode::kConvert || start->shape.type != ElementType::kF32) return;
  const auto reject = [&](const std::string& why) {
    group.unfused = start;
    group.unfused_reason = "requantization not fused: " + why;
  };

  enum class Rounding { kNone, kHalfUp, kAwayFromZero, kEven } rounding = Rounding::kNone;
  double scale = 1.0, zero_point = 0.0, lo = -kInf, hi = kInf;
  bool scaled = false, bounded = false, has_zero_point = false, half_added = false;
  std::vector<const Instruction*> chain{start};
  const Instruction* current = start;
  while (true) {
    const Instruction* user = next(current);
    if (user == nullptr) return reject(fmt::format("{} is not followed by a single-use chain ending in a convert to s8",
                                                   current->name));
    if (user->shape.dims != current->shape.dims) return reject(fmt::format("{} changes the shape", user->name));
    if (user->opcode == Opcode::kConvert) {
      if (user->shape.type != ElementType::kS8) {
        return reject(fmt::format("{} converts to {}, not s8", user->name, hlo::ElementTypeName(user->shape.type)));
      }
      chain.push_back(user);
      break;
    }
    if (user->shape.type != ElementType::kF32) return reject(fmt::format("{} is not f32", user->name));
    const bool after_rounding = rounding != Rounding::kNone;
    switch (user->opcode) {
      case Opcode::kMultiply: {
        const std::optional<double> s = OtherConstant(*user, current);
        if (!s) return reject(fmt::format("{}: a per-channel or non-constant scale (ACTIVATE has one multiplier)", user->name));
        if (scaled || bounded || after_rounding || half_added) return reject(fmt::format("{}: a second or late multiply", user->name));
        scale = *s;
        scaled = true;
        break;
      }
      case Opcode::kAdd: {
        const std::optional<double> c = OtherConstant(*user, current);
        if (c == 0.5 && !after_rounding && !half_added) {
          half_added = true;  // floor(f + 0.5) must follow
        } else if (c && after_rounding && !has_zero_point && Integral(*c) && *c >= -128 && *c <= 127) {
          zero_point = *c;
          has_zero_point = true;
        } else {
          return reject(fmt::format("{}: only + 0.5 before floor and one integral zero point in [-128, 127] after "
                                    "the rounding fuse",
                                    user->name));
        }
        break;
      }
      case Opcode::kFloor:
        if (!half_added || after_rounding) return reject(fmt::format("{}: floor without a preceding + 0.5 rounds down", user->name));
        rounding = Rounding::kHalfUp;
        half_added = false;
        break;
      case Opcode::kRoundNearestAfz:
      case Opcode::kRoundNearestEven:
        if (after_rounding || half_added) return reject(fmt::format("{}: a second rounding", user->name));
        rounding = user->opcode == Opcode::kRoundNearestAfz ? Rounding::kAwayFromZero : Rounding::kEven;
        break;
      case Opcode::kMaximum:
      case Opcode::kMinimum:
      case Opcode::kClamp: {
        double a = -kInf, b = kInf;
        if (user->opcode == Opcode::kClamp) {
          const auto l = UniformConstant(*user->operands.at(0)), h = UniformConstant(*user->operands.at(2));
          if (user->operands.at(1) != current || !l || !h) return reject(fmt::format("{}: non-constant clamp bounds", user->name));
          a = *l;
          b = *h;
        } else {
          const std::optional<double> c = OtherConstant(*user, current);
          if (!c) return reject(fmt::format("{}: a non-constant bound", user->name));
          (user->opcode == Opcode::kMaximum ? a : b) = *c;
        }
        if ((std::isfinite(a) && !Integral(a)) || (std::isfinite(b) && !Integral(b))) {
          return reject(fmt::format("{}: a non-integral bound", user->name));
        }
        if (half_added) return reject(fmt::format("{}: a bound between + 0.5 and floor", user->name));
        lo = std::max(lo, a - zero_point);  // a bound after the zero point bounds r + Z
        hi = std::min(hi, b - zero_point);
        bounded = true;
        break;
      }
      default:
        return reject(fmt::format("{}: {} has no place in ACTIVATE's requantization", user->name,
                                  hlo::OpcodeName(user->opcode)));
    }
    chain.push_back(user);
    current = user;
  }

  // scale = m · 2^-k with m odd (or k = 0).
  if (!(scale > 0) || !std::isfinite(scale)) return reject(fmt::format("scale {} is not positive", scale));
  int exponent = 0;
  double m = std::ldexp(std::frexp(scale, &exponent), 53);
  int k = 53 - exponent;
  while (k > 0 && std::fmod(m, 2.0) == 0.0) {
    m /= 2;
    --k;
  }
  if (k > kMaxFractionBits) {
    return reject(fmt::format("scale {:.9g} = {} * 2^-{} has more than {} fraction bits: its f32 product rounds before "
                              "the integer rounding, ACTIVATE rounds once",
                              scale, m, k, kMaxFractionBits));
  }
  const double multiplier = std::ldexp(m, std::min(k, 0) * -1);
  if (multiplier > std::numeric_limits<std::int32_t>::max()) return reject(fmt::format("scale {} exceeds an int32 multiplier", scale));
  if (k > 0 && rounding == Rounding::kNone) return reject("the convert to s8 truncates toward zero; ACTIVATE rounds half up");
  if (k > 0 && rounding == Rounding::kEven) {
    return reject("round-nearest-even rounds halves to even; ACTIVATE rounds them up (docs/NUMERICS.md)");
  }
  if (k > 0 && rounding == Rounding::kAwayFromZero && !(lo >= 0)) {
    return reject("round-nearest-afz rounds negative halves down, ACTIVATE up; fused only under a lower bound >= 0 (ReLU)");
  }
  if (lo > hi) return reject("the clamps leave an empty range");

  group.chain.insert(group.chain.end(), chain.begin(), chain.end());
  group.requantize = true;
  group.multiplier = static_cast<std::int32_t>(multiplier);
  group.shift = static_cast<std::uint8_t>(std::max(k, 0));
  group.zero_point = static_cast<std::int8_t>(zero_point);
  const auto to_int16 = [](double v) {
    return static_cast<std::int16_t>(std::clamp(v, double(std::numeric_limits<std::int16_t>::min()),
                                                double(std::numeric_limits<std::int16_t>::max())));
  };
  group.int_lo = to_int16(lo);
  group.int_hi = to_int16(hi);
  if (lo == -kInf && hi == kInf) {
    group.func = isa::ActFunc::kNone;
  } else if (lo == 0 && hi == kInf) {
    group.func = isa::ActFunc::kRelu;
  } else {
    group.func = isa::ActFunc::kClamp;
  }
}

}  // namespace systole::compiler::detail
