// The process's Embree device: created once, with an error callback that keeps the message
// of each thread's last error until throw_on_embree_error() reports it.
#include "accel/embree_device.h"

#include <kiln/errors.h>

#include <string>

namespace kiln::render {
namespace {
/// Embree's message for the calling thread's last error (the callback runs on that thread).
thread_local std::string last_error_message;

void remember_error(void*, RTCError, const char* message) { last_error_message = message ? message : ""; }

const char* error_name(RTCError code) {
  switch (code) {
    case RTC_ERROR_NONE: return "no error";
    case RTC_ERROR_UNKNOWN: return "unknown error";
    case RTC_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case RTC_ERROR_INVALID_OPERATION: return "invalid operation";
    case RTC_ERROR_OUT_OF_MEMORY: return "out of memory";
    case RTC_ERROR_UNSUPPORTED_CPU: return "unsupported CPU";
    case RTC_ERROR_CANCELLED: return "cancelled";
  }
  return "unrecognized error";
}

/// Owns the device for the life of the process.
struct Device {
  RTCDevice handle;
  Device() : handle(rtcNewDevice(nullptr)) {
    if (!handle) {
      throw InternalError(std::string("kiln.render: Embree could not create its device: ") +
                          error_name(rtcGetDeviceError(nullptr)));
    }
    rtcSetDeviceErrorFunction(handle, remember_error, nullptr);
  }
  ~Device() { rtcReleaseDevice(handle); }
};
}  // namespace

RTCDevice embree_device() {
  static Device device;  // a throwing constructor leaves it to be tried again
  return device.handle;
}

void throw_on_embree_error(const char* operation) {
  RTCError code = rtcGetDeviceError(embree_device());
  if (code == RTC_ERROR_NONE) return;
  std::string message = std::string("kiln.render: Embree could not ") + operation + ": " + error_name(code);
  if (!last_error_message.empty()) message += " (" + last_error_message + ")";
  last_error_message.clear();
  throw InternalError(message);
}

}  // namespace kiln::render
