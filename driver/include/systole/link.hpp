// A link: the small interface every Systole backend speaks — register read/write, device
// memory block read/write, and waiting for the interrupt. The driver is written once on top of
// it, so adding a board means adding a link. docs/REGISTERS.md says what the registers mean.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace systole {

// A link could not be opened or an access failed. The message names the device and the cause.
class LinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Link {
 public:
  virtual ~Link() = default;
  Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // The URI the link was opened with, for messages: "ref", "tcp://host:port", …
  virtual std::string_view Uri() const = 0;
  virtual std::uint32_t ReadRegister(std::uint32_t offset) = 0;
  virtual void WriteRegister(std::uint32_t offset, std::uint32_t value) = 0;
  virtual void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;
  virtual void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  // Waits until the device raises its interrupt line or has nothing left to run, at most
  // `timeout`. Returns false on timeout.
  virtual bool WaitForInterrupt(std::chrono::milliseconds timeout) = 0;
};

// Opens a link by URI. `config` selects the configuration for devices that are built on
// demand (the in-process models); hardware reports its own. Supported so far: "ref".
std::unique_ptr<Link> OpenLink(std::string_view uri, const Config& config);

}  // namespace systole
